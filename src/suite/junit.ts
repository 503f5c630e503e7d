/**
 * JUnit XML, the one result format every test runner can write (jest-junit, pytest --junitxml,
 * Maven surefire, go-junit-report...), normalized into one shape. The TDD conductor proves red
 * and green from this shape, so it keeps what separates "failed for the right reason" (an
 * assertion: `failed`) from "broken" (an exception, or a test file that never loaded: `errored`).
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import { ConsortError } from '../core/errors.js';
import { readRegularFile } from '../core/read-regular.js';
import { count } from '../core/plural.js';

export type TestState = 'passed' | 'failed' | 'errored' | 'skipped';

export interface TestCaseResult {
  /** Stable across runs: classname (or suite name) and test name; `#2`, `#3` for repeats. */
  id: string;
  name: string;
  classname?: string;
  file?: string;
  state: TestState;
  /** The test file itself failed to compile, import or collect: no test in it ran. */
  loadError?: boolean;
  message?: string;
  /** The failure's `type` attribute, e.g. `org.opentest4j.AssertionFailedError` or `pytest.skip`. */
  type?: string;
  /** The failure text (stack trace), bounded. */
  details?: string;
  durationMs: number;
}

export interface SuiteCase {
  name: string;
  file?: string;
  tests: TestCaseResult[];
}

export type SuiteTotals = Record<TestState | 'total', number>;

export interface SuiteResult {
  suites: SuiteCase[];
  totals: SuiteTotals;
  durationMs: number;
}

export class JUnitError extends ConsortError {
  /** The report file (or glob) at fault. */
  readonly source: string;

  constructor(message: string, options: { source: string; hint: string; cause?: unknown }) {
    super('invalid-input', message, options);
    this.name = 'JUnitError';
    this.source = options.source;
  }
}

const MAX_DETAILS = 4000;
const MAX_MESSAGE = 500;
const MAX_REPORT_BYTES = 64 * 1024 * 1024;
const FORMAT_HINT =
  'The suite must write JUnit XML (jest-junit, pytest --junitxml=..., Maven surefire); check suite.junit.';

const Attrs = z.record(z.string(), z.string());
const Outcome = z.object({ '#text': z.string().optional(), $: Attrs.optional() });
const Outcomes = z.array(Outcome).optional();
const Case = z.object({
  $: Attrs.optional(),
  failure: Outcomes,
  error: Outcomes,
  skipped: Outcomes,
  disabled: Outcomes,
});
type RawOutcome = z.infer<typeof Outcome>;
type RawCase = z.infer<typeof Case>;
interface RawSuite {
  $?: Record<string, string>;
  testcase?: RawCase[];
  testsuite?: RawSuite[];
  failure?: RawOutcome[];
  error?: RawOutcome[];
}
const Suite: z.ZodType<RawSuite> = z.lazy(() =>
  z.object({
    $: Attrs.optional(),
    testcase: z.array(Case).optional(),
    testsuite: z.array(Suite).optional(),
    failure: Outcomes,
    error: Outcomes,
  }),
);
const Root = z.object({
  // node:test's junit reporter puts top-level tests straight under <testsuites>.
  testsuites: z
    .object({ $: Attrs.optional(), testsuite: z.array(Suite).optional(), testcase: z.array(Case).optional() })
    .optional(),
  testsuite: z.array(Suite).optional(),
});

const ARRAYS = new Set(['testsuite', 'testcase', 'failure', 'error', 'skipped', 'disabled']);
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  attributesGroupName: '$',
  alwaysCreateTextNode: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // Numeric character references (&#10;) are common in pytest and surefire messages.
  htmlEntities: true,
  isArray: (name) => ARRAYS.has(name),
});

