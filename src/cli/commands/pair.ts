/** `consort pair [--git-branch B]` and `consort pair status`: the database branch that follows the git branch. */
import path from 'node:path';
import { Command } from 'commander';
import { ConsortError } from '../../core/errors.js';
import { maskUrl } from '../../core/redact.js';
import type { CliContext, Ctx } from '../context.js';
import { printJson } from '../output.js';
import { usageError } from '../usage.js';

/**
 * What the commands use beyond commander, loaded when one of them runs so that CLI start-up stays
 * cheap (imported one at a time: jest's ESM loader trips over concurrent import()s).
 */
async function loadLib() {
  const { loadConfig } = await import('../../config/load.js');
  const { readEnvValue } = await import('../../pairing/env-file.js');
  const { currentGitBranch } = await import('../../pairing/git.js');
  const { hooksStatus } = await import('../../pairing/hooks.js');
  const { envWarning } = await import('../../pairing/publish.js');
  const { describePairing, pairAndPublish, withPairingProvider } = await import('../../pairing/run.js');
  const { pairedSchemaDiff } = await import('../../pairing/diff.js');
  const { findPaired } = await import('../../pairing/service.js');
  const { renderSchemaDiffText } = await import('../../schema/render.js');
  return {
    loadConfig,
    readEnvValue,
    currentGitBranch,
    hooksStatus,
    envWarning,
    describePairing,
    pairAndPublish,
    withPairingProvider,
    pairedSchemaDiff,
    findPaired,
    renderSchemaDiffText,
  };
}
let L: Awaited<ReturnType<typeof loadLib>>;

