/**
 * What a failed command tells people and scripts. People read the error on stderr (the message,
 * the hint on the next line); with `--json` a script also gets it on stdout as one object,
 * `{ "error": { code, message, hint, exitCode } }`, so `consort … --json | jq` always has
 * something to parse (docs/cli.md, "JSON output").
 */
import { CommanderError, type Command } from 'commander';
import { isConsortError, type ErrorCode } from '../core/errors.js';
import { redact } from '../core/redact.js';
import { isUsageError } from './usage.js';

export interface Failure {
  code: ErrorCode;
  message: string;
  hint: string | null;
  /** 1 the command could not do its work, 2 it was called wrongly. */
  exitCode: number;
}

/** A thrown error as the CLI reports it; secrets (the postgres URL's password) never leave it. */
export function describeFailure(e: unknown, secrets: string[]): Failure {
  const clean = (text: string) => redact(text, secrets);
  if (e instanceof CommanderError) {
    // Commander appends its suggestion to the message ("unknown command 'brnch'\n(Did you mean
    // branch?)"): the message says what was wrong, the hint what to run.
    const text = clean(e.message.replace(/^error: /, ''));
    const suggested = /\n\(Did you mean ([^)]+)\?\)\s*$/.exec(text);
    return {
      code: 'invalid-input',
      message: suggested ? text.slice(0, suggested.index) : text,
      hint: suggested
        ? `Did you mean ${suggested[1]}? Run the command with --help for usage.`
        : 'Run the command with --help for usage.',
      exitCode: 2,
    };
  }
  if (isConsortError(e))
    return {
      code: e.code,
      message: clean(e.message),
      hint: e.hint === undefined ? null : clean(e.hint),
      exitCode: isUsageError(e) ? 2 : 1,
    };
  return {
    code: 'internal',
    message: clean(`unexpected error: ${e instanceof Error ? e.message : String(e)}`),
    hint: 'Set CONSORT_DEBUG=1 for details.',
    exitCode: 1,
  };
}

/**
 * Whether the command line asked for JSON on stdout: `--json` on a command, or `check --json -`.
 * Commander keeps what it parsed on each command, so after a parse that finished,
 * `branch create x --from --json` (a parent named "--json") asks for none. When commander stopped
 * before the command's options were read (an unknown command, `--json` before the command, a bad
 * option value ahead of `--json`), the words themselves are read.
 */
export function jsonRequested(program: Command, argv: readonly string[], parseFinished: boolean): boolean {
  const parsed = parsedJson(program);
  if (parsed !== undefined) return parsed === true || parsed === '-';
  if (parseFinished) return false;
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === '--json' || a === '--json=-');
}

function parsedJson(cmd: Command): unknown {
  const own: unknown = cmd.getOptionValue('json');
  if (own !== undefined) return own;
  for (const sub of cmd.commands) {
    const value = parsedJson(sub);
    if (value !== undefined) return value;
  }
  return undefined;
}
