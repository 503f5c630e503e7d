/**
 * Migration lint adapter: runs the Squawk binary shipped by the `squawk-cli` npm package over the
 * SQL each migration produced and maps its JSON report to findings located in the original files.
 *
 * Observed contract of squawk 2.61 `--reporter json` (verified by the tests in test/lint):
 * a single JSON array of `{ file, line, column, line_end, column_end, level, message, help, rule_name }`
 * where `line` is 0-based (CR, LF and CRLF all end a line), `column` is a 0-based UTF-8 byte offset
 * within that line, `line_end`/`column_end` end the span the finding is about (a column's type, a
 * clause of an ALTER TABLE, the whole statement) the same way, `level` is `"Warning"` for rule violations and `"Error"` only for parse errors
 * (`rule_name: "syntax-error"`). Exit 0 = clean, 1 = findings, 2 = rejected arguments.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { ConsortError } from '../core/errors.js';
import { pinnedVersions } from '../tools/pinned-versions.js';
import { resolvePlatformPackage, type PlatformPackage, type ResolveOptions } from '../tools/platform-packages.js';
import { childEnv } from '../core/child-env.js';
import { localProcessRunner } from '../process/runner.js';
import type { Linter, LintFinding, LintInput, LintOptions, LintResult } from '../ports/linter.js';

export type { LintFinding, LintInput, LintLevel, LintOptions, LintResult } from '../ports/linter.js';

const DEFAULT_TIMEOUT_MS = 30_000;
const INSTALL_HINT =
  'squawk-cli ships its binary as an optional per-platform package; reinstall dependencies with optional packages enabled (npm install --include=optional).';

const squawkReport = z.array(
  z.object({
    file: z.string(),
    line: z.number().int().nonnegative(),
    column: z.number().int().nonnegative(),
    level: z.enum(['Warning', 'Error']),
    message: z.string(),
    help: z.string().nullable(),
    rule_name: z.string(),
    line_end: z.number().int().nonnegative().optional(),
    column_end: z.number().int().nonnegative().optional(),
  }),
);
type SquawkViolation = z.infer<typeof squawkReport>[number];

export function squawkPackage(platform: string = process.platform, arch: string = process.arch): PlatformPackage {
  return { name: `@squawk-cli/${platform}-${arch}`, version: pinnedVersions().squawk, via: 'squawk-cli' };
}

/** The platform binary: from node_modules (nested under squawk-cli too), else the tools directory (see platform-packages.ts). */
export async function resolveSquawkBinary(options: ResolveOptions = {}): Promise<string> {
  const spec = squawkPackage();
  try {
    const pkg = await resolvePlatformPackage(spec, options);
    return join(pkg.dir, 'bin', process.platform === 'win32' ? 'squawk.exe' : 'squawk');
  } catch (cause) {
    throw new ConsortError(
      'tools-unavailable',
      `The squawk binary (${spec.name}) is not installed: ${(cause as Error).message}`,
      { hint: INSTALL_HINT, cause },
    );
  }
}

