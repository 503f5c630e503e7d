/**
 * The `consort` CLI: builds the command tree; the one place errors become exit codes.
 *
 * Start-up is kept to commander and a few small modules: each command loads what it needs
 * (providers, pg, node-pg-migrate, the lanes) with `import()` inside its action, so `--version`,
 * `--help` and usage errors answer in a few tens of milliseconds (bench/cli-startup.mjs). The
 * imports are awaited one by one, not with Promise.all: jest's ESM linker (the tests run the CLI
 * in-process) fails on concurrent imports that share a module ("… is not in cache").
 */
import { Command, CommanderError, Help, Option } from 'commander';
import { isConsortError } from '../core/errors.js';
import { redact } from '../core/redact.js';
import { branchCommand } from './commands/branch.js';
import { checkCommand } from './commands/check.js';
import { dbCommand } from './commands/db.js';
import { demoCommand } from './commands/demo.js';
import { dashboardCommand } from './commands/dashboard.js';
import { approveCommand } from './commands/approve.js';
import { featureCommand } from './commands/feature.js';
import { logCommand } from './commands/log.js';
import { hooksCommand } from './commands/hooks.js';
import { pairCommand } from './commands/pair.js';
import { runLaneCommand } from './commands/run.js';
import { statusCommand } from './commands/status.js';
import { makeContext } from './context.js';
import { describeFailure, jsonRequested } from './failure.js';
import { VERSION } from './version.js';
import { printJson, processIo, type Io } from './output.js';

export function buildProgram(
  io: Io,
  env: NodeJS.ProcessEnv,
  setExitCode: (code: number) => void = () => undefined,
): Command {
  const program = new Command('consort')
    .description('Test-driven development on a branching Postgres database')
    .version(VERSION)
    .addOption(
      new Option(
        '--provider <name>',
        "where branches live: local (embedded PostgreSQL 18), postgres (CONSORT_POSTGRES_URL), lakebase (Databricks) or neon (default: the configuration's database.provider, else local)",
      ).env('CONSORT_PROVIDER'),
    )
    .option(
      '--namespace <name>',
      "postgres provider: keeps projects sharing one server apart (default: the configuration's database.namespace, else CONSORT_NAMESPACE, else the project folder name)",
    )
    .option('-C, --cwd <dir>', 'run as if started in <dir>')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .configureHelp({
      // approve checks its arguments itself (approveArguments: clearer messages than commander's),
      // so commander holds them as optional; the list shows them as required, as its usage does.
      // (Not its whole usage: a term that long leaves the descriptions too narrow to wrap at 80.)
      subcommandTerm(this: Help, cmd: Command) {
        return cmd.name() === 'approve'
          ? 'approve [options] <feature> <gate>'
          : Help.prototype.subcommandTerm.call(this, cmd);
      },
    });
  const ctx = (cmd: Command) => makeContext(cmd, io, env, setExitCode);
  const output = { writeOut: (s: string) => io.out(s.trimEnd()), writeErr: (s: string) => io.err(s.trimEnd()) };
  for (const sub of [dbCommand(ctx), branchCommand(ctx), checkCommand(ctx), demoCommand(ctx)]) program.addCommand(sub);
  for (const sub of [
    featureCommand(ctx),
    runLaneCommand(ctx),
    statusCommand(ctx),
    approveCommand(ctx),
    logCommand(ctx),
  ])
    program.addCommand(sub);
  program.addCommand(dashboardCommand(ctx));
  for (const sub of [pairCommand(ctx), hooksCommand(ctx)]) program.addCommand(sub);
  // `--json` lives on each command (after its name) because `check --json [file]` takes a value.
  const visit = (cmd: Command) => {
    cmd.exitOverride().configureOutput(output).showHelpAfterError('(run with --help for usage)');
    if (cmd.commands.length === 0 && !cmd.options.some((o) => o.long === '--json'))
      cmd.option('--json', 'machine-readable output on stdout');
    cmd.commands.forEach(visit);
  };
  program.commands.forEach(visit);
  return program;
}

/** The top-level commands (cli-surface.test.ts checks the list against the program). */
export const COMMAND_NAMES = [
  'db',
  'branch',
  'check',
  'demo',
  'feature',
  'run',
  'status',
  'approve',
  'log',
  'dashboard',
  'pair',
  'hooks',
] as const;

