/** CheckReport → file annotations: red where the merge is blocked, yellow otherwise. */
import { checkAnnotations, MAX_ANNOTATIONS } from '../../src/report/annotations.js';
import { makeReport, passingStages } from '../fixtures/reports/build.js';
import { failingReport } from '../fixtures/reports/failing.js';

describe('checkAnnotations', () => {
  it("puts a passing report's non-blocking lint finding on its line as a warning", () => {
    expect(checkAnnotations(makeReport())).toEqual([
      {
        level: 'warning',
        file: 'migrations/20250501120000000_create_orders.sql',
        line: 4,
        column: 3,
        title: 'squawk: prefer-bigint-over-int',
        message:
          'Using 32-bit integer fields can result in hitting the max `int` limit.\nUse 64-bit integer values instead to prevent hitting this limit.',
      },
    ]);
  });

  it('annotates plan problems, the failed migration, blocking lint findings and bad reversals', () => {
    const all = checkAnnotations(failingReport);
    const titles = all.map((a) => `${a.level} ${a.title} ${a.file}${a.line ? `:${a.line}` : ''}`);
    expect(titles).toEqual(
      expect.arrayContaining([
        'error Consort: order-conflict migrations/20250401000000000_add_orders.sql',
        'error Consort: history-rewritten migrations/20250101000000000_init.sql',
        'error Consort: invalid-name migrations/add_notes.sql',
      ]),
    );
    expect(all.find((a) => a.title === 'Consort: order-conflict')!.message).toContain(
      'Rename it to migrations/20250415093000001_add_orders.sql',
    );
    const failure = failingReport.stages.migrations.failure!;
    expect(all).toContainEqual(
      expect.objectContaining({
        level: 'error',
        title: 'Consort: migration failed',
        file: failure.file,
        message: expect.stringContaining(failure.message),
      }),
    );
    for (const f of failingReport.stages.lint.findings) {
      expect(all).toContainEqual(
        expect.objectContaining({
          level: f.blocking ? 'error' : 'warning',
          file: f.file,
          line: f.line,
          title: `squawk: ${f.rule}`,
        }),
      );
    }
    // parent-ahead is about the database, not a file: no annotation.
    expect(all.some((a) => a.title.includes('parent-ahead'))).toBe(false);
  });

  it('marks a failed reversal red only when reversibility blocks', () => {
    const stages = passingStages();
    const bad = {
      name: 'm1',
      file: 'migrations/1_m1.sql',
      verdict: 'not-restored' as const,
      detail: 'column x remained',
    };
    const blocking = makeReport({
      stages: { reversibility: { ...stages.reversibility, blocking: true, status: 'failed', migrations: [bad] } },
    });
    const advisory = makeReport({
      stages: { reversibility: { ...stages.reversibility, blocking: false, status: 'failed', migrations: [bad] } },
    });
    const pick = (r: typeof blocking) => checkAnnotations(r).find((a) => a.file === bad.file);
    expect(pick(blocking)).toEqual({
      level: 'error',
      file: bad.file,
      title: 'Consort: not reversible (not-restored)',
      message: 'column x remained',
    });
    expect(pick(advisory)!.level).toBe('warning');
  });

  it("stops at GitHub's limit", () => {
    const stages = passingStages();
    const finding = stages.lint.findings[0]!;
    const many = makeReport({
      stages: {
        lint: { ...stages.lint, findings: Array.from({ length: 80 }, (_, i) => ({ ...finding, line: i + 1 })) },
      },
    });
    expect(checkAnnotations(many)).toHaveLength(MAX_ANNOTATIONS);
  });
});
