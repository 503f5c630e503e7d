/**
 * RED for the right reason, per test: a new test that throws (ReferenceError, TypeError, NameError…)
 * instead of failing an assertion is the wrong reason, whatever the report calls it; a born-green
 * test next to a failing one is still born green. Reports are real where the runner is at hand
 * (node:test, jest through the shop's reporter) and the documented shapes otherwise (vitest, mocha,
 * jest-junit, pytest).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { failureException } from '../../src/conductor/failure-kind.js';
import { judgeRed } from '../../src/conductor/proofs.js';
import type { ProofTest } from '../../src/conductor/events.js';
import { readJUnitReports } from '../../src/suite/junit.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;

describe('failureException', () => {
  it.each([
    ['vitest assertion', { type: 'AssertionError', message: 'expected 1 to be 2' }, null],
    ['vitest TypeError', { type: 'TypeError', message: 'setPhone is not a function' }, 'TypeError'],
    ['mocha ReferenceError', { type: 'ReferenceError', message: 'setPhone is not defined' }, 'ReferenceError'],
    ['jest (Consort reporter) matcher', { type: 'AssertionError', message: 'expect(received).toBe(expected)' }, null],
    [
      'jest-junit assertion',
      {
        message: 'Error: expect(received).toBe(expected)',
        details: 'Error: expect(received).toBe(expected)\n\nExpected: 2',
      },
      null,
    ],
    [
      'jest-junit TypeError',
      {
        message: 'TypeError: customers.setPhone is not a function',
        details: 'TypeError: customers.setPhone is not a function\n    at Object.<anonymous>',
      },
      'TypeError',
    ],
    ['pytest NameError', { type: 'NameError', message: "NameError: name 'set_phone' is not defined" }, 'NameError'],
    ['pytest assert', { type: 'AssertionError', message: 'assert 1 == 2' }, null],
    ['JUnit 5', { type: 'org.opentest4j.AssertionFailedError', message: 'expected: <1> but was: <2>' }, null],
    ['Java NPE', { type: 'java.lang.NullPointerException' }, 'NullPointerException'],
    ['a bare Error cannot be told apart', { type: 'Error', message: 'boom' }, null],
  ])('%s', (_name, facts, expected) => {
    expect(failureException(facts)).toBe(expected);
  });

  it('reads node:test reports, which wrap every failure in ERR_TEST_FAILURE', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-nodetest-'));
    try {
      await writeFile(
        path.join(dir, 'x.test.mjs'),
        [
          "import { describe, test } from 'node:test';",
          "import assert from 'node:assert/strict';",
          "describe('phones', () => {",
          "  test('asserts', () => { assert.equal(1, 2); });",
          "  test('throws', () => { setPhone(); });",
          "  test('calls what is not a function', () => { const m = {}; m.setPhone(); });",
          '});',
        ].join('\n'),
      );
      await exec(
        process.execPath,
        ['--test', '--test-reporter=junit', '--test-reporter-destination=junit.xml', 'x.test.mjs'],
        { cwd: dir },
      ).catch(() => undefined);
      const result = await readJUnitReports('junit.xml', dir);
      const byName = Object.fromEntries(
        result.suites.flatMap((s) => s.tests).map((t) => [t.name, failureException(t)]),
      );
      expect(byName).toEqual({ asserts: null, throws: 'ReferenceError', 'calls what is not a function': 'TypeError' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

const run = (tests: ProofTest[]) => ({ kind: 'ran' as const, exitCode: 1, tests, summary: '', output: '', hashes: {} });

describe('judgeRed, per test', () => {
  const input = (tests: ProofTest[]) => ({
    outcome: run(tests),
    passing: ['old::a'],
    testFiles: ['test/phones.test.js'],
    rejectBornGreen: true,
  });
  const old: ProofTest = { id: 'old::a', state: 'passed', file: 'test/old.test.js' };

  it('accepts new tests that each fail by an assertion', () => {
    expect(judgeRed(input([old, { id: 'p::T1', state: 'failed', file: 'test/phones.test.js' }])).verdict).toBe('red');
  });

  it('refuses a test that fails by a ReferenceError, next to one that fails properly', () => {
    const v = judgeRed(
      input([
        old,
        { id: 'p::T1', state: 'failed', file: 'test/phones.test.js' },
        { id: 'p::T2', state: 'failed', file: 'test/phones.test.js', exception: 'ReferenceError' },
      ]),
    );
    expect(v).toMatchObject({ verdict: 'wrong-reason' });
    expect(v.verdict === 'wrong-reason' && v.reason).toContain('p::T2 threw ReferenceError');
  });

  it('refuses a born-green test next to a failing one', () => {
    const v = judgeRed(
      input([
        old,
        { id: 'p::T1', state: 'failed', file: 'test/phones.test.js' },
        { id: 'p::T1b', state: 'passed', file: 'test/phones.test.js' },
      ]),
    );
    expect(v).toMatchObject({ verdict: 'born-green' });
    expect(v.verdict === 'born-green' && v.reason).toContain('p::T1b');
  });

  it('says so when a new test named like a passing one takes its id (a report without files)', () => {
    // node --test's JUnit reporter on Node 20 names no file: a new test named like one that passed,
    // in a file listed before it, is reported first, so the old one becomes `test::works#2`.
    const v = judgeRed({
      outcome: run([
        { id: 'test::works', state: 'failed', message: 'expected 1' },
        { id: 'test::works#2', state: 'passed' },
      ]),
      passing: ['test::works'],
      testFiles: ['test/a-new.test.js'],
      rejectBornGreen: true,
    });
    expect(v.verdict).toBe('regression');
    expect(v.verdict === 'regression' && v.reason).toContain(
      'test::works is the name of more than one test in the JUnit report, told apart only by their order',
    );
    // A plain regression says nothing of the kind.
    const plain = judgeRed(
      input([
        { ...old, state: 'failed' },
        { id: 'p::T1', state: 'failed', file: 'test/phones.test.js' },
      ]),
    );
    expect(plain.verdict === 'regression' && plain.reason).not.toContain('more than one test');
  });

  it('refuses an old test the navigator skipped, in a file it changed as much as elsewhere', () => {
    const inItsFile: ProofTest = { id: 'p::old', state: 'skipped', file: 'test/phones.test.js' };
    const v = judgeRed({
      ...input([old, inItsFile, { id: 'p::T1', state: 'failed', file: 'test/phones.test.js' }]),
      passing: ['old::a', 'p::old'],
    });
    expect(v.verdict).toBe('regression');
    expect(v.verdict === 'regression' && v.reason).toContain('p::old passed before and is skipped now');
    const elsewhere = judgeRed(
      input([
        { ...old, state: 'skipped' },
        { id: 'p::T1', state: 'failed', file: 'test/phones.test.js' },
      ]),
    );
    expect(elsewhere.verdict).toBe('regression');
  });

  it('keeps an old test in the changed file that still passes out of it', () => {
    const kept: ProofTest = { id: 'p::kept', state: 'passed', file: 'test/phones.test.js' };
    const v = judgeRed({
      ...input([old, kept, { id: 'p::T1', state: 'failed', file: 'test/phones.test.js' }]),
      passing: ['old::a', 'p::kept'],
    });
    expect(v.verdict).toBe('red');
  });
});
