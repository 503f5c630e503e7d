import type { CheckReport } from '../../src/report/check-report.js';
import { renderCheckMarkdown } from '../../src/report/markdown.js';
import { makeReport } from '../fixtures/reports/build.js';
import { failingReport } from '../fixtures/reports/failing.js';
import { hostileReport } from '../fixtures/reports/hostile.js';
import { hugeReport } from '../fixtures/reports/huge.js';
import { parseBlocks, tables } from './markdown-structure.js';

const VERDICT = '## ❌ Consort: database checks failed — 2 failing stages';
const STAGES = ['Migration plan', 'Baseline', 'Apply migrations', 'Lint', 'Reversibility', 'Schema diff', 'Test suite'];
const h = hugeReport.stages;
const n = (x: number): string => x.toLocaleString('en-US');
const TAIL_LINES = n(h.suite.outputTail.split('\n').length);
const DIFF_LINES = n(h.schemaDiff.text.split('\n').length);

/** The huge report with only some of its bulk, to see which detail goes first. */
function bulk(parts: { tail?: boolean; diff?: boolean; findings?: boolean }): CheckReport {
  const f = failingReport.stages;
  return makeReport({
    stages: {
      ...f,
      lint: parts.findings === true ? h.lint : f.lint,
      schemaDiff: parts.diff === true ? h.schemaDiff : f.schemaDiff,
      suite: parts.tail === true ? { ...f.suite, outputTail: h.suite.outputTail } : f.suite,
    },
  });
}

function stageTable(md: string): string[] {
  const [first] = tables(parseBlocks(md).prose);
  return (first ?? []).slice(1).map((row) => row[0]?.trim() ?? '');
}

describe('renderCheckMarkdown size limit', () => {
  it.each([65_536, 20_000, 2_000])(
    'keeps the huge report under %i characters with the verdict and the stage table',
    (maxChars) => {
      const md = renderCheckMarkdown(hugeReport, { maxChars });
      expect(md.length).toBeLessThanOrEqual(maxChars);
      expect(md.startsWith(`${VERDICT}\n`)).toBe(true);
      expect(stageTable(md)).toEqual(STAGES);
      expect(md).toContain(`_Shortened to stay under ${maxChars.toLocaleString('en-US')} characters. Left out: `);
      expect(() => parseBlocks(md)).not.toThrow();
    },
  );

  it('defaults to 60,000 characters', () => {
    const md = renderCheckMarkdown(hugeReport);
    expect(md.length).toBeLessThanOrEqual(60_000);
    expect(md.length).toBeGreaterThan(50_000);
  });

  it('first cuts the suite output to its last lines, keeping everything else', () => {
    const md = renderCheckMarkdown(bulk({ tail: true }), { maxChars: 30_000 });
    const lastLine = h.suite.outputTail.split('\n').at(-1) ?? '';
    expect(md.length).toBeLessThanOrEqual(30_000);
    expect(md).toMatch(new RegExp(`<summary>Output \\(last [\\d,]+ of ${TAIL_LINES} lines\\)</summary>`));
    expect(parseBlocks(md).blocks.at(-1)?.body.endsWith(lastLine)).toBe(true);
    expect(md).toContain('### Lint: 3 findings, 2 blocking');
    expect(md).toContain('```diff\n+ enum public.order_status');
    expect(md).toMatch(new RegExp(`Left out: [\\d,]+ of ${TAIL_LINES} suite output lines\\._`));
  });

  it('then drops the output and cuts the schema diff to its first lines', () => {
    const md = renderCheckMarkdown(bulk({ tail: true, diff: true }), { maxChars: 30_000 });
    expect(md.length).toBeLessThanOrEqual(30_000);
    expect(md).not.toContain('<summary>Output');
    expect(md).toMatch(new RegExp(`_Showing the first [\\d,]+ of ${DIFF_LINES} lines\\._`));
    expect(
      parseBlocks(md)
        .blocks.find((b) => b.lang === 'diff')
        ?.body.startsWith('+ column public.wide_table.column_00000 '),
    ).toBe(true);
    expect(md).toContain('### Lint: 3 findings, 2 blocking');
    expect(md).toMatch(new RegExp(`Left out: [\\d,]+ of ${DIFF_LINES} schema diff lines; the suite output\\._`));
  });

  it('then caps the lists, blocking findings first, saying how many are missing', () => {
    const md = renderCheckMarkdown(bulk({ tail: true, diff: true, findings: true }), { maxChars: 30_000 });
    const [, lint] = tables(parseBlocks(md).prose);
    expect(md.length).toBeLessThanOrEqual(30_000);
    expect(md).toContain(`${n(2000)} added, 0 removed, 0 changed (${DIFF_LINES} lines of diff left out)`);
    expect(lint?.length).toBeGreaterThan(50);
    expect(lint?.slice(1).every((row) => row[3]?.trim() === '❌ yes')).toBe(true);
    const shown = (lint?.length ?? 0) - 1;
    expect(md).toContain(`… and ${n(5000 - shown)} more lint findings`);
    expect(md).toContain(
      `Left out: ${n(5000 - shown)} of 5,000 lint findings; the schema diff text; the suite output._`,
    );
  });

  it('finally keeps only the summary table', () => {
    const md = renderCheckMarkdown(hugeReport, { maxChars: 1_200 });
    expect(md.length).toBeLessThanOrEqual(1_200);
    expect(stageTable(md)).toEqual(STAGES);
    expect(md).not.toContain('### ');
    expect(md).toContain('Left out: everything but the summary table._');
  });

  it.each([hugeReport, hostileReport, failingReport])(
    'never exceeds maxChars, down to absurdly small limits',
    (report) => {
      for (const maxChars of [40, 300, 1_000, 3_333, 8_000, 12_345, 40_000]) {
        expect(renderCheckMarkdown(report, { maxChars }).length).toBeLessThanOrEqual(maxChars);
      }
    },
  );

  it('leaves a report that fits untouched', () => {
    const md = renderCheckMarkdown(failingReport, { maxChars: 65_536 });
    expect(md).not.toContain('Shortened');
    expect(md).toBe(renderCheckMarkdown(failingReport));
  });
});
