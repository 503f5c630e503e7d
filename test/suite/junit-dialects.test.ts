/**
 * The JUnit dialects runners actually write, read from fixtures, and the fail-closed rule: a
 * report the suite wrote that yields no test is an error, never a pass. node-test.xml was written
 * by `node --test --test-reporter=junit` (Node 20), test cases straight under <testsuites>.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { JUnitError, parseJUnit, readJUnitReports, type SuiteResult } from '../../src/suite/junit.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/junit/', import.meta.url));
const parse = async (name: string): Promise<SuiteResult> =>
  parseJUnit(await readFile(path.join(FIXTURES, name), 'utf8'), name);
const states = (r: SuiteResult): Record<string, string> =>
  Object.fromEntries(r.suites.flatMap((s) => s.tests).map((t) => [t.name, t.state]));

describe('JUnit dialects', () => {
  it('node:test: top-level test cases directly under <testsuites>, describe blocks as suites', async () => {
    const r = await parse('node-test.xml');
    expect(r.totals).toEqual({ passed: 2, failed: 2, errored: 0, skipped: 1, total: 5 });
    expect(states(r)).toEqual({
      'creates an order': 'passed',
      'rejects a negative total': 'failed',
      refunds: 'skipped',
      'charges the card': 'passed',
      'throws on a missing card': 'failed',
    });
    const failed = r.suites.flatMap((s) => s.tests).find((t) => t.name === 'rejects a negative total')!;
    expect(failed.message).toBe('total must be positivefalse !== true');
    expect(failed.type).toBe('testCodeFailure');
    expect(r.suites.map((s) => s.name)).toEqual(['node-test.xml', 'checkout']);
  });

  it('vitest: file suites, "describe > test" names, failures and errors apart', async () => {
    const r = await parse('vitest.xml');
    expect(r.totals).toEqual({ passed: 2, failed: 1, errored: 1, skipped: 1, total: 5 });
    expect(states(r)['orders > rejects a duplicate']).toBe('errored');
    expect(r.suites.flatMap((s) => s.tests).find((t) => t.state === 'failed')).toMatchObject({
      id: 'src/cart.test.ts::cart > applies a coupon',
      message: 'expected 90 to be 80 // Object.is equality',
      type: 'AssertionError',
    });
    expect(r.durationMs).toBe(734);
  });

  it('mocha (mocha-junit-reporter): an empty Root Suite, CDATA failure text, file on the suite', async () => {
    const r = await parse('mocha.xml');
    expect(r.totals).toEqual({ passed: 1, failed: 1, errored: 0, skipped: 1, total: 3 });
    const failed = r.suites.flatMap((s) => s.tests).find((t) => t.state === 'failed')!;
    expect(failed.file).toBe('/home/runner/work/shop/shop/test/orders.spec.js');
    expect(failed.details).toContain('test/orders.spec.js:18:5');
  });

  it('go-junit-report: packages as suites, a build failure as a load error', async () => {
    const r = await parse('go-junit-report.xml');
    expect(r.totals).toEqual({ passed: 1, failed: 1, errored: 1, skipped: 1, total: 4 });
    const build = r.suites.flatMap((s) => s.tests).find((t) => t.name === '[build failed]')!;
    expect(build).toMatchObject({ state: 'errored', loadError: true, message: 'Failed' });
    expect(build.details).toContain('undefined: Money');
  });

  it.each([['jest-junit.xml'], ['pytest.xml'], ['surefire/TEST-com.example.bank.AccountTest.xml'], ['nested.xml']])(
    '%s yields test cases',
    async (name) => {
      const r = await parse(name);
      expect(r.totals.total).toBeGreaterThan(0);
      expect(r.totals.total).toBe(r.totals.passed + r.totals.failed + r.totals.errored + r.totals.skipped);
    },
  );

  it('refuses a report that declares tests but has none it can read', async () => {
    await expect(parse('unknown-dialect.xml')).rejects.toThrow(
      'JUnit report unknown-dialect.xml declares 2 tests but no <testcase> could be read from it.',
    );
  });
});

describe('a suite that ran and reported no tests fails closed', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'consort-junit-empty-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    [
      'node:test with no tests selected',
      '<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n\t<!-- tests 0 -->\n</testsuites>\n',
    ],
    [
      'an empty jest-junit report',
      '<testsuites name="jest tests" tests="0" failures="0" errors="0" time="0.1"></testsuites>',
    ],
    ['suites without cases', '<testsuites><testsuite name="a" tests="0"/><testsuite name="b" tests="0"/></testsuites>'],
  ])('%s', async (_label, xml) => {
    await writeFile(path.join(dir, 'junit.xml'), xml);
    const error = await readJUnitReports('junit.xml', dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JUnitError);
    expect((error as JUnitError).message).toBe(
      'The JUnit report(s) at junit.xml hold no test cases, though the suite ran.',
    );
    expect((error as JUnitError).hint).toMatch(/--test-reporter=junit/);
  });

  it('still passes a report with one test among empty ones', async () => {
    await writeFile(path.join(dir, 'a.xml'), '<testsuites><testsuite name="a" tests="0"/></testsuites>');
    await writeFile(path.join(dir, 'b.xml'), '<testsuites><testcase name="works" classname="test"/></testsuites>');
    const r = await readJUnitReports('*.xml', dir);
    expect(r.totals).toEqual({ passed: 1, failed: 0, errored: 0, skipped: 0, total: 1 });
  });
});
