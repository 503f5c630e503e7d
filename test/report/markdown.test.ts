import { renderCheckMarkdown } from '../../src/report/markdown.js';
import { makeReport, passingStages } from '../fixtures/reports/build.js';
import { errorReport } from '../fixtures/reports/error.js';
import { failingReport } from '../fixtures/reports/failing.js';
import { passingReport } from '../fixtures/reports/passing.js';
import { parseBlocks, tables } from './markdown-structure.js';

const RUN = 'https://github.com/acme/shop/actions/runs/123456';

describe('renderCheckMarkdown snapshots', () => {
  it.each([
    ['passing', passingReport],
    ['failing', failingReport],
    ['error', errorReport],
  ] as const)('%s report', (_name, report) => {
    expect(renderCheckMarkdown(report, { links: { run: RUN } })).toMatchSnapshot();
  });
});

describe('renderCheckMarkdown', () => {
  it('opens with the status and a one-line verdict', () => {
    expect(renderCheckMarkdown(passingReport)).toMatch(/^## ✅ Consort: database checks passed\n/);
    expect(renderCheckMarkdown(failingReport)).toMatch(/^## ❌ Consort: database checks failed — 4 failing stages\n/);
    expect(renderCheckMarkdown(errorReport)).toMatch(/^## ⚠️ Consort: database checks could not run\n/);
  });

  it('counts a failed non-blocking stage as a warning, not a failure', () => {
    const stages = passingStages();
    const report = makeReport({
      stages: { reversibility: { ...stages.reversibility, status: 'failed', migrations: [] } },
    });
    const md = renderCheckMarkdown(report);
    expect(md).toMatch(/^## ✅ Consort: database checks passed with 1 warning\n/);
    expect(md).toContain('| Reversibility | ⚠️ failed (non-blocking) |');
  });

  it('uses the title option in the heading', () => {
    expect(renderCheckMarkdown(passingReport, { title: 'Consort (analytics DB)' })).toMatch(
      /^## ✅ Consort \(analytics DB\): database checks passed\n/,
    );
  });

  it('shows base, head, PR, database branch and provider', () => {
    const line = renderCheckMarkdown(passingReport).split('\n')[2];
    expect(line).toBe(
      '**Base** <code>main</code> @ <code>1a2b3c4</code> ← **head** <code>feature/orders</code> @ <code>9f8e7d6</code> · PR #42 · database branch <code>pr-42</code> · provider <code>local</code> (reflink)',
    );
  });

  it('has a stage table with a row per stage', () => {
    const [table] = tables(parseBlocks(renderCheckMarkdown(failingReport)).prose);
    expect(table?.map((row) => row[0]?.trim())).toEqual([
      'Stage',
      'Migration plan',
      'Baseline',
      'Apply migrations',
      'Lint',
      'Reversibility',
      'Schema diff',
      'Test suite',
    ]);
    expect(table?.[3]).toEqual([
      ' Apply migrations ',
      ' ❌ failed ',
      ' 96ms ',
      expect.stringContaining('does not exist'),
    ]);
  });

  it('shows only the sections that need attention on a passing report', () => {
    const md = renderCheckMarkdown(passingReport);
    for (const heading of [
      '### Migration plan',
      '### Failed migration',
      '### Reversibility',
      '### Test suite',
      'could not run',
    ]) {
      expect(md).not.toContain(heading);
    }
    expect(md).toContain('### Lint: 1 finding, 0 blocking');
    expect(md).toContain('<details><summary>3 added, 0 removed, 1 changed</summary>');
  });

  it('gives the exact rename commands for plan problems a rename fixes', () => {
    const { blocks } = parseBlocks(renderCheckMarkdown(failingReport));
    expect(blocks.find((b) => b.lang === 'sh')?.body).toBe(
      [
        'git mv migrations/20250401000000000_add_orders.sql migrations/20250415093000001_add_orders.sql',
        'git mv migrations/20250502090000000_add_index.sql migrations/20250502090000001_add_index.sql',
      ].join('\n'),
    );
  });

  it("tells the reader of a parent ahead of base what they can do: the CLI's flag, the Action's input, no App route", () => {
    const parentAhead = (reader?: 'cli' | 'action' | 'app') =>
      renderCheckMarkdown(failingReport, reader ? { reader } : {})
        .split('\n\n')
        .find((p) => p.startsWith('**Parent ahead:**'))!;
    expect(parentAhead()).toContain('run <code>consort check --rebuild-baseline</code>');
    expect(parentAhead('cli')).toBe(parentAhead());
    expect(parentAhead('action')).toContain("set <code>rebuild-baseline: true</code> on the workflow's Consort step");
    expect(parentAhead('action')).not.toContain('consort check');
    const app = parentAhead('app');
    expect(app).toContain('commit them to the base branch as migrations, or undo them on the parent database');
    expect(app).toContain('the App always builds the baseline on the parent');
    expect(app).not.toMatch(/\brun <code>|\bset <code>|\/consort/);
  });

  it('shows the failing statement, where it is, and the Postgres error', () => {
    const md = renderCheckMarkdown(failingReport);
    const { blocks } = parseBlocks(md);
    expect(md).toContain('failed at <code>migrations/20250502090000000\\_add\\_order\\_status.sql:3</code>');
    expect(blocks.find((b) => b.lang === 'sql')?.body).toBe(failingReport.stages.migrations.failure?.statement);
    expect(blocks.map((b) => b.body)).toContain('ERROR 42704: type "order_status" does not exist');
  });

  it('lists blocking lint findings first, and only the irreversible migrations', () => {
    const [, lint, reversibility] = tables(parseBlocks(renderCheckMarkdown(failingReport)).prose);
    expect(lint?.slice(1).map((r) => r[3]?.trim())).toEqual(['❌ yes', '❌ yes', 'no']);
    expect(reversibility?.slice(1).map((r) => r[1]?.trim())).toEqual([
      'no down migration',
      'down did not restore the schema',
    ]);
  });

  it('puts the suite output inside <details> in a code block', () => {
    const md = renderCheckMarkdown(failingReport);
    expect(md).toContain('<details><summary>Output (last 7 lines)</summary>\n\n```text\n FAIL  test/orders.test.ts\n');
  });

  it('states the error and the hint when the check could not run', () => {
    const md = renderCheckMarkdown(errorReport);
    expect(md).toContain('### ⚠️ The check could not run');
    expect(md).toContain('**What to do:** Stop the other server on port 54329');
    expect(md).not.toContain('database branch');
  });

  it('links the run only when it is an http(s) URL, encoding what would end the link', () => {
    expect(renderCheckMarkdown(passingReport, { links: { run: 'javascript:alert(1)' } })).not.toContain('javascript');
    expect(renderCheckMarkdown(passingReport, { links: { run: 'https://example.com/a)(b' } })).toContain(
      '[workflow run](https://example.com/a%29%28b)',
    );
  });

  it('is a pure function of the report', () => {
    expect(renderCheckMarkdown(failingReport)).toBe(renderCheckMarkdown(structuredClone(failingReport)));
    expect(renderCheckMarkdown(failingReport)).not.toMatch(/\d{4}-\d{2}-\d{2}/);
  });

  it("keeps a reversibility detail's lines apart in its cell", () => {
    const report = structuredClone(failingReport);
    const restored = report.stages.reversibility.migrations.find((m) => m.verdict === 'not-restored');
    restored!.detail =
      'after down, the schema differs from before up:\n+ index public.orders_status_idx\n+ column public.orders.status text';
    expect(renderCheckMarkdown(report)).toContain(
      '| after down, the schema differs from before up:<br>\\+ index public.orders\\_status\\_idx<br>\\+ column public.orders.status text |',
    );
  });
});
