import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isConsortError } from '../../src/core/errors.js';
import {
  JUnitError,
  mergeSuiteResults,
  parseJUnit,
  readJUnitReports,
  summarizeSuite,
  type SuiteResult,
  type TestCaseResult,
} from '../../src/suite/junit.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/junit/', import.meta.url));

async function fixture(name: string): Promise<SuiteResult> {
  return parseJUnit(await readFile(path.join(FIXTURES, name), 'utf8'), name);
}

function caseNamed(result: SuiteResult, name: string): TestCaseResult {
  const found = result.suites.flatMap((s) => s.tests).find((t) => t.name === name);
  if (!found) throw new Error(`no test named ${name}`);
  return found;
}

async function parseError(run: () => unknown): Promise<JUnitError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof JUnitError) return error;
    throw error;
  }
  throw new Error('expected a JUnitError');
}

describe('parseJUnit: jest-junit', () => {
  it('normalizes states, messages, ids and durations', async () => {
    const result = await fixture('jest-junit.xml');
    expect(result.totals).toEqual({ passed: 2, failed: 1, errored: 1, skipped: 1, total: 5 });
    expect(result.durationMs).toBe(2318);
    expect(result.suites.map((s) => s.name)).toEqual(['accounts repository', 'test/orders.test.ts']);
    expect(caseNamed(result, 'accounts repository creates an account')).toEqual({
      id: 'accounts repository creates an account::accounts repository creates an account',
      name: 'accounts repository creates an account',
      classname: 'accounts repository creates an account',
      state: 'passed',
      durationMs: 182,
    });
    const failed = caseNamed(result, 'accounts repository rejects a duplicate email');
    expect(failed).toMatchObject({
      state: 'failed',
      message: 'Error: expect(received).rejects.toThrow()',
      durationMs: 47,
    });
    expect(failed.loadError).toBeUndefined();
    expect(failed.details).toContain('Resolved to value: {"email": "a@example.com", "id": 2}');
    expect(caseNamed(result, 'accounts repository archives an account').state).toBe('skipped');
  });

  it('marks a suite that failed to compile as a load error', async () => {
    const broken = caseNamed(await fixture('jest-junit.xml'), 'test/orders.test.ts');
    expect(broken).toMatchObject({ state: 'errored', loadError: true, message: '● Test suite failed to run' });
    expect(broken.details).toContain("has no exported member 'placeOrder'");
  });

  it('treats the older <failure> shape of a suite that failed to run as errored, not failed', async () => {
    const result = await fixture('jest-junit-suite-failure.xml');
    expect(result.totals).toMatchObject({ failed: 0, errored: 1, total: 1 });
    expect(caseNamed(result, 'test/payments.test.js')).toMatchObject({ state: 'errored', loadError: true });
  });
});

describe('parseJUnit: pytest', () => {
  it('separates assertion failures, setup errors, skips and collection errors', async () => {
    const result = await fixture('pytest.xml');
    expect(result.totals).toEqual({ passed: 2, failed: 1, errored: 2, skipped: 2, total: 7 });
    expect(result.durationMs).toBe(873);
    expect(caseNamed(result, 'test_remove_item_below_zero')).toMatchObject({
      id: 'tests.test_inventory::test_remove_item_below_zero',
      state: 'failed',
      message: "AssertionError: assert 3 == 2\n +  where 3 = stock_of('widget')",
    });
    expect(caseNamed(result, 'test_bulk_import')).toMatchObject({
      state: 'skipped',
      type: 'pytest.skip',
      message: 'needs the S3 fixture',
    });
    expect(caseNamed(result, 'test_negative_stock_rejected')).toMatchObject({ state: 'skipped', type: 'pytest.xfail' });
    const setup = caseNamed(result, 'test_audit_log');
    expect(setup).toMatchObject({
      state: 'errored',
      message: 'failed on setup with "psycopg.OperationalError: connection refused"',
    });
    expect(setup.loadError).toBeUndefined();
  });

  it('reports a module that failed to import as a load error without a classname', async () => {
    const collection = caseNamed(await fixture('pytest.xml'), 'tests.test_shipping');
    expect(collection).toMatchObject({
      id: 'pytest::tests.test_shipping',
      state: 'errored',
      loadError: true,
      message: 'collection failure',
    });
    expect(collection.classname).toBeUndefined();
    expect(collection.details).toContain("ImportError: cannot import name 'quote'");
  });
});

