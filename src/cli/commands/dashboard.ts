/**
 * `consort dashboard [--port N] [--no-open] [--json]`: this repository's features, turns, gates,
 * checks and database branches in the browser, on 127.0.0.1 only, live while `consort run` works.
 * Runs until interrupted (Ctrl-C).
 */
import { spawn } from 'node:child_process';
import { Command, Option } from 'commander';
import { ConsortError } from '../../core/errors.js';
import { branchViews } from '../../dashboard/branch-views.js';
import type { BranchView } from '../../dashboard/port.js';
import type { BranchProvider } from '../../ports/branch-provider.js';
import { hostProgram } from '../../process/host-programs.js';
import { localProcessRunner } from '../../process/runner.js';
import type { CliContext } from '../context.js';
import { printJson } from '../output.js';
import type { Ctx } from '../context.js';
import { usageError } from '../usage.js';

/** The options, parsed with zod — loaded when the command runs, not when the CLI starts. */
async function optionsSchema() {
  const { z } = await import('zod');
  return z.object({
    port: z.coerce.number().int().min(0).max(65535),
    open: z.boolean(),
    as: z.string().optional(),
    readOnly: z.boolean().optional(),
    branches: z.boolean(),
  });
}

/** Names a browser opener needs, and nothing else (never the whole environment). */
const OPENER_ENV = [
  'PATH',
  'HOME',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XDG_RUNTIME_DIR',
  'DBUS_SESSION_BUS_ADDRESS',
  'BROWSER',
  'SYSTEMROOT',
];

function allowEnv(env: NodeJS.ProcessEnv, names: readonly string[]): NodeJS.ProcessEnv {
  return Object.fromEntries(names.flatMap((n) => (env[n] === undefined ? [] : [[n, env[n]]])));
}

function openBrowser(url: string, env: NodeJS.ProcessEnv): void {
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  // Not the ProcessRunner: the browser outlives this process, nobody waits for it.
  const child = spawn(hostProgram(cmd, env.PATH ?? ''), args, {
    env: allowEnv(env, OPENER_ENV),
    stdio: 'ignore',
    detached: true,
  });
  child.on('error', () => undefined); // no opener: the URL is printed anyway
  child.unref();
}

async function gitUserName(root: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const r = await localProcessRunner.run({
    command: ['git', 'config', 'user.name'],
    cwd: root,
    env: allowEnv(env, ['PATH', 'HOME', 'XDG_CONFIG_HOME', 'GIT_CONFIG_GLOBAL']),
    captureStdout: true,
    maxOutputBytes: 64 * 1024,
  });
  return r.exitCode === 0 ? r.stdout!.toString('utf8').trim() || null : null;
}

/** The provider's branches, opening it on first use (the local one starts an embedded server). */
function lazyBranches(c: CliContext): { list: () => Promise<BranchView[]>; close: () => Promise<void> } {
  let provider: Promise<BranchProvider> | null = null;
  return {
    async list() {
      provider ??= Promise.all([import('../../branches/factory.js'), c.providerChoice()]).then(
        ([{ openProvider }, { provider: name, namespace }]) => {
          c.noteNamespace(name);
          return openProvider({
            provider: name,
            projectRoot: c.root,
            env: c.env,
            log: (m) => c.io.err(m),
            ...(namespace ? { namespace } : {}),
          });
        },
      );
      return branchViews(await provider);
    },
    async close() {
      if (provider) await (await provider).close();
    },
  };
}

export function dashboardCommand(ctx: Ctx): Command {
  return new Command('dashboard')
    .description(
      "this repository's features, turns, gates, checks and database branches in the browser (127.0.0.1 only, live)",
    )
    .addOption(new Option('--port <n>', 'port to listen on (0: any free port)').default('4321'))
    .option('--no-open', 'do not open a browser')
    .option('--as <name>', 'the name gate approvals are recorded under (default: git config user.name)')
    .option('--read-only', 'show everything, approve nothing')
    .option('--no-branches', 'do not open the branch provider (the Branches view stays empty)')
    .action(async (raw: unknown, cmd: Command) => {
      const c = await ctx(cmd);
      const parsed = (await optionsSchema()).safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const name = String(issue?.path[0] ?? '');
        const given = (raw as Record<string, unknown>)[name];
        throw name === 'port'
          ? usageError(
              `--port takes a port number from 0 to 65535 (got ${JSON.stringify(given)}).`,
              'Use --port <n>, or --port 0 for any free port.',
            )
          : usageError(`Invalid option --${name}: ${issue?.message}.`, 'See consort dashboard --help.');
      }
      const o = parsed.data;
      // Loaded here, not at start-up: `consort --version` must not pay for the dashboard.
      const { LocalSource } = await import('../../dashboard/local-source.js');
      const { startLocalDashboard } = await import('../../dashboard/local-server.js');
      const branches = o.branches ? lazyBranches(c) : null;
      const source = new LocalSource({
        root: c.root,
        canApprove: o.readOnly !== true,
        ...(branches ? { branches: branches.list } : {}),
      });
      const approver = o.as ?? (await gitUserName(c.root, c.env));
      const server = await startLocalDashboard({ source, port: o.port, approver }).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'EADDRINUSE')
          throw new ConsortError('invalid-input', `Port ${o.port} is in use.`, {
            hint: 'Pick another with --port <n> (or --port 0 for any free port).',
          });
        throw e;
      });
      const readOnly = o.readOnly === true;
      // The sign-in link goes only to this terminal (and the browser it opens): it is what lets a
      // browser approve, and a process that can merely fetch the pages never sees it.
      if (c.json)
        printJson(c.io, {
          url: server.url,
          port: server.port,
          repository: source.name,
          readOnly,
          ...(readOnly ? {} : { signInUrl: server.signInUrl }),
        });
      else {
        c.io.out(`Consort dashboard for ${source.name}: ${server.url} (Ctrl-C to stop)`);
        if (!readOnly) c.io.out(`To approve gates in a browser, open this link once: ${server.signInUrl}`);
      }
      if (o.open) openBrowser(readOnly ? server.url : server.signInUrl, c.env);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      source.close();
      await server.close();
      await branches?.close();
    });
}
