/**
 * Lint the new migrations. SQL files are linted as written (their Up section), so findings point
 * at real file lines; JS/TS migrations are linted on the SQL they sent when applied.
 */
import type { ConsortConfig } from '../../config/schema.js';
import { count } from '../../core/plural.js';
import { applySeverity, lintVerdict } from '../../lint/policy.js';
import { lintMigrations, type LintFinding, type LintInput } from '../../lint/squawk.js';
import type { MigrationFile } from '../../migrations/files.js';
import { parseSqlSections } from '../../migrations/files.js';
import type { AppliedMigration } from '../../migrations/runner.js';
import type { Stages } from '../../report/check-report.js';

/**
 * One typo makes the parser report a syntax error at every statement after it; the first one in
 * each file is the one to fix, the rest are echoes of it.
 */
export function firstSyntaxErrors<F extends Pick<LintFinding, 'rule' | 'file' | 'line'>>(findings: readonly F[]): F[] {
  const first = new Map<string, F>();
  for (const f of findings) {
    if (f.rule !== 'syntax-error') continue;
    const seen = first.get(f.file);
    if (seen === undefined || f.line < seen.line) first.set(f.file, f);
  }
  return findings.filter((f) => f.rule !== 'syntax-error' || first.get(f.file) === f);
}

export async function lintStage(
  config: ConsortConfig,
  migrations: readonly MigrationFile[],
  applied: readonly AppliedMigration[],
  serverVersion: string,
): Promise<Pick<Stages['lint'], 'status' | 'summary' | 'findings' | 'squawkVersion'>> {
  const inputs: LintInput[] = [];
  for (const m of migrations) {
    if (m.kind === 'sql') {
      inputs.push({ file: m.file, sql: parseSqlSections(m.content).up, lineOffset: m.upSqlLineOffset ?? 0 });
    } else {
      const sent = applied.find((a) => a.name === m.name)?.sql ?? [];
      if (sent.length > 0) inputs.push({ file: m.file, sql: sent.map((s) => `${s.trim().replace(/;$/, '')};`).join('\n') });
    }
  }
  if (inputs.length === 0) return { status: 'passed', summary: 'nothing to lint', findings: [], squawkVersion: null };
  const result = await lintMigrations(inputs, { exclude: config.lint.rules, pgVersion: serverVersion, assumeInTransaction: true });
  const findings = applySeverity(firstSyntaxErrors(result.findings), config.lint.severity);
  const verdict = lintVerdict(findings, config.lint.failOn);
  const blocking = new Set(verdict.blocking);
  const errors = findings.filter((f) => f.level === 'error').length;
  const summary = findings.length === 0
    ? `${count(inputs.length, 'migration')} clean`
    : `${count(findings.length, 'finding')}: ${count(errors, 'error')}, ${count(findings.length - errors, 'warning')}${verdict.passed ? '' : `; ${verdict.blocking.length} blocking`}`;
  return {
    status: verdict.passed ? 'passed' : 'failed',
    summary,
    findings: findings.map((f) => ({ ...f, blocking: blocking.has(f) })),
    squawkVersion: result.squawkVersion,
  };
}