describe('parseJUnit: Maven surefire', () => {
  it('reads a single <testsuite> root with failure types, and counts a flaky pass as passed', async () => {
    const result = await fixture('surefire/TEST-com.example.bank.AccountTest.xml');
    expect(result.totals).toEqual({ passed: 2, failed: 1, errored: 1, skipped: 1, total: 5 });
    expect(result.durationMs).toBe(1_204_310);
    expect(caseNamed(result, 'withdrawRejectsOverdraft')).toMatchObject({
      state: 'failed',
      type: 'org.opentest4j.AssertionFailedError',
      message: 'expected: <100> but was: <90>',
    });
    expect(caseNamed(result, 'persistsToDatabase')).toMatchObject({
      state: 'errored',
      type: 'org.postgresql.util.PSQLException',
    });
    expect(caseNamed(result, 'interestAccruesMonthly')).toMatchObject({
      state: 'skipped',
      message: 'not implemented yet',
    });
    expect(caseNamed(result, 'statementIsOrdered').state).toBe('passed');
  });

  it('marks a class that could not initialize as a load error', async () => {
    const result = await fixture('surefire/TEST-com.example.bank.LedgerTest.xml');
    expect(caseNamed(result, 'initializationError')).toMatchObject({
      state: 'errored',
      loadError: true,
      type: 'java.lang.NoClassDefFoundError',
    });
  });
});

describe('parseJUnit: other shapes', () => {
  it('flattens nested suites and numbers repeated ids', async () => {
    const result = await fixture('nested.xml');
    expect(result.suites.map((s) => [s.name, s.tests.length])).toEqual([
      ['Tests\\Unit\\PriceTest', 1],
      ['Tests\\Unit\\PriceTest::testFormats', 2],
    ]);
    expect(result.suites[0]?.file).toBe('/app/tests/Unit/PriceTest.php');
    expect(result.totals.passed).toBe(3);
    expect(result.durationMs).toBe(51);

    const twice = parseJUnit(
      '<testsuite name="s"><testcase classname="c" name="t"/><testcase classname="c" name="t"><failure/></testcase></testsuite>',
      'dup.xml',
    );
    expect(twice.suites[0]?.tests.map((t) => [t.id, t.state])).toEqual([
      ['c::t', 'passed'],
      ['c::t#2', 'failed'],
    ]);
    expect(twice.durationMs).toBe(0);
  });

  it('turns a suite that reports errors but has no test cases into one load error', () => {
    const result = parseJUnit(
      '<testsuites><testsuite name="test/db.test.ts" tests="0" errors="1" time="0.2"/></testsuites>',
      'x.xml',
    );
    expect(result.suites[0]?.tests).toEqual([
      expect.objectContaining({
        id: 'test/db.test.ts::(suite)',
        state: 'errored',
        loadError: true,
        message: 'suite reported 1 error but no test cases',
      }),
    ]);
    const empty = parseJUnit('<testsuites><testsuite name="none" tests="0" errors="0"/></testsuites>', 'y.xml');
    expect(empty.totals.total).toBe(0);
  });

  it('bounds long failure text', () => {
    const long = 'x'.repeat(10_000);
    const result = parseJUnit(
      `<testsuite><testcase name="t"><failure message="m">${long}</failure></testcase></testsuite>`,
      'z.xml',
    );
    const details = result.suites[0]?.tests[0]?.details ?? '';
    expect(details.length).toBeLessThan(4100);
    expect(details).toMatch(/\[\.\.\. 6000 more characters\]$/);
    expect(result.suites[0]?.name).toBe('z.xml');
  });
});

