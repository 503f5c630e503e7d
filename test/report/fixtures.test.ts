import { CheckReport, concludeStages } from '../../src/report/check-report.js';
import { errorReport } from '../fixtures/reports/error.js';
import { failingReport } from '../fixtures/reports/failing.js';
import { hostileReport } from '../fixtures/reports/hostile.js';
import { HUGE_DIFF_BYTES, HUGE_TAIL_BYTES, hugeReport } from '../fixtures/reports/huge.js';
import { passingReport } from '../fixtures/reports/passing.js';

describe('report fixtures', () => {
  it.each([
    ['passing', passingReport, 'success'],
    ['failing', failingReport, 'failure'],
    ['error', errorReport, 'error'],
    ['huge', hugeReport, 'failure'],
    ['hostile', hostileReport, 'failure'],
  ] as const)('%s is a valid CheckReport whose conclusion follows from its stages', (_name, report, conclusion) => {
    expect(CheckReport.parse(report)).toEqual(report);
    expect(report.conclusion).toBe(conclusion);
    expect(concludeStages(report.stages)).toBe(conclusion);
  });

  it('the failing fixture has every kind of plan problem and a failure in every checking stage', () => {
    const s = failingReport.stages;
    expect(s.plan.problems.map((p) => p.kind).sort()).toEqual([
      'duplicate-prefix',
      'history-rewritten',
      'invalid-name',
      'order-conflict',
      'parent-ahead',
    ]);
    expect(s.migrations.failure).toBeDefined();
    expect(s.lint.findings.some((f) => f.blocking)).toBe(true);
    expect(s.reversibility.migrations.some((m) => m.verdict !== 'reversible')).toBe(true);
    expect(s.suite.failures.map((f) => f.state).sort()).toEqual(['errored', 'failed']);
  });

  it('the huge fixture is as big as it claims', () => {
    expect(hugeReport.stages.lint.findings).toHaveLength(5000);
    expect(hugeReport.stages.suite.outputTail).toHaveLength(HUGE_TAIL_BYTES);
    expect(hugeReport.stages.schemaDiff.text).toHaveLength(HUGE_DIFF_BYTES);
  });
});
