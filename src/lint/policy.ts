/**
 * Lint policy: which findings block a PR under the configured `lint.failOn` threshold.
 *
 * Squawk reports every rule violation as a warning and only SQL it cannot parse as an error, so
 * `failOn: 'error'` blocks on syntax errors alone; `'warning'` is what makes rule findings block.
 */
import type { LintFinding, LintLevel } from './squawk.js';

export type LintFailOn = LintLevel | 'none';

export interface LintVerdict {
  /** Findings at or above the threshold, in the order given. */
  blocking: LintFinding[];
  passed: boolean;
}

const RANK: Record<LintLevel, number> = { warning: 1, error: 2 };
const THRESHOLD: Record<LintFailOn, number> = { warning: 1, error: 2, none: Number.POSITIVE_INFINITY };

export function lintVerdict(findings: readonly LintFinding[], failOn: LintFailOn): LintVerdict {
  const threshold = THRESHOLD[failOn];
  const blocking = findings.filter((f) => RANK[f.level] >= threshold);
  return { blocking, passed: blocking.length === 0 };
}