interface SquawkRun {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

async function runSquawk(binary: string, args: string[], cwd: string, timeoutMs: number): Promise<SquawkRun> {
  // stdin is closed: squawk lints stdin whenever it is not a terminal and no path is given.
  // Annotations are disabled because under GITHUB_ACTIONS squawk may print them to stdout too.
  const r = await localProcessRunner.run({
    command: [binary, ...args],
    cwd,
    env: childEnv({ SQUAWK_DISABLE_GITHUB_ANNOTATIONS: '1', NO_COLOR: '1' }),
    timeoutMs,
    killGraceMs: 0,
    captureStdout: true,
    maxOutputBytes: 1024 * 1024,
  });
  if (r.notFound) {
    throw new ConsortError('internal', `Could not start squawk (${binary})`, { hint: INSTALL_HINT });
  }
  return {
    code: r.exitCode,
    signal: r.signal,
    stdout: r.stdout!.toString('utf8'),
    stderr: r.output,
    timedOut: r.timedOut,
  };
}

let versionCache: Promise<string> | undefined;

function squawkVersion(binary: string): Promise<string> {
  versionCache ??= runSquawk(binary, ['--version'], tmpdir(), DEFAULT_TIMEOUT_MS).then((r) => {
    const version = /squawk\s+(\S+)/.exec(r.stdout)?.[1];
    if (r.code !== 0 || version === undefined) {
      throw crashed('squawk --version', r);
    }
    return version;
  });
  // A failed probe must not poison later calls (e.g. after the user fixes the install).
  versionCache.catch(() => (versionCache = undefined));
  return versionCache;
}

function crashed(what: string, r: SquawkRun, cause?: unknown): ConsortError {
  const status = r.timedOut ? 'timed out' : `exited with ${r.code ?? r.signal ?? 'unknown status'}`;
  const detail = (r.stderr || r.stdout).trim().slice(0, 500);
  return new ConsortError('internal', `${what} ${status}${detail ? `: ${detail}` : ''}`, {
    hint: r.timedOut ? 'Raise the lint timeout, or lint fewer migrations at once.' : INSTALL_HINT,
    cause,
  });
}

function buildArgs(options: LintOptions, configPath: string): string[] {
  // An empty config file stops squawk from picking up a stray .squawk.toml above the temp dir:
  // the Consort config is the only source of lint settings.
  const args = ['--reporter', 'json', '--config', configPath];
  for (const rule of options.exclude ?? []) args.push(`--exclude=${rule}`);
  for (const rule of options.include ?? []) args.push(`--include=${rule}`);
  if (options.pgVersion !== undefined) args.push(`--pg-version=${options.pgVersion}`);
  if (options.assumeInTransaction !== undefined) {
    args.push(options.assumeInTransaction ? '--assume-in-transaction' : '--no-assume-in-transaction');
  }
  return args;
}

/** Squawk treats path arguments as glob patterns, so temp names keep to a glob-inert alphabet. */
function tempName(file: string, index: number): string {
  const safe = basename(file).replace(/[^A-Za-z0-9._-]/g, '_');
  return `${String(index).padStart(4, '0')}-${safe}${safe.endsWith('.sql') ? '' : '.sql'}`;
}

/** Converts squawk's byte offset to a 0-based string column, splitting lines exactly as squawk does. */
function charColumn(sql: string, line: number, byteColumn: number): number {
  const text = sql.split(/\r\n|\r|\n/)[line] ?? '';
  return Buffer.from(text, 'utf8').subarray(0, byteColumn).toString('utf8').length;
}

/** The string offset in `sql` of squawk's (line, byte column). */
function offsetOf(sql: string, line: number, byteColumn: number): number {
  const breaks = /\r\n|\r|\n/g;
  let start = 0;
  for (let n = 0; n < line; n += 1) {
    const m = breaks.exec(sql);
    if (m === null) return sql.length;
    start = m.index + m[0].length;
  }
  return start + charColumn(sql, line, byteColumn);
}

function spanOf(v: SquawkViolation, sql: string): LintFinding['sqlSpan'] {
  if (v.line_end === undefined || v.column_end === undefined) return undefined;
  const start = offsetOf(sql, v.line, v.column);
  const end = offsetOf(sql, v.line_end, v.column_end);
  return end > start ? { start, end } : undefined;
}

/**
 * Squawk's help where it says something else than its fix: prefer-robust-stmts on a `CREATE INDEX`
 * that has a name but no `IF NOT EXISTS` (every index node-pg-migrate's createIndex makes) says to
 * name the index, while its fix, and the message, add `IF NOT EXISTS`.
 */
const HELP_FIXES: Record<string, Record<string, string>> = {
  'prefer-robust-stmts': {
    'Use an explicit name for a concurrently created index':
      "Add `IF NOT EXISTS` to the `CREATE INDEX` (node-pg-migrate's createIndex: `ifNotExists: true`).",
  },
};

function toFinding(v: SquawkViolation, input: LintInput): LintFinding {
  const sqlSpan = spanOf(v, input.sql);
  const help = v.help === null ? null : (HELP_FIXES[v.rule_name]?.[v.help] ?? v.help);
  return {
    rule: v.rule_name,
    level: v.level === 'Error' ? 'error' : 'warning',
    message: v.message,
    ...(help === null ? {} : { help }),
    file: input.file,
    line: v.line + 1 + (input.lineOffset ?? 0),
    column: charColumn(input.sql, v.line, v.column) + 1,
    ...(sqlSpan ? { sqlSpan } : {}),
  };
}

function validateInputs(inputs: LintInput[]): void {
  for (const input of inputs) {
    const offset = input.lineOffset ?? 0;
    if (!Number.isInteger(offset) || offset < 0) {
      throw new ConsortError('invalid-input', `Invalid lineOffset ${offset} for ${input.file}`, {
        hint: 'lineOffset is the number of lines before the SQL in the file: a non-negative integer.',
      });
    }
  }
}

export async function lintMigrations(inputs: LintInput[], options: LintOptions = {}): Promise<LintResult> {
  validateInputs(inputs);
  const binary = await resolveSquawkBinary();
  const version = await squawkVersion(binary);
  if (inputs.length === 0) return { findings: [], squawkVersion: version };

  const dir = await mkdtemp(join(tmpdir(), 'consort-squawk-'));
  try {
    const names = inputs.map((input, i) => tempName(input.file, i));
    const configPath = join(dir, 'consort-empty.toml');
    await writeFile(configPath, '');
    await Promise.all(
      names.map((name, i) => writeFile(join(dir, name), (inputs[i]?.sql ?? '').replace(/\r\n?/g, '\n'))),
    );

    const r = await runSquawk(
      binary,
      [...buildArgs(options, configPath), '--', ...names],
      dir,
      options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
    if (r.code === 2 && !r.timedOut) {
      throw new ConsortError('config', `squawk rejected the lint settings: ${r.stderr.trim().split('\n')[0] ?? ''}`, {
        hint: 'Check lint.rules and the Postgres version in the Consort config; rule names are listed at https://squawkhq.com/docs/rules',
      });
    }
    if (r.code !== 0 && r.code !== 1) throw crashed('squawk', r);

    let violations: SquawkViolation[];
    try {
      violations = squawkReport.parse(JSON.parse(r.stdout));
    } catch (cause) {
      throw crashed('squawk', r, cause);
    }
    // Exit 1 with nothing reported means squawk failed before linting (e.g. a file it could not read).
    if (r.code === 1 && violations.length === 0) throw crashed('squawk', r);

    const indexByName = new Map(names.map((name, i) => [name, i]));
    const located = violations.map((v) => {
      const index = indexByName.get(basename(v.file));
      const input = index === undefined ? undefined : inputs[index];
      if (index === undefined || input === undefined) {
        throw new ConsortError('internal', `squawk reported a file it was not given: ${v.file}`, {
          hint: INSTALL_HINT,
        });
      }
      return { index, finding: toFinding(v, input) };
    });
    located.sort(
      (a, b) =>
        a.index - b.index ||
        a.finding.line - b.finding.line ||
        (a.finding.column ?? 0) - (b.finding.column ?? 0) ||
        a.finding.rule.localeCompare(b.finding.rule),
    );
    return { findings: located.map((l) => l.finding), squawkVersion: version };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The Linter port's adapter: Squawk. */
export const squawkLinter: Linter = { lint: lintMigrations };