function bound(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[... ${text.length - max} more characters]`;
}

function seconds(value: string | undefined): number {
  const n = Number((value ?? '').replace(/,/g, ''));
  return Number.isFinite(n) && n > 0 ? Math.round(n * 1000) : 0;
}

function firstLine(text: string): string | undefined {
  return text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
}

function textOf(outcomes: RawOutcome[]): string {
  return outcomes
    .map((o) => (o['#text'] ?? '').trim())
    .filter((t) => t !== '')
    .join('\n\n');
}

/** Shapes runners use for "this file never ran": jest-junit, pytest, JUnit 4, go-junit-report, the JVM. */
function isLoadError(c: Record<string, string>, outcome: Record<string, string>, text: string): boolean {
  return (
    c.classname === 'Test suite failed to run' ||
    outcome.message === 'collection failure' ||
    ['initializationError', '[build failed]', '[setup failed]'].includes(c.name ?? '') ||
    /^(java\.lang\.)?(ExceptionInInitializerError|NoClassDefFoundError|ClassNotFoundException)$/.test(
      outcome.type ?? '',
    ) ||
    /^\s*(●\s*)?Test suite failed to run/.test(text)
  );
}

function normalizeCase(raw: RawCase, suite: { name: string; file?: string }): TestCaseResult {
  const attrs = raw.$ ?? {};
  const name = attrs.name ?? '(unnamed)';
  const classname = attrs.classname || undefined;
  const file = attrs.file ?? suite.file;
  const base = { id: `${classname ?? suite.name}::${name}`, name, classname, file, durationMs: seconds(attrs.time) };
  // An error outranks a failure: it means the test broke, whatever it also asserted.
  const [state, outcomes]: [TestState, RawOutcome[]] = raw.error?.length
    ? ['errored', raw.error]
    : raw.failure?.length
      ? ['failed', raw.failure]
      : raw.skipped?.length || raw.disabled?.length || /^(skipped|disabled|notrun)$/i.test(attrs.status ?? '')
        ? ['skipped', [...(raw.skipped ?? []), ...(raw.disabled ?? [])]]
        : ['passed', []];
  if (state === 'passed') return strip({ ...base, state });
  const first = outcomes[0]?.$ ?? {};
  const text = textOf(outcomes);
  const loadError = state !== 'skipped' && isLoadError(attrs, first, text);
  const message = first.message?.trim() || firstLine(text);
  return strip({
    ...base,
    state: loadError ? 'errored' : state,
    loadError: loadError || undefined,
    message: message === undefined ? undefined : bound(message, MAX_MESSAGE),
    type: first.type || undefined,
    details: text ? bound(text, MAX_DETAILS) : undefined,
  });
}

/** Drop `undefined` members so results compare and serialize cleanly. */
function strip<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** A suite that reports errors but holds no test case failed before any test could run. */
function suiteLoadError(raw: RawSuite, suite: { name: string; file?: string }): TestCaseResult | undefined {
  const outcomes = [...(raw.error ?? []), ...(raw.failure ?? [])];
  const errors = Number(raw.$?.errors ?? 0) + Number(raw.$?.failures ?? 0);
  if (outcomes.length === 0 && !(errors > 0)) return undefined;
  const text = textOf(outcomes);
  const message =
    outcomes[0]?.$?.message?.trim() || firstLine(text) || `suite reported ${count(errors, 'error')} but no test cases`;
  return strip({
    id: `${suite.name}::(suite)`,
    name: '(suite)',
    file: suite.file,
    state: 'errored' as const,
    loadError: true,
    message: bound(message, MAX_MESSAGE),
    type: outcomes[0]?.$?.type,
    details: text ? bound(text, MAX_DETAILS) : undefined,
    durationMs: 0,
  });
}

function collect(raw: RawSuite, parentName: string, out: SuiteCase[]): void {
  const name = raw.$?.name || parentName;
  const file = raw.$?.file ?? raw.$?.filepath;
  const suite = { name, ...(file ? { file } : {}) };
  const tests = (raw.testcase ?? []).map((c) => normalizeCase(c, suite));
  const children = raw.testsuite ?? [];
  if (tests.length === 0 && children.length === 0) {
    const failed = suiteLoadError(raw, suite);
    if (failed) tests.push(failed);
  }
  if (tests.length > 0 || children.length === 0) out.push({ ...suite, tests });
  for (const child of children) collect(child, name, out);
}

function totalsOf(suites: SuiteCase[]): SuiteTotals {
  const totals: SuiteTotals = { passed: 0, failed: 0, errored: 0, skipped: 0, total: 0 };
  for (const test of suites.flatMap((s) => s.tests)) {
    totals[test.state] += 1;
    totals.total += 1;
  }
  return totals;
}

/** Parametrized and duplicated tests share a name; number the repeats so ids stay unique. */
function uniqueIds(suites: SuiteCase[]): SuiteCase[] {
  const seen = new Map<string, number>();
  return suites.map((s) => ({
    ...s,
    tests: s.tests.map((t) => {
      const n = (seen.get(t.id) ?? 0) + 1;
      seen.set(t.id, n);
      return n === 1 ? t : { ...t, id: `${t.id}#${n}` };
    }),
  }));
}