describe('parseJUnit: bad input', () => {
  it('names the file and the line of malformed XML', async () => {
    const error = await parseError(() => fixture('malformed.xml'));
    expect(error).toBeInstanceOf(JUnitError);
    expect(isConsortError(error, 'invalid-input')).toBe(true);
    expect(error.source).toBe('malformed.xml');
    expect(error.message).toMatch(/^JUnit report malformed\.xml is not well-formed XML \(line \d+\)/);
    expect(error.hint).toBeTruthy();
  });

  it.each([
    ['', /is empty/],
    ['   \n', /is empty/],
    ['not xml at all', /not well-formed/],
    ['<coverage line-rate="0.8"><packages/></coverage>', /not a JUnit report/],
  ])('rejects %j', async (xml, message) => {
    const error = await parseError(() => parseJUnit(xml, 'r.xml'));
    expect(error.message).toMatch(message);
  });

  it('rejects valid XML of another format', async () => {
    const error = await parseError(() => fixture('not-junit.xml'));
    expect(error.message).toContain('not-junit.xml is not a JUnit report');
  });
});

describe('readJUnitReports', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'consort-junit-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('merges every report a glob matches', async () => {
    const result = await readJUnitReports('surefire/TEST-*.xml', FIXTURES);
    expect(result.suites.map((s) => s.name)).toEqual(['com.example.bank.AccountTest', 'com.example.bank.LedgerTest']);
    expect(result.totals).toEqual({ passed: 2, failed: 1, errored: 2, skipped: 1, total: 6 });
    expect(result.durationMs).toBe(1_204_313);
    expect(summarizeSuite(result)).toBe('2 passed, 1 failed, 2 errored, 1 skipped');
  });

  it('accepts several patterns and keeps ids unique across files', async () => {
    const one = '<testsuite name="s"><testcase classname="c" name="t"/></testsuite>';
    await writeFile(path.join(dir, 'a.xml'), one);
    await writeFile(path.join(dir, 'b.xml'), one);
    const result = await readJUnitReports(['a.xml', 'b.xml'], dir);
    expect(result.suites.flatMap((s) => s.tests.map((t) => t.id))).toEqual(['c::t', 'c::t#2']);
  });

  it('fails with a typed error when nothing matches', async () => {
    const error = await parseError(() => readJUnitReports('reports/**/*.xml', dir));
    expect(error.message).toBe(`No JUnit report found at reports/**/*.xml (in ${dir}).`);
    expect(error.hint).toMatch(/JUnit XML/);
  });

  it('ignores reports older than the run', async () => {
    const file = path.join(dir, 'junit.xml');
    await writeFile(file, '<testsuite><testcase name="t"/></testsuite>');
    const past = new Date(Date.now() - 60_000);
    await utimes(file, past, past);
    const error = await parseError(() => readJUnitReports('*.xml', dir, { newerThan: new Date(Date.now() - 1000) }));
    expect(error.message).toContain('1 older report(s) ignored');
    const fresh = await readJUnitReports('*.xml', dir, { newerThan: new Date(Date.now() - 120_000) });
    expect(fresh.totals.passed).toBe(1);
  });

  it('refuses a report that is a link to a FIFO (a suite can leave one) instead of waiting on it for good', async () => {
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    await symlink('pipe', path.join(dir, 'junit.xml'));
    const error = await parseError(() => readJUnitReports('junit.xml', dir));
    expect(error.message).toBe('Cannot read JUnit report junit.xml: Error: not a regular file');
  });

  it('names the malformed file among several', async () => {
    await writeFile(path.join(dir, 'good.xml'), '<testsuite><testcase name="t"/></testsuite>');
    await writeFile(path.join(dir, 'partial.xml'), '<testsuite><testcase name="t">');
    const error = await parseError(() => readJUnitReports('*.xml', dir));
    expect(error.source).toBe('partial.xml');
  });
});

describe('summaries', () => {
  it('merges results and summarizes them in one line', () => {
    const a = parseJUnit(
      '<testsuite time="1"><testcase name="a"/><testcase name="b"><skipped/></testcase></testsuite>',
      'a.xml',
    );
    const b = parseJUnit('<testsuite time="2"><testcase name="c"><error/></testcase></testsuite>', 'b.xml');
    const merged = mergeSuiteResults([a, b]);
    expect(merged.durationMs).toBe(3000);
    expect(summarizeSuite(merged)).toBe('1 passed, 0 failed, 1 errored, 1 skipped');
  });
});
