/**
 * Judging RED and GREEN from the suite's normalized results — the conductor's proofs, not the
 * agents' claims. RED: the item's new or changed tests fail, by an assertion (`failed`), not by a
 * load, syntax, import or collection error (`errored` / `loadError`), and every test that passed
 * before still passes. A new test that passes before any implementation is born green. GREEN: the
 * whole suite passes, every test that passed at the last green proof still ran (and is not skipped,
 * unless the navigator's RED turn changed its file), and the frozen test files are byte-for-byte
 * (normalized) what RED proved.
 */
import type { ProofOutcome, ProofTest } from './events.js';
import { count } from '../core/plural.js';

const MAX_OUTPUT = 4000;

export type RedVerdict =
  | { verdict: 'red'; tests: string[]; failing: ProofTest[] }
  | { verdict: 'born-green' | 'wrong-reason' | 'no-tests' | 'regression'; reason: string; tests: string[] }
  | { verdict: 'broken'; reason: string; tests: string[] };

export type GreenVerdict =
  | { verdict: 'green'; passing: string[] }
  | { verdict: 'failing'; reason: string; failing: ProofTest[] }
  | { verdict: 'tampered'; reason: string; paths: string[] }
  | { verdict: 'broken'; reason: string };

function sameFile(testFile: string | undefined, changed: string): boolean {
  if (testFile === undefined) return false;
  const a = testFile.replace(/^\.\//, '');
  return a === changed || a.endsWith(`/${changed}`) || changed.endsWith(`/${a}`);
}

function describe(tests: readonly ProofTest[], max = 5): string {
  const shown = tests
    .slice(0, max)
    .map((t) => `${t.id}${t.message ? ` (${t.message.split('\n')[0]!.slice(0, 160)})` : ''}`);
  return `${shown.join('; ')}${tests.length > max ? `; and ${tests.length - max} more` : ''}`;
}

/** The tail of the suite output a repair turn sees. */
export function boundedOutput(output: string): string {
  return output.length <= MAX_OUTPUT ? output : output.slice(-MAX_OUTPUT);
}

/**
 * Tests the report names alike (`test::works` in two files: node --test's JUnit reporter on Node 20
 * names no file) are told apart by their order only (`test::works#2`), so a new test of the same
 * name in a file listed earlier takes the id of one that passed: say so, or the navigator is told
 * it broke a test it never touched.
 */
function sharedIdNote(regressions: readonly ProofTest[], tests: readonly ProofTest[]): string {
  const shared = regressions.filter((r) => tests.some((t) => t.id === `${r.id}#2`)).map((r) => r.id);
  if (shared.length === 0) return '';
  return `${shared.slice(0, 5).join(', ')} ${shared.length === 1 ? 'is the name of more than one test' : 'are names of more than one test'} in the JUnit report, told apart only by their order, so a new test named alike can take the id of one that passed: give the new test a name no other test has`;
}

export interface RedInput {
  outcome: ProofOutcome;
  /** Ids that passed at the last green proof (or the baseline). */
  passing: readonly string[];
  /** Test files the RED turn added or changed. */
  testFiles: readonly string[];
  rejectBornGreen: boolean;
}

export function judgeRed(input: RedInput): RedVerdict {
  const { outcome } = input;
  if (outcome.kind === 'broken')
    return {
      verdict: 'broken',
      reason: `the suite could not be judged (${outcome.reason}): ${outcome.message}`,
      tests: [],
    };
  const before = new Set(input.passing);
  const inChangedFile = (t: ProofTest) => input.testFiles.some((f) => sameFile(t.file, f));
  // The item's tests: every test in a file the navigator changed, and any test never seen passing.
  const item = outcome.tests.filter((t) => inChangedFile(t) || !before.has(t.id));
  const ids = item.map((t) => t.id);
  const broken = outcome.tests.filter((t) => t.loadError || t.state === 'errored');
  if (broken.length > 0) {
    return {
      verdict: 'wrong-reason',
      reason: `red for the wrong reason: ${describe(broken)} did not load or run (a syntax, import or collection error, or an exception instead of an assertion failure)`,
      tests: ids,
    };
  }
  // Per test: a <failure> is not an assertion failure when what failed it was an exception.
  const thrown = item.filter((t) => t.state === 'failed' && t.exception);
  if (thrown.length > 0) {
    return {
      verdict: 'wrong-reason',
      reason: `red for the wrong reason: ${thrown
        .slice(0, 5)
        .map((t) => `${t.id} threw ${t.exception}`)
        .join(
          '; ',
        )} instead of failing an assertion (make the code under test exist, e.g. a stub, so the test fails on what it asserts)`,
      tests: ids,
    };
  }
  // A test that passed before and fails now, outside the files the navigator changed, is a regression.
  const regressions = outcome.tests.filter((t) => before.has(t.id) && !inChangedFile(t) && t.state === 'failed');
  const missing = [...before].filter((id) => !outcome.tests.some((t) => t.id === id));
  // One skipped now is one no longer held, in the navigator's files too: an old test whose behaviour
  // the item changes is changed in the open (and fails here), never skipped for GREEN to get past.
  const skipped = outcome.tests.filter((t) => before.has(t.id) && t.state === 'skipped');
  if (regressions.length > 0 || missing.length > 0 || skipped.length > 0) {
    const what = [
      regressions.length ? `${describe(regressions)} passed before and fail now` : '',
      missing.length ? `${missing.slice(0, 5).join(', ')} no longer ran` : '',
      skipped.length
        ? `${describe(skipped)} passed before and ${skipped.length === 1 ? 'is' : 'are'} skipped now (change a test whose behaviour the item changes; do not skip it)`
        : '',
      sharedIdNote(regressions, outcome.tests),
    ]
      .filter(Boolean)
      .join('; ');
    return { verdict: 'regression', reason: `previously passing tests must still pass: ${what}`, tests: ids };
  }
  const failing = item.filter((t) => t.state === 'failed');
  if (item.length === 0)
    return {
      verdict: 'no-tests',
      reason: 'no new or changed test ran: the suite did not pick up the test the navigator wrote',
      tests: ids,
    };
  if (failing.length === 0) {
    // A skipped test proves nothing, whatever the born-green policy says.
    if (item.every((t) => t.state === 'skipped'))
      return {
        verdict: 'no-tests',
        reason: `the new tests are skipped, so nothing is proven: ${describe(item)}`,
        tests: ids,
      };
    if (!input.rejectBornGreen) return { verdict: 'red', tests: ids, failing: [] };
    return {
      verdict: 'born-green',
      reason: `born green: ${describe(item)} passed before any implementation, so they do not test the new behaviour`,
      tests: ids,
    };
  }
  // Born green is judged per test: a new test that passes next to one that fails proves nothing either.
  const bornGreen = item.filter((t) => !before.has(t.id) && (t.state === 'passed' || t.state === 'skipped'));
  if (bornGreen.length > 0 && input.rejectBornGreen) {
    return {
      verdict: 'born-green',
      reason: `born green: ${describe(bornGreen)} passed (or were skipped) before any implementation, next to failing tests; every new test must fail on its own`,
      tests: ids,
    };
  }
  if (outcome.exitCode === 0)
    return {
      verdict: 'wrong-reason',
      reason: 'the suite reported failing tests but exited 0; it cannot prove red',
      tests: ids,
    };
  return { verdict: 'red', tests: ids, failing };
}

export interface GreenInput {
  outcome: ProofOutcome;
  /** The item's tests (from RED): they must be present and pass. */
  itemTests: readonly string[];
  frozen: Readonly<Record<string, string>>;
  /** Ids that passed at the last green proof (or the baseline): they must still run, and not be skipped. */
  passing?: readonly string[];
}

export function frozenChanges(
  frozen: Readonly<Record<string, string>>,
  hashes: Readonly<Record<string, string | null>>,
): string[] {
  return Object.entries(frozen)
    .filter(([path, hash]) => path in hashes && hashes[path] !== hash)
    .map(([path]) => path)
    .sort();
}

export function judgeGreen(input: GreenInput): GreenVerdict {
  const { outcome } = input;
  const tampered = frozenChanges(input.frozen, outcome.hashes);
  if (tampered.length > 0)
    return { verdict: 'tampered', reason: `test files frozen at RED changed: ${tampered.join(', ')}`, paths: tampered };
  if (outcome.kind === 'broken') {
    if (outcome.reason === 'migrations')
      return { verdict: 'failing', reason: `the migrations do not apply: ${outcome.message}`, failing: [] };
    return { verdict: 'broken', reason: `the suite could not be judged (${outcome.reason}): ${outcome.message}` };
  }
  const failing = outcome.tests.filter((t) => t.state === 'failed' || t.state === 'errored');
  if (failing.length > 0)
    return {
      verdict: 'failing',
      reason: `${count(failing.length, 'test')} ${failing.length === 1 ? 'fails' : 'fail'}: ${describe(failing)}`,
      failing,
    };
  // As at RED: a test that passed before must still run, and not be skipped, wherever it is (a
  // skip in the navigator's file may be one that only the implementation sets off).
  const ran = new Map(outcome.tests.map((t) => [t.id, t]));
  const missing = (input.passing ?? []).filter((id) => !ran.has(id));
  const skipped = (input.passing ?? []).filter((id) => ran.get(id)?.state === 'skipped');
  if (missing.length > 0 || skipped.length > 0) {
    const what = [
      missing.length ? `${missing.slice(0, 5).join(', ')} no longer ran` : '',
      skipped.length ? `${skipped.slice(0, 5).join(', ')} are skipped now` : '',
    ]
      .filter(Boolean)
      .join('; ');
    return { verdict: 'failing', reason: `previously passing tests must still pass: ${what}`, failing: [] };
  }
  const absent = input.itemTests.filter((id) => !outcome.tests.some((t) => t.id === id && t.state === 'passed'));
  if (absent.length > 0)
    return {
      verdict: 'failing',
      reason: `the item's tests did not pass: ${absent.slice(0, 5).join(', ')}`,
      failing: [],
    };
  if (outcome.exitCode !== 0)
    return {
      verdict: 'failing',
      reason: `every test passed but the suite exited ${outcome.exitCode ?? 'by a signal'}`,
      failing: [],
    };
  return { verdict: 'green', passing: outcome.tests.filter((t) => t.state === 'passed').map((t) => t.id) };
}

/**
 * RED's tree, proven again beside GREEN: every test that failed at RED must fail again there. One
 * that passes (or is skipped, or did not run) without the implementation was not made to pass by
 * it — a test that reads the clock (`Date.now() > T`), the environment, or a counter an earlier run
 * left in the home folder or `/tmp` fails at RED and passes at GREEN whatever the driver wrote.
 * Run at the same moment as GREEN, on a fresh branch, a time bomb set for after RED has gone off
 * for both. Null when RED holds.
 */
export function judgeRecheck(
  redFailing: readonly string[],
  outcome: ProofOutcome,
  beside: 'GREEN' | 'REFACTOR' = 'GREEN',
): string | null {
  const what =
    'so RED does not hold: a test must fail on what it asserts about the code, not on the time, the environment or what an earlier run left behind';
  if (outcome.kind === 'broken')
    return `RED's tree, proven again beside ${beside}, could not be judged (${outcome.reason}): ${outcome.message.slice(0, 300)}; ${what}`;
  const ran = new Map(outcome.tests.map((t) => [t.id, t.state]));
  const held = redFailing.filter((id) => {
    const state = ran.get(id);
    return state !== 'failed' && state !== 'errored';
  });
  if (held.length === 0) return null;
  const shown = held
    .slice(0, 5)
    .map((id) => `${id} (${ran.get(id) ?? 'did not run'})`)
    .join(', ');
  return `the item's tests no longer fail without the implementation: on RED's tree, proven again beside ${beside}, ${shown}${held.length > 5 ? ` and ${held.length - 5} more` : ''}, ${what}`;
}

/** Before the first cycle the suite must be green, or no RED could be told from a broken suite. */
export function judgeBaseline(outcome: ProofOutcome): GreenVerdict {
  return judgeGreen({ outcome, itemTests: [], frozen: {} });
}