interface PairFlags {
  gitBranch?: string;
  from?: string;
  migrate: boolean;
  env: boolean;
  export?: boolean;
  showSecrets?: boolean;
  config?: string;
  json?: boolean;
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

async function gitBranchOf(c: CliContext, given: string | undefined): Promise<string> {
  const branch = given ?? (await L.currentGitBranch(c.root));
  if (branch === undefined) {
    throw new ConsortError(
      'invalid-input',
      'HEAD is detached (or this is not a git repository): there is no git branch to pair.',
      {
        hint: 'Check out a branch, or pass --git-branch <name>.',
      },
    );
  }
  return branch;
}

/** `pair` itself takes --git-branch/--config too, so commander hands them to it: read them from either. */
function subOptions(o: { gitBranch?: string; config?: string }, cmd: Command): { gitBranch?: string; config?: string } {
  const all = cmd.optsWithGlobals() as { gitBranch?: string; config?: string };
  const gitBranch = o.gitBranch ?? all.gitBranch;
  const config = o.config ?? all.config;
  return { ...(gitBranch ? { gitBranch } : {}), ...(config ? { config } : {}) };
}

function providerChoice(c: CliContext, cmd: Command) {
  const g = cmd.optsWithGlobals() as { provider?: string };
  return {
    ...(g.provider ? { provider: g.provider } : {}),
    ...(c.namespace ? { namespace: c.namespace } : {}),
    log: (m: string) => c.io.err(m),
  };
}

export function pairCommand(ctx: Ctx): Command {
  const pair = new Command('pair')
    .description(
      'pair the git branch with a database branch: create it on first use (from the branch it was created from, or main), apply pending migrations, write the URL to .env',
    )
    .option(
      '--git-branch <name>',
      'the git branch to pair (default: the checked-out branch; .env is written only for the checked-out one)',
    )
    .option(
      '--from <git-branch>',
      'on first use, fork from the database branch paired with this git branch (default: database.parent)',
    )
    .option('--no-migrate', "do not apply the working tree's pending migrations")
    .option('--no-env', 'do not write the dotenv file (pairing.envFile)')
    .option('--export', 'print `export KEY=URL` for eval "$(consort pair --export)" (the URL includes its password)')
    .option('--show-secrets', 'print the URL with its password (--json and text output)')
    .option(
      '--config <path>',
      'configuration file (default: .github/consort.yml, .github/consort.yaml or consort.config.json)',
    )
    .option('--json', 'machine-readable output on stdout')
    .action(async (o: PairFlags, cmd: Command) => {
      const c = await ctx(cmd);
      if (o.export && (c.json || o.json))
        throw usageError(
          '--export and --json both print on stdout: use one of them.',
          'For the URL as JSON: `consort pair --json --show-secrets` (its "url").',
        );
      L ??= await loadLib();
      const { config } = await L.loadConfig(c.root, o.config ? { path: o.config } : {});
      const gitBranch = await gitBranchOf(c, o.gitBranch);
      const done = await L.pairAndPublish({
        root: c.root,
        config,
        env: c.env,
        gitBranch,
        migrate: o.migrate,
        writeEnv: o.env,
        // .env is the checked-out branch's: pairing another git branch (--git-branch) leaves it
        // alone, or the app in this working tree would use that branch's database.
        onlyIfHead: true,
        choice: providerChoice(c, cmd),
        ...(o.from ? { from: o.from } : {}),
      });
      const { result, env } = done;
      if (result.migrations.failed) c.setExitCode(1);
      if (env.warning) c.io.err(`warning: ${env.warning}`);
      // --from names a git branch; one with no database branch of its own is no parent: the root is.
      if (
        o.from &&
        result.outcome === 'created' &&
        result.branch.parent === config.database.parent &&
        !config.pairing.rootGitBranches.includes(o.from)
      )
        c.io.err(
          `note: git branch ${o.from} (--from) has no paired database branch, so ${result.branch.name} was forked from ${config.database.parent}; pair ${o.from} first (\`consort pair --git-branch ${o.from}\`) to fork from its data.`,
        );
      if (env.status === 'skipped' && o.env !== false && config.pairing.writeEnv)
        c.io.err(
          `note: ${env.file} not written: ${gitBranch} is not the checked-out git branch (${env.file} keeps the checked-out branch's URL; --export or --json --show-secrets give this one).`,
        );
      const url = o.showSecrets || o.export ? result.url : maskUrl(result.url);
      if (o.export) {
        c.io.err(L.describePairing(done));
        return c.io.out(`export ${config.pairing.envKey}=${shellQuote(url)}`);
      }
      if (c.json || o.json) {
        const b = result.branch;
        return printJson(c.io, {
          gitBranch,
          branch: b.name,
          parent: b.parent,
          outcome: result.outcome,
          mode: result.mode,
          database: b.database,
          url,
          createdAt: b.createdAt.toISOString(),
          expiresAt: b.expiresAt?.toISOString() ?? null,
          migrations: result.migrations,
          seeded: result.seeded,
          env,
          durationMs: result.durationMs,
        });
      }
      c.io.out(`${L.describePairing(done)}\n${url}`);
    });

  pair
    .command('status')
    .description('the checked-out git branch, its paired database branch, the dotenv file and the hooks')
    .option('--git-branch <name>', 'show another git branch')
    .option('--config <path>', 'configuration file')
    .action(async (given: { gitBranch?: string; config?: string }, cmd: Command) => {
      const c = await ctx(cmd);
      L ??= await loadLib();
      const o = subOptions(given, cmd);
      const { config } = await L.loadConfig(c.root, o.config ? { path: o.config } : {});
      const gitBranch = await gitBranchOf(c, o.gitBranch);
      const envPath = path.join(c.root, config.pairing.envFile);
      const { paired, url } = await L.withPairingProvider(c.root, c.env, config, providerChoice(c, cmd), async (p) => {
        const found = await L.findPaired(p, config, gitBranch);
        return { paired: found, url: found ? await p.connectionUri(found.name) : undefined };
      });
      const current = await L.readEnvValue(envPath, config.pairing.envKey);
      const hooks = await L.hooksStatus(c.root, 5).catch(() => undefined);
      const status = {
        gitBranch,
        paired: paired
          ? {
              branch: paired.name,
              parent: paired.parent,
              database: paired.database,
              createdAt: paired.createdAt.toISOString(),
              expiresAt: paired.expiresAt?.toISOString() ?? null,
              url: url ? maskUrl(url) : null,
            }
          : null,
        env: {
          file: config.pairing.envFile,
          key: config.pairing.envKey,
          value: current === undefined ? null : maskUrl(current),
          upToDate: url !== undefined && current === url,
          ...(await L.envWarning(c.root, config.pairing.envFile).catch(() => ({ ignored: false, warning: null }))),
        },
        hooks: hooks
          ? { manager: hooks.manager, installed: hooks.hooks.every((h) => h.installed), lastRun: hooks.lastRun }
          : null,
      };
      if (c.json) return printJson(c.io, status);
      const lastRun = status.hooks?.lastRun as { ok?: boolean; message?: string; at?: string } | null | undefined;
      c.io.out(
        [
          `git branch:      ${gitBranch}`,
          `database branch: ${status.paired ? `${status.paired.branch} (${status.paired.parent === null ? 'the root branch' : `from ${status.paired.parent}`})` : 'not paired yet (run consort pair)'}`,
          `${status.env.key} in ${status.env.file}: ${status.env.value === null ? 'not set' : status.env.upToDate ? 'up to date' : `stale (${status.env.value})`}`,
          `hooks:           ${status.hooks ? (status.hooks.installed ? `installed (${status.hooks.manager})` : 'not installed (consort hooks install)') : '-'}`,
          // The background job's outcome, as `hooks status` says it: a failed one (a migration that did
          // not apply) is otherwise invisible here, the pairing itself standing.
          ...(lastRun ? [`last hook run:   ${lastRun.at} ${lastRun.ok ? 'ok' : 'FAILED'}: ${lastRun.message}`] : []),
          ...(status.env.warning ? [`warning: ${status.env.warning}`] : []),
        ].join('\n'),
      );
    });
  pair
    .command('diff')
    .description("the paired database branch's schema against its parent's (what this git branch's migrations changed)")
    .option('--git-branch <name>', 'another git branch (default: the checked-out one)')
    .option('--config <path>', 'configuration file')
    .action(async (given: { gitBranch?: string; config?: string }, cmd: Command) => {
      const c = await ctx(cmd);
      L ??= await loadLib();
      const o = subOptions(given, cmd);
      const { config } = await L.loadConfig(c.root, o.config ? { path: o.config } : {});
      const gitBranch = await gitBranchOf(c, o.gitBranch);
      const d = await L.withPairingProvider(c.root, c.env, config, providerChoice(c, cmd), (p) =>
        L.pairedSchemaDiff(p, config, gitBranch),
      );
      if (c.json) return printJson(c.io, d);
      c.io.out(
        d.empty
          ? `${d.branch} has the same schema as ${d.parent}.`
          : `${d.branch} against ${d.parent}:\n${L.renderSchemaDiffText(d.diff)}`,
      );
    });
  return pair;
}
