/** The `consort` CLI: builds the command tree; the one place errors become exit codes. */
import { Command, CommanderError, Option } from 'commander';
import { isConsortError } from '../core/errors.js';
import { redact } from '../core/redact.js';
import { branchCommand } from './commands/branch.js';
import { dbCommand } from './commands/db.js';
import { demoCommand } from './commands/demo.js';
import { makeContext } from './context.js';
import { processIo, type Io } from './output.js';

export function buildProgram(io: Io, env: NodeJS.ProcessEnv): Command {
  const program = new Command('consort')
    .description('Test-driven development on a branching Postgres database')
    .version(VERSION)
    .addOption(new Option('--provider <name>', 'where branches live: local (embedded PostgreSQL 18) or postgres (CONSORT_POSTGRES_URL)').env('CONSORT_PROVIDER'))
    .option('--namespace <name>', 'postgres provider: keeps projects sharing one server apart (default: project folder name)')
    .option('--json', 'machine-readable output on stdout')
    .option('-C, --cwd <dir>', 'run as if started in <dir>')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  const ctx = (cmd: Command) => makeContext(cmd.optsWithGlobals(), io, env);
  for (const sub of [dbCommand(ctx), branchCommand(ctx), demoCommand(ctx)]) {
    sub.exitOverride().configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
    for (const c of sub.commands) c.exitOverride().configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
    program.addCommand(sub);
  }
  return program;
}

export const VERSION = '0.1.0';

/** Run the CLI; resolves to the exit code (0 ok, 1 failed, 2 usage). */
export async function runCli(argv: string[], io: Io = processIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const program = buildProgram(io, env);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    const secrets = [env.CONSORT_POSTGRES_URL ?? ''];
    if (isConsortError(e)) {
      io.err(redact(`consort: ${e.message}${e.hint ? ` ${e.hint}` : ''}`, secrets));
      return 1;
    }
    const message = e instanceof Error ? e.message : String(e);
    io.err(redact(`consort: unexpected error: ${message} (set CONSORT_DEBUG=1 for details)`, secrets));
    if (env.CONSORT_DEBUG) io.err(redact(String(e instanceof Error ? e.stack : e), secrets));
    return 1;
  }
}

export async function main(): Promise<void> {
  process.exitCode = await runCli(process.argv.slice(2));
}
