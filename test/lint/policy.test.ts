import { lintVerdict, type LintFailOn } from '../../src/lint/policy.js';
import type { LintFinding } from '../../src/lint/squawk.js';

const finding = (rule: string, level: LintFinding['level']): LintFinding => ({
  rule,
  level,
  message: `${rule} message`,
  file: 'm.sql',
  line: 1,
});

const warning = finding('require-concurrent-index-creation', 'warning');
const error = finding('syntax-error', 'error');
const other = finding('adding-required-field', 'warning');

describe('lintVerdict', () => {
  it.each<[string, LintFinding[], LintFailOn, LintFinding[], boolean]>([
    ['no findings, failOn error', [], 'error', [], true],
    ['no findings, failOn warning', [], 'warning', [], true],
    ['no findings, failOn none', [], 'none', [], true],
    ['warnings only, failOn error', [warning, other], 'error', [], true],
    ['warnings only, failOn warning', [warning, other], 'warning', [warning, other], false],
    ['warnings only, failOn none', [warning, other], 'none', [], true],
    ['mixed, failOn error', [warning, error, other], 'error', [error], false],
    ['mixed, failOn warning', [warning, error, other], 'warning', [warning, error, other], false],
    ['mixed, failOn none', [warning, error, other], 'none', [], true],
    ['error only, failOn warning', [error], 'warning', [error], false],
  ])('%s', (_name, findings, failOn, blocking, passed) => {
    expect(lintVerdict(findings, failOn)).toEqual({ blocking, passed });
  });

  it('does not mutate its input', () => {
    const findings = [warning, error];
    lintVerdict(findings, 'error');
    expect(findings).toEqual([warning, error]);
  });
});
