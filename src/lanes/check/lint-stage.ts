/**
 * Lint the new migrations. SQL files are linted as written (their Up section), so findings point
 * at real file lines; JS/TS migrations are linted on the SQL they sent when applied.
 */
import type { ConsortConfig } from '../../config/schema.js';
import { applySeverity, lintVerdict } from '../../lint/policy.js';
import { lintMigrations, type LintInput } from '../../lint/squawk.js';
import type { MigrationFile } from '../../migrations/files.js';
import { parseSqlSections } from '../../migrations/files.js';
import type { AppliedMigration } from '../../migrations/runner.js';
import type { Stages } from '../../report/check-report.js';

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
  const findings = applySeverity(result.findings, config.lint.severity);
  const verdict = lintVerdict(findings, config.lint.failOn);
  const blocking = new Set(verdict.blocking);
  const errors = findings.filter((f) => f.level === 'error').length;
  const summary = findings.length === 0
    ? `${inputs.length} migration(s) clean`
    : `${findings.length} finding(s): ${errors} error(s), ${findings.length - errors} warning(s)${verdict.passed ? '' : `; ${verdict.blocking.length} blocking`}`;
  return {
    status: verdict.passed ? 'passed' : 'failed',
    summary,
    findings: findings.map((f) => ({ ...f, blocking: blocking.has(f) })),
    squawkVersion: result.squawkVersion,
  };
}
