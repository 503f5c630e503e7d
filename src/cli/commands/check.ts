/** `consort check`: the PR lane from the command line (the Action's `check` mode runs the same lane). */
import { Command } from 'commander';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ConsortConfig } from '../../config/schema.js';
import type { CheckPlanJson, CheckSide } from '../../lanes/check/plan.js';
import type { GitRepo } from '../../ports/git.js';
import type { CheckReport } from '../../report/check-report.js';
import type { CliContext, Ctx } from '../context.js';
import { ConsortError } from '../../core/errors.js';
import { usageError } from '../usage.js';
import { VERSION } from '../version.js';
import { serverNotice, serverRunning } from './server-notice.js';
import { planWarningReason } from '../../migrations/plan.js';
import { configFileToEdit } from '../../config/files.js';

interface CheckFlags {
  base?: string;
  head?: string;
  pr?: string;
  config?: string;
  markdown?: string;
  dryRun?: boolean;
  keepBranches?: boolean;
  cleanup?: boolean;
  rebuildBaseline?: boolean;
  verbose?: boolean;
}

/** A ref's side; `HEAD` (or any ref that is not a branch name) records the branch checked out. */
async function side(
  git: GitRepo,
  root: string,
  ref: string,
  config: ConsortConfig,
  configPath?: string,
  change = false,
): Promise<CheckSide> {
  const { commitSide } = await import('../../lanes/check/sides.js');
  const sha = await git.resolveCommit(root, ref);
  const s = await commitSide(git, root, ref, sha, config, configPath);
  if (change && s.migrations.length === 0) await requireMigrationsDir(git, root, ref, sha, s, config);
  return ref === 'HEAD' || ref === '@' ? { ...s, gitBranch: await git.currentBranch(root) } : s;
}

/**
 * A change (`--head <ref>`) without its migrations folder is the error the working tree gives, not
 * a change without migrations: a project that keeps them elsewhere (`--migrations-dir db/migrations`
 * in a script) would pass every check while nothing of it was applied. A base without the folder
 * is a base before the first migration.
 */
async function requireMigrationsDir(
  git: GitRepo,
  root: string,
  ref: string,
  sha: string,
  s: CheckSide,
  config: ConsortConfig,
): Promise<void> {
  // The folder commitSide read.
  const dir = s.settings?.migrationsDir ?? config.migrations.dir;
  if ((await git.pathKindAt(root, sha, dir)) !== 'missing') return;
  const { migrationsDirHint } = await import('../../migrations/scripted-dirs.js');
  throw new ConsortError(
    'config',
    `No migrations directory at ${dir} (migrations.dir) in ${ref} (commit ${sha.slice(0, 12)}).`,
    {
      hint:
        (await migrationsDirHint(root, dir).catch(() => undefined)) ??
        `Create it, or set migrations.dir in ${await configFileToEdit(root)} to the folder that holds your migrations.`,
    },
  );
}

/** Base and head as the user asked, with sensible defaults: merge-base with the default branch, and the working tree. */
export async function resolveSides(
  git: GitRepo,
  root: string,
  config: ConsortConfig,
  flags: CheckFlags,
  log: (m: string) => void,
): Promise<{ base: CheckSide; head: CheckSide }> {
  const { commitSide, EMPTY_SIDE, withLeftBehind, workingTreeSide } = await import('../../lanes/check/sides.js');
  const repo = await git.isGitRepo(root);
  let base: CheckSide;
  // The base's committed configuration (the same file) decides what the change may not grant itself.
  if (flags.base) base = await side(git, root, flags.base, config, flags.config);
  else if (repo) {
    const d = await git.defaultBase(root).catch(() => undefined);
    if (d) base = await commitSide(git, root, d.ref, d.sha, config, flags.config);
    else {
      log('No default branch to compare with: every migration counts as new (pass --base <ref> to compare).');
      base = EMPTY_SIDE;
    }
  } else {
    log('Not a git repository: every migration counts as new.');
    base = EMPTY_SIDE;
  }
  // A migration the change leaves in the base's folder while its configuration reads another.
  const dir = config.migrations.dir;
  if (flags.head)
    return {
      base,
      head: await withLeftBehind(git, base, await side(git, root, flags.head, config, flags.config, true), dir),
    };
  const head = await workingTreeSide(
    root,
    'working tree',
    repo ? await git.headCommit(root) : null,
    config,
    repo ? git : undefined,
  );
  return {
    base,
    head: await withLeftBehind(git, base, { ...head, gitBranch: repo ? await git.currentBranch(root) : null }, dir),
  };
}

