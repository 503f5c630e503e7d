import { renderCheckTerminal } from '../../src/report/terminal.js';
import { errorReport } from '../fixtures/reports/error.js';
import { failingReport } from '../fixtures/reports/failing.js';
import { hugeReport } from '../fixtures/reports/huge.js';
import { passingReport } from '../fixtures/reports/passing.js';

// eslint-disable-next-line no-control-regex -- stripping SGR codes to compare with plain output
const plain = (s: string): string => s.replace(/\u001b\[\d+m/g, '');

describe('renderCheckTerminal snapshots', () => {
  it.each([
    ['passing', passingReport],
    ['failing', failingReport],
    ['error', errorReport],
  ] as const)('%s report', (_name, report) => {
    expect(renderCheckTerminal(report)).toMatchSnapshot();
  });

  it('failing report in color', () => {
    expect(renderCheckTerminal(failingReport, { color: true })).toMatchSnapshot();
  });
});

describe('renderCheckTerminal', () => {
  it('has one line per stage with its symbol and time', () => {
    const lines = renderCheckTerminal(failingReport).split('\n').slice(2, 9);
    expect(lines.map((l) => l.slice(0, 26))).toEqual([
      '  ✗ Migration plan     14m',
      '  ✓ Baseline           2.3',
      '  ✗ Apply migrations   96m',
      '  ✗ Lint              380m',
      '  ✗ Reversibility     903m',
      '  ✓ Schema diff       150m',
      '  ✗ Test suite          19',
    ]);
    expect(renderCheckTerminal(errorReport)).toContain('  ! Baseline            30s');
    expect(renderCheckTerminal(errorReport)).toContain('  – Lint                  –  Not run');
  });

  it('ends with the conclusion and how to reach the database branch', () => {
    const last = (s: string): string | undefined => s.trimEnd().split('\n').at(-1);
    expect(last(renderCheckTerminal(passingReport))).toBe(
      '✓ Database checks passed · database branch pr-42 · consort branch url pr-42',
    );
    expect(last(renderCheckTerminal(failingReport))).toBe(
      '✗ Database checks failed — 4 failing stages · database branch pr-42 · consort branch url pr-42',
    );
    expect(last(renderCheckTerminal(errorReport))).toBe('! Database checks could not run');
  });

  it('names the working tree as changes on its commit, not as a commit of the same sha as the base', () => {
    const sha = passingReport.base.sha!;
    const report = { ...passingReport, head: { ...passingReport.head, ref: 'working tree', sha } };
    const first = renderCheckTerminal(report).split('\n')[0]!;
    expect(first).toContain(
      `working tree (changes on ${sha.slice(0, 7)}) → ${passingReport.base.ref} @ ${sha.slice(0, 7)}`,
    );
  });

  it('uses ANSI colors only when asked, with the same text', () => {
    const colored = renderCheckTerminal(failingReport, { color: true });
    expect(renderCheckTerminal(failingReport)).not.toContain('\u001b[');
    expect(colored).toContain('\u001b[31m✗\u001b[39m');
    expect(plain(colored)).toBe(renderCheckTerminal(failingReport));
  });

  it('fits stage lines and prose into the width', () => {
    for (const width of [60, 80, 120]) {
      const lines = renderCheckTerminal(failingReport, { width }).split('\n');
      const stages = lines.slice(2, 9);
      const plan = lines
        .slice(lines.indexOf('Migration plan') + 1, lines.indexOf('Failed migration') - 1)
        .filter((l) => !l.startsWith('    $ '));
      expect(plan.length).toBeGreaterThan(5);
      expect([...stages, ...plan].filter((l) => [...l].length > width)).toEqual([]);
    }
  });

  it("puts the suite's command on a line of its own, whole, when it timed out", () => {
    const command = 'node --experimental-vm-modules ../../node_modules/jest/bin/jest.js --ci --runInBand';
    const report = structuredClone(failingReport);
    report.stages.suite = {
      ...report.stages.suite,
      command,
      exitCode: null,
      timedOut: true,
      tests: null,
      failures: [],
      outputTail: '',
      summary: 'timed out after 5m; the whole process group was killed',
    };
    const section = (width: number) => {
      const text = renderCheckTerminal(report, { width });
      return text.slice(text.indexOf('\nTest suite\n') + 1).split('\n\n')[0];
    };
    expect(section(100)).toBe(`Test suite\n  $ ${command}\n  Timed out.`);
    // Where the stage line clips the summary, the section gives it whole.
    expect(section(80)).toBe(`Test suite\n  $ ${command}\n  Timed out after 5m; the whole process group was killed.`);
  });

  it('gives a suite summary the stage line clipped whole, so its fix is not cut off', () => {
    const summary =
      'package.json has no `test` script, so `npm test` ran no tests: add the script, or set suite.command in the Consort configuration to the command that runs your tests';
    const report = structuredClone(failingReport);
    report.stages.suite = { ...report.stages.suite, exitCode: 1, tests: null, failures: [], outputTail: '', summary };
    const text = renderCheckTerminal(report);
    expect(text).toMatch(/ Test suite .*…\n/);
    const section = text.slice(text.indexOf('\nTest suite\n') + 1).split('\n\n')[0]!;
    expect(section.replace(/\n {4}/g, ' ')).toContain(
      'or set suite.command in the Consort configuration to the command that runs your tests.',
    );
    for (const line of section.split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  });

  it("gives the suite's counts on the line after its command", () => {
    const text = renderCheckTerminal(failingReport, { width: 60 });
    expect(text).toContain(
      'Test suite\n  $ npm test\n  Exited with code 1: 1 failed, 1 errored, 115 passed, 3\n    skipped of 120 tests.\n',
    );
  });

  it('stays compact for a huge report, pointing to the JSON report for the rest', () => {
    const text = renderCheckTerminal(hugeReport);
    expect(text.split('\n').length).toBeLessThan(700);
    expect(text).toContain('  … and 4,950 more');
    expect(text).toMatch(/… [\d,]+ more lines in the JSON report\n {2}│ /);
    const lastOutputLine = hugeReport.stages.suite.outputTail.split('\n').at(-1) ?? '';
    expect(text).toContain(`  │ ${lastOutputLine}\n\n✗ Database checks failed`);
  });

  it("keeps a not-restored verdict's schema diff one object a line", () => {
    const report = structuredClone(failingReport);
    const restored = report.stages.reversibility.migrations.find((m) => m.verdict === 'not-restored');
    restored!.detail = [
      'after down, the schema differs from before up:',
      '+ index public.orders_status_idx',
      '+ column public.orders.status text',
      'its down\'s DROP INDEX IF EXISTS "orders_orders_status_idx_index" dropped nothing: there was no index of that name',
    ].join('\n');
    const text = renderCheckTerminal(report, { width: 200 });
    expect(text).toContain('down did not restore the schema — after down, the schema differs from before up:');
    expect(text).toContain(
      '\n      + index public.orders_status_idx\n      + column public.orders.status text\n      its down',
    );
  });

  it('marks a declared-irreversible migration ✗ only when it fails the stage (reversibility.requireDown)', () => {
    const report = structuredClone(failingReport);
    const stage = report.stages.reversibility;
    stage.migrations.push({
      name: '20250503000000000_backfill',
      file: 'migrations/20250503000000000_backfill.js',
      verdict: 'irreversible',
      detail: 'declared irreversible (down = false)',
    });
    const line = (text: string) => text.split('\n').find((l) => l.includes('20250503000000000_backfill.js'));
    stage.summary = '2 migrations do not reverse: …; 1 declared irreversible: 20250503000000000_backfill';
    expect(line(renderCheckTerminal(report, { width: 200 }))).toBe(
      '  · migrations/20250503000000000_backfill.js: irreversible (marked so) — declared irreversible (down = false)',
    );
    expect(renderCheckTerminal(report, { width: 200 })).toContain('  ✗ migrations/20250502090000000_add_index.sql');
    stage.summary =
      '3 migrations do not reverse: …; 1 declared irreversible (reversibility.requireDown: true): 20250503000000000_backfill';
    expect(line(renderCheckTerminal(report, { width: 200 }))).toMatch(
      /^ {2}✗ migrations\/20250503000000000_backfill\.js/,
    );
  });

  it('counts notes apart from findings in the lint heading, as the lint stage does', () => {
    const report = structuredClone(failingReport);
    const [noted] = report.stages.lint.findings;
    noted!.blocking = false;
    noted!.note = 'the table is created in this pull request';
    const blocking = report.stages.lint.findings.filter((f) => f.blocking).length;
    expect(renderCheckTerminal(report)).toContain(`Lint: 2 findings and 1 note, ${blocking} blocking`);
  });
});