export function parseJUnit(xml: string, source: string): SuiteResult {
  const text = xml.replace(/^\uFEFF/, '');
  if (text.trim() === '') throw new JUnitError(`JUnit report ${source} is empty.`, { source, hint: FORMAT_HINT });
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    const { msg, line } = valid.err;
    throw new JUnitError(`JUnit report ${source} is not well-formed XML (line ${line}): ${msg}`, {
      source,
      hint: 'The suite may have crashed while writing it; check the suite output above.',
    });
  }
  const parsed = Root.safeParse(parser.parse(text));
  const root = parsed.success ? parsed.data : undefined;
  if (!root || (root.testsuites === undefined && root.testsuite === undefined)) {
    throw new JUnitError(`${source} is not a JUnit report: expected a <testsuites> or <testsuite> root element.`, {
      source,
      hint: FORMAT_HINT,
      cause: parsed.success ? undefined : parsed.error,
    });
  }
  const top = root.testsuites?.testsuite ?? root.testsuite ?? [];
  const suites: SuiteCase[] = [];
  const loose = root.testsuites?.testcase ?? [];
  if (loose.length > 0) {
    const suite = { name: root.testsuites?.$?.name || path.basename(source) };
    suites.push({ ...suite, tests: loose.map((c) => normalizeCase(c, suite)) });
  }
  for (const raw of top) collect(raw, path.basename(source), suites);
  const unique = uniqueIds(suites);
  // A report that says it holds tests but yields none is a dialect we misread: never a pass.
  const declaredTests = Number(root.testsuites?.$?.tests ?? top.reduce((n, s) => n + Number(s.$?.tests ?? 0), 0));
  if (declaredTests > 0 && totalsOf(unique).total === 0) {
    throw new JUnitError(
      `JUnit report ${source} declares ${count(declaredTests, 'test')} but no <testcase> could be read from it.`,
      {
        source,
        hint: `${FORMAT_HINT} Report this layout to Consort with the file attached.`,
      },
    );
  }
  // Runners run suites in parallel, so the root's wall-clock time beats summing the parts.
  const declared = root.testsuites?.$?.time;
  const summed = top.reduce((sum, s) => sum + seconds(s.$?.time), 0);
  const durationMs = declared !== undefined ? seconds(declared) : summed || sumDurations(unique);
  return { suites: unique, totals: totalsOf(unique), durationMs };
}

function sumDurations(suites: SuiteCase[]): number {
  return suites.flatMap((s) => s.tests).reduce((sum, t) => sum + t.durationMs, 0);
}

/** Several reports (one per test file or module) as one result. */
export function mergeSuiteResults(results: SuiteResult[]): SuiteResult {
  const suites = uniqueIds(results.flatMap((r) => r.suites));
  return { suites, totals: totalsOf(suites), durationMs: results.reduce((sum, r) => sum + r.durationMs, 0) };
}

export interface ReadReportsOptions {
  /** Ignore reports last written before this time, so a stale report cannot pass for this run's. */
  newerThan?: Date;
}

/** The report's text, or `undefined` when it predates the run. */
async function readReport(file: string, source: string, newerThan: Date | undefined): Promise<string | undefined> {
  const unreadable = (error: unknown): never => {
    throw new JUnitError(`Cannot read JUnit report ${source}: ${String(error)}`, {
      source,
      hint: FORMAT_HINT,
      cause: error,
    });
  };
  const info = await stat(file).catch(unreadable);
  if (newerThan && info.mtime < newerThan) return undefined;
  if (info.size > MAX_REPORT_BYTES) {
    throw new JUnitError(`JUnit report ${source} is ${info.size} bytes; the limit is ${MAX_REPORT_BYTES}.`, {
      source,
      hint: 'Turn off captured output in the JUnit reporter (e.g. jest-junit includeConsoleOutput).',
    });
  }
  // Opened without blocking and read only if a regular file: a report that is a FIFO (or a link to
  // one), which a suite can leave, would otherwise hold this process's read forever.
  const bytes = readRegularFile(file);
  if (bytes === null) unreadable(new Error('not a regular file'));
  return bytes!.toString('utf8');
}

export async function readJUnitReports(
  patterns: string | string[],
  cwd: string,
  options: ReadReportsOptions = {},
): Promise<SuiteResult> {
  const list = Array.isArray(patterns) ? patterns : [patterns];
  const matched = (await glob(list, { cwd, absolute: true, onlyFiles: true })).sort();
  const results: SuiteResult[] = [];
  for (const file of matched) {
    const source = path.relative(cwd, file) || file;
    const xml = await readReport(file, source, options.newerThan);
    if (xml !== undefined) results.push(parseJUnit(xml, source));
  }
  if (results.length === 0) {
    const stale = matched.length > 0 ? ` (${matched.length} older report(s) ignored: written before this run)` : '';
    throw new JUnitError(`No JUnit report found at ${list.join(', ')} (in ${cwd})${stale}.`, {
      source: list.join(', '),
      hint: `${FORMAT_HINT} If the suite crashed before writing it, its output shows why.`,
    });
  }
  const merged = mergeSuiteResults(results);
  // The suite ran; a report without a single test proves nothing, so it fails closed.
  if (merged.totals.total === 0) {
    throw new JUnitError(`The JUnit report(s) at ${list.join(', ')} hold no test cases, though the suite ran.`, {
      source: list.join(', '),
      hint: `${FORMAT_HINT} node --test needs --test-reporter=junit --test-reporter-destination=<file>; a suite that selected no tests is not a pass.`,
    });
  }
  return merged;
}

export function summarizeSuite(result: SuiteResult): string {
  const { passed, failed, errored, skipped } = result.totals;
  return `${passed} passed, ${failed} failed, ${errored} errored, ${skipped} skipped`;
}
