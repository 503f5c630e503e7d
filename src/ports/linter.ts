/**
 * Linting migrations: the SQL each migration produced, in, findings located in the original files,
 * out. The adapter is src/lint/squawk.ts (squawkLinter: the Squawk binary of `squawk-cli`); what a
 * finding means for the check (severity, verdict, notes) is pure and stays in src/lint/.
 */

export type LintLevel = 'error' | 'warning';

export interface LintFinding {
  rule: string;
  level: LintLevel;
  message: string;
  help?: string;
  file: string;
  /** 1-based line in the original migration file. */
  line: number;
  /** 1-based column, counted in JavaScript string units (UTF-16), as editors and GitHub do. */
  column?: number;
  /**
   * What squawk's span covers in the linted SQL (`LintInput.sql`), as 0-based string offsets
   * `[start, end)`: a column's type, a clause of an ALTER TABLE, or the whole statement. It tells
   * apart findings of one rule on one statement (one per column). Never reported.
   */
  sqlSpan?: { start: number; end: number };
}

export interface LintResult {
  findings: LintFinding[];
  squawkVersion: string;
}

export interface LintInput {
  file: string;
  sql: string;
  /** Lines in the original file before `sql` starts (e.g. an Up section that begins later). */
  lineOffset?: number;
}

export interface LintOptions {
  exclude?: string[];
  /** Opt-in rules that squawk leaves off by default (e.g. `require-table-schema`). */
  include?: string[];
  pgVersion?: string;
  assumeInTransaction?: boolean;
  timeoutMs?: number;
}

export interface Linter {
  lint(inputs: LintInput[], options?: LintOptions): Promise<LintResult>;
}