export function checkCommand(ctx: Ctx): Command {
  return new Command('check')
    .description(
      "check a change's migrations on a fresh database branch: plan, apply, lint, reversibility, schema diff, your suite",
    )
    .option('--base <ref>', 'what the change is compared with (default: merge-base with origin/HEAD, main or master)')
    .option('--head <ref>', 'the change (default: the working tree)')
    .option('--pr <number>', 'pull request number (names the branch pr-<n>)')
    .option(
      '--config <path>',
      'configuration file (default: .github/consort.yml, .github/consort.yaml or consort.config.json)',
    )
    .option(
      '--json [file]',
      'the CheckReport JSON: on stdout (instead of the report; also with -), or written to <file>',
    )
    .option(
      '--markdown <file>',
      'the markdown report (PR comment / job summary): written to <file>, or on stdout (instead of the report) with -',
    )
    .option('--dry-run', 'print the plan from the files alone: starts no server, needs no database')
    .option(
      '--keep-branches',
      'keep the temporary branches to look into (the next check of the branch removes them first)',
    )
    .option('--cleanup', 'delete the PR branch at the end as well')
    .option('--rebuild-baseline', 'build the baseline from base alone when the parent branch is ahead of base')
    .option('--verbose', "stream the suite's output to stderr")
    .action(async (flags: CheckFlags, cmd: Command) => {
      const pr = flags.pr === undefined ? null : Number(flags.pr);
      if (pr !== null && (!Number.isInteger(pr) || pr <= 0))
        throw usageError(
          `--pr must be a positive number, got "${flags.pr}".`,
          "Pass the pull request's number (--pr 42), or leave it out to check the working tree's branch.",
        );
      const c = await ctx(cmd);
      // `--json` alone (or `--json -`): the JSON on stdout, as every command's --json; `--json <file>` writes it there.
      const jsonFile = c.jsonFile ?? (c.json ? '-' : undefined);
      if (jsonFile === '-' && flags.markdown === '-' && !flags.dryRun)
        throw usageError(
          '--json and --markdown cannot both print on stdout: give one of them a file.',
          'For example: --json - --markdown report.md',
        );
      const { cliPorts } = await import('../ports.js');
      const ports = cliPorts(c);
      const log = (m: string) => ports.log.info(m);
      const { checkPlanJson, planCheck } = await import('../../lanes/check/plan.js');
      let prepared;
      try {
        const { loadConfig } = await import('../../config/load.js');
        const { config, source } = await loadConfig(c.root, flags.config ? { path: flags.config } : {});
        const { base, head } = await resolveSides(ports.git, c.root, config, flags, log);
        // The plan reads no database: --dry-run prints it, a run executes this same object.
        const plan = await planCheck(
          {
            workspace: c.root,
            config,
            configSource: source,
            base,
            head,
            pr,
            env: c.env,
            toolVersion: VERSION,
            keepBranches: flags.keepBranches === true,
            cleanup: flags.cleanup === true,
            rebuildBaseline: flags.rebuildBaseline === true,
          },
          ports,
        );
        prepared = { config, plan };
      } catch (e) {
        // The report promised to scripts: an `error` conclusion, written before the error is shown,
        // whatever stopped the check before it started (the configuration, a git ref, the engine).
        if (jsonFile && !flags.dryRun) await emit(c, jsonFile, JSON.stringify(await errorReport(c, e, pr), null, 2));
        throw e;
      }
      const { config, plan } = prepared;
      if (flags.dryRun) {
        // No provider is opened, so nothing starts and no URL is needed.
        const json = checkPlanJson(plan);
        if (jsonFile) await emit(c, jsonFile, JSON.stringify(json, null, 2));
        else {
          // Named as the run's report and `consort pair` name it (a hoisted copy shared with the project is the project's).
          const { describeUsed } = await import('../../migrations/run-engine.js');
          const engine = plan.engine
            ? describeUsed({
                ...plan.engine.engine,
                ...(plan.engine.loader ? { typescript: plan.engine.loader } : {}),
                ...(plan.engine.paths ? { pathAliases: plan.engine.paths } : {}),
              })
            : 'none';
          const { problemPhrase } = await import('../../report/content.js');
          const { phrase } = await import('../../report/terminal.js');
          c.io.out(renderPlan(json, engine, (p) => phrase(problemPhrase(p))));
        }
        c.setExitCode(json.ok && json.blocked === null ? 0 : 1);
        return;
      }
      const { openProvider } = await import('../../branches/factory.js');
      const { runCheck } = await import('../../lanes/check/run.js');
      const { onTermination } = await import('../../lanes/check/cancel.js');
      const { renderCheckMarkdown } = await import('../../report/markdown.js');
      const { renderCheckTerminal } = await import('../../report/terminal.js');
      const providerName = c.providerExplicit ? c.providerName : config.database.provider;
      const namespace = c.namespace ?? config.database.namespace;
      c.noteNamespace(providerName);
      const wasRunning = providerName === 'local' ? await serverRunning(c) : true;
      const provider = await openProvider({
        provider: providerName,
        projectRoot: c.root,
        env: c.env,
        log,
        // The baseline's pool serves this check's own handouts; a one-shot process does not refill it.
        refillPools: false,
        ...(namespace ? { namespace } : {}),
      });
      let report: CheckReport;
      // Ctrl-C or a CI runner's SIGTERM: the suite's process group is killed, temporary branches removed, conclusion `cancelled`.
      const controller = new AbortController();
      try {
        report = await onTermination(
          controller,
          () =>
            runCheck(
              plan,
              { ...ports, provider },
              {
                signal: controller.signal,
                ...(flags.verbose ? { onSuiteOutput: (s: string) => process.stderr.write(s) } : {}),
              },
            ),
          log,
        );
      } finally {
        await provider.close();
      }
      if (jsonFile) await emit(c, jsonFile, JSON.stringify(report, null, 2));
      if (flags.markdown) await emit(c, flags.markdown, renderCheckMarkdown(report));
      if (jsonFile !== '-' && flags.markdown !== '-') {
        // A local file not yet added to git is renamed with mv: `git mv` refuses untracked files.
        const untracked = flags.head
          ? new Set<string>()
          : await ports.git.untrackedFiles(c.root, config.migrations.dir);
        c.io.out(renderCheckTerminal(report, { color: process.stdout.isTTY === true && !c.env.NO_COLOR, untracked }));
      }
      await serverNotice(c, wasRunning);
      c.setExitCode(exitCode(report));
    });
}

