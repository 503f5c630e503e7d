/**
 * Lint policy: the level of each finding, and which findings block a PR.
 *
 * Squawk reports every rule violation as a warning. Rules differ a lot in what they protect
 * against, so Consort raises the ones that lock a busy table, break running code or lose data to
 * `error` by default (what blocks under the default `failOn: error`) and leaves the advice
 * (timeouts, IF NOT EXISTS, bigint, …) as warnings. `lint.severity` overrides per rule.
 */
import type { LintFinding, LintLevel } from './squawk.js';

export type LintFailOn = LintLevel | 'none';

/** Rules whose violation means downtime, broken deploys or data loss on a real database. */
export const DANGEROUS_RULES: readonly string[] = [
  'adding-required-field',
  'adding-not-nullable-field',
  'adding-field-with-default',
  'adding-foreign-key-constraint',
  'adding-serial-primary-key-field',
  'ban-char-field',
  'ban-drop-column',
  'ban-drop-database',
  'ban-drop-table',
  'ban-drop-not-null',
  'ban-truncate-cascade',
  'changing-column-type',
  'constraint-missing-not-valid',
  'disallowed-unique-constraint',
  'renaming-column',
  'renaming-table',
  'require-concurrent-index-creation',
  'require-concurrent-index-deletion',
  'syntax-error',
];

export interface LintVerdict {
  /** Findings at or above the threshold, in the order given. */
  blocking: LintFinding[];
  passed: boolean;
}

/** Apply default and configured per-rule levels (syntax errors always stay errors). */
export function applySeverity(
  findings: readonly LintFinding[],
  overrides: Readonly<Record<string, LintLevel>> = {},
): LintFinding[] {
  return findings.map((f) => {
    if (f.level === 'error') return f;
    const level = overrides[f.rule] ?? (DANGEROUS_RULES.includes(f.rule) ? 'error' : 'warning');
    return level === f.level ? f : { ...f, level };
  });
}

const RANK: Record<LintLevel, number> = { warning: 1, error: 2 };
const THRESHOLD: Record<LintFailOn, number> = { warning: 1, error: 2, none: Number.POSITIVE_INFINITY };

export function lintVerdict(findings: readonly LintFinding[], failOn: LintFailOn): LintVerdict {
  const threshold = THRESHOLD[failOn];
  const blocking = findings.filter((f) => RANK[f.level] >= threshold);
  return { blocking, passed: blocking.length === 0 };
}