/**
 * Options that pick where branches live, and the folder the command ran as if started in (`-C`):
 * a suggested command needs them too. The suggestion is pasted in the shell the command was typed
 * in, so `-C`'s path, relative to that folder, goes along as given; without it the suggestion
 * would act on the project of the folder the user is in (another embedded server, or none).
 */
const GLOBAL_OPTIONS = new Set(['--provider', '--namespace', '-C', '--cwd']);

/**
 * The global options on the command line (`-C app --provider postgres --namespace shop`; commander
 * reads them before or after the command), shell-quoted, as they go before a command; '' when none
 * was given (or only help was asked for).
 */
export function globalOptionsOf(argv: readonly string[]): string {
  if (argv.includes('--help') || argv.includes('-h')) return '';
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const given: string[] = [];
  for (let i = 0; i < argv.length && argv[i] !== '--'; i++) {
    const arg = argv[i]!;
    const [name, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : /^-C./.test(arg)
          ? ['-C', arg.slice(2)]
          : [arg, undefined];
    if (!GLOBAL_OPTIONS.has(name!)) continue;
    const value = inline ?? argv[++i];
    if (value !== undefined) given.push(name === '--cwd' ? '-C' : name!, quote(value));
  }
  return given.join(' ');
}

/**
 * Run by npm (`npx consort …`, or an npm script such as `npm run demo`: npm sets npm_command), the
 * commands Consort suggests ("Stop it with: consort db stop") are shown as `npx consort …`: a
 * project's own install puts no `consort` on the user's PATH, and npx finds a global one too.
 * Given with `-C`, `--provider` or `--namespace` (`consort -C app --provider postgres check`), they
 * carry them, so a suggestion pasted as it reads acts on the same project and branches (`branch url pr-7` would otherwise
 * look for pr-7 on the embedded server, starting it first). Machine-readable output (JSON on stdout) is left
 * as it is.
 */
export function suggestionsFor(io: Io, env: NodeJS.ProcessEnv, argv: readonly string[] = []): Io {
  const globals = globalOptionsOf(argv);
  if (!env.npm_command && !globals) return io;
  // A command (`consort db stop`), or the top-level help's own `Usage: consort [options] [command]`.
  const command = new RegExp(`(^|[\\s\`'"(=])(npx )?consort (?=(?:${COMMAND_NAMES.join('|')})\\b|\\[options\\])`, 'gm');
  const runner = env.npm_command ? 'npx ' : '';
  const npx = (text: string) =>
    text.replace(
      command,
      (_m, before: string, npxGiven?: string) =>
        `${before}${npxGiven ?? runner}consort ${globals ? `${globals} ` : ''}`,
    );
  return {
    ...io,
    out: (text) => io.out(/^\s*[[{]/.test(text) ? text : npx(text)),
    err: (text) => io.err(npx(text)),
  };
}

/**
 * Run the CLI; resolves to the exit code (0 ok, 1 failed, 2 usage). An error goes to stderr and,
 * when --json asked for stdout and the command wrote nothing there yet, to stdout as one object
 * (src/cli/failure.ts); `check --json -` that already wrote its `error` report leaves it at that.
 */
export async function runCli(
  argv: string[],
  given: Io = processIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const suggesting = suggestionsFor(given, env, argv);
  let wroteOut = false;
  const io: Io = {
    ...suggesting,
    out: (text) => {
      wroteOut = true;
      suggesting.out(text);
    },
  };
  let exitCode = 0;
  const program = buildProgram(io, env, (code) => {
    exitCode = code;
  });
  const secrets = [env.CONSORT_POSTGRES_URL ?? ''];
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError && e.exitCode === 0) return 0;
    const failure = describeFailure(e, secrets);
    // Commander has already written its own message (and the usage hint) to stderr.
    if (isConsortError(e)) {
      // The hint on a line of its own: the last problem of a list must not run into it.
      io.err(`consort: ${failure.message}${failure.hint ? `\n${failure.hint}` : ''}`);
    } else if (!(e instanceof CommanderError)) {
      io.err(`consort: ${failure.message} (set CONSORT_DEBUG=1 for details)`);
      if (env.CONSORT_DEBUG) io.err(redact(String(e instanceof Error ? e.stack : e), secrets));
    }
    if (!wroteOut && jsonRequested(program, argv, !(e instanceof CommanderError))) printJson(io, { error: failure });
    return failure.exitCode;
  }
}

export async function main(): Promise<void> {
  process.exitCode = await runCli(process.argv.slice(2));
}