/** 0 success; 130/143 after SIGINT/SIGTERM (as a shell reports them); 1 otherwise (a failure, an error, a newer run took over). */
function exitCode(report: CheckReport): number {
  if (report.conclusion === 'success') return 0;
  if (report.conclusion === 'cancelled' && report.cancelled?.reason === 'SIGINT') return 130;
  if (report.conclusion === 'cancelled' && report.cancelled?.reason === 'SIGTERM') return 143;
  return 1;
}

async function emit(c: CliContext, file: string, text: string): Promise<void> {
  if (file === '-') c.io.out(text);
  else await writeReportFile(file, `${text}\n`);
}

/**
 * A report file where it was asked for, its folder made first: `--json .consort/checks/<time>.json`
 * (the dashboard's history, docs/dashboard.md) on a first check must not lose the finished report.
 */
async function writeReportFile(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

/** The report of a check that could not start (e.g. an invalid configuration): every stage not run. */
async function errorReport(c: CliContext, e: unknown, pr: number | null): Promise<CheckReport> {
  const { defaultConfig } = await import('../../config/schema.js');
  const { initialStages, skip } = await import('../../lanes/check/stages.js');
  const { CHECK_REPORT_VERSION } = await import('../../report/check-report.js');
  const { isConsortError } = await import('../../core/errors.js');
  const stages = initialStages(defaultConfig());
  skip(stages, Object.keys(stages) as (keyof typeof stages)[], 'not run: the check stopped on an error');
  const error = isConsortError(e)
    ? { message: e.message, ...(e.hint ? { hint: e.hint } : {}) }
    : { message: e instanceof Error ? e.message : String(e) };
  return {
    schemaVersion: CHECK_REPORT_VERSION,
    tool: { name: 'consort', version: VERSION },
    conclusion: 'error',
    startedAt: new Date().toISOString(),
    durationMs: 0,
    provider: c.providerName,
    branchMode: null,
    base: { ref: '(not resolved)', sha: null },
    head: { ref: '(not resolved)', sha: null },
    pr,
    branch: null,
    configSource: null,
    error,
    stages,
  };
}

/** The plan as text: the same object --dry-run --json prints. */
function renderPlan(
  plan: CheckPlanJson,
  engine: string,
  say: (p: CheckPlanJson['warnings'][number]) => string,
): string {
  const lines = [`Plan (dry run: from the files alone, no database touched):`];
  const side = (x: { ref: string; sha: string | null }) => `${x.ref}${x.sha ? ` (${x.sha.slice(0, 12)})` : ''}`;
  lines.push(`  head: ${side(plan.head)} → base: ${side(plan.base)}`); // as the report's header reads: the change, then what it goes into
  lines.push(`  new migrations: ${plan.newMigrations.length ? plan.newMigrations.join(', ') : 'none'}`);
  for (const p of plan.problems)
    lines.push(`  ✗ ${p.kind}: ${p.file}${'suggestedFile' in p ? ` → rename to ${p.suggestedFile}` : ''}`);
  for (const p of plan.warnings)
    lines.push(
      p.kind === 'deploy-setting' || p.kind === 'imported-code-changed' || p.kind === 'unchecked-migrations-dir'
        ? `  ! ${p.kind}: ${say(p)}`
        : `  ! ${p.kind} (allowed: ${planWarningReason(p)}): ${p.file}`,
    );
  lines.push(
    `  engine: ${engine}`,
    `  seed: ${plan.seed}`,
    `  baseline: ${plan.baseline ?? 'cannot be named'}${plan.baseline ? ` (reused if it exists${plan.rebuildBaseline ? '; built from base alone' : ''})` : ''}`,
    `  PR branch: ${plan.branch} (created or reset)`,
    `  temporary: ${plan.temporaryBranches.join(', ')} (removed at the end)`,
  );
  if (plan.blocked)
    lines.push(
      `  ✗ the ${plan.blocked.stage} stage would fail: ${plan.blocked.message}${plan.blocked.hint ? ` ${plan.blocked.hint}` : ''}`,
    );
  return lines.join('\n');
}
