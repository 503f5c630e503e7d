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

describe('applySeverity', () => {
  const base = { message: 'm', file: 'a.sql', line: 1 };
  it('raises dangerous rules to error, keeps advice as warnings, honours overrides', async () => {
    const { applySeverity } = await import('../../src/lint/policy.js');
    const findings = [
      { ...base, rule: 'adding-required-field', level: 'warning' as const },
      { ...base, rule: 'prefer-robust-stmts', level: 'warning' as const },
      { ...base, rule: 'require-concurrent-index-creation', level: 'warning' as const },
      { ...base, rule: 'syntax-error', level: 'error' as const },
    ];
    expect(applySeverity(findings).map((f) => f.level)).toEqual(['error', 'warning', 'error', 'error']);
    expect(
      applySeverity(findings, { 'require-concurrent-index-creation': 'warning', 'prefer-robust-stmts': 'error' }).map(
        (f) => f.level,
      ),
    ).toEqual(['error', 'error', 'warning', 'error']);
  });
});
