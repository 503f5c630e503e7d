/**
 * A minimal JUnit XML reporter for jest, writing the shape jest-junit writes (which Consort reads
 * for per-test results) without the dependency:
 *
 *   <testsuites name="jest tests" tests failures errors skipped time>
 *     <testsuite name file tests failures errors skipped timestamp time>   one per test file
 *       <testcase classname name time>                                   "<describe…> <test>"
 *         <failure message type>stack</failure> | <skipped/>
 *
 * A test file that fails to load (syntax error, missing module, a throwing import) becomes one
 * testcase with classname "Test suite failed to run" holding an <error>, as jest-junit does.
 *
 * Options: { outputFile = 'junit.xml' } (relative to jest's rootDir), { suiteName = 'jest tests' }.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
// eslint-disable-next-line no-control-regex
const NOT_XML = /[^\u0009\u000A\u000D\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function clean(text) {
  return String(text ?? '').replace(ANSI, '').replace(NOT_XML, '');
}

function escape(text) {
  return clean(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

function attrs(values) {
  return Object.entries(values)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${escape(v)}"`)
    .join('');
}

const seconds = (ms) => ((ms ?? 0) / 1000).toFixed(3);

function firstLine(text) {
  return clean(text).split('\n').map((l) => l.trim()).find((l) => l !== '') ?? '';
}

const SKIPPED = new Set(['pending', 'skipped', 'todo', 'disabled']);

/** The error's class name when jest kept it (failureDetails), else a guess from the message. */
function failureType(test) {
  const detail = test.failureDetails?.[0];
  if (detail?.matcherResult) return 'AssertionError';
  if (detail?.name) return detail.name;
  const match = /^\s*([A-Za-z_$][\w$]*(Error|Exception))\b/.exec(clean(test.failureMessages?.[0]));
  return match ? match[1] : 'Error';
}

function testcase(test) {
  const name = [...test.ancestorTitles, test.title].join(' ');
  const open = `    <testcase${attrs({ classname: name, name, time: seconds(test.duration) })}`;
  if (test.status === 'failed') {
    const text = test.failureMessages.map(clean).join('\n\n');
    return `${open}>\n      <failure${attrs({ message: firstLine(text), type: failureType(test) })}>${escape(text)}</failure>\n    </testcase>`;
  }
  if (SKIPPED.has(test.status)) return `${open}>\n      <skipped/>\n    </testcase>`;
  return `${open}/>`;
}

function testsuite(result, rootDir) {
  const file = path.relative(rootDir, result.testFilePath).split(path.sep).join('/');
  const time = seconds(result.perfStats?.runtime ?? (result.perfStats?.end ?? 0) - (result.perfStats?.start ?? 0));
  const timestamp = new Date(result.perfStats?.start || Date.now()).toISOString().slice(0, 19);
  if (result.testExecError || (result.failureMessage && result.testResults.length === 0)) {
    const text = clean(result.failureMessage || result.testExecError?.stack || result.testExecError?.message);
    return [
      `  <testsuite${attrs({ name: file, file, tests: 1, failures: 0, errors: 1, skipped: 0, timestamp, time })}>`,
      `    <testcase${attrs({ classname: 'Test suite failed to run', name: file, time: '0.000' })}>`,
      `      <error${attrs({ message: firstLine(text.replace(/^\s*●\s*Test suite failed to run\s*/, '')) || 'Test suite failed to run', type: 'Error' })}>${escape(text)}</error>`,
      '    </testcase>',
      '  </testsuite>',
    ].join('\n');
  }
  const tests = result.testResults;
  const name = tests.find((t) => t.ancestorTitles.length > 0)?.ancestorTitles[0] ?? file;
  const failures = tests.filter((t) => t.status === 'failed').length;
  const skipped = tests.filter((t) => SKIPPED.has(t.status)).length;
  return [
    `  <testsuite${attrs({ name, file, tests: tests.length, failures, errors: 0, skipped, timestamp, time })}>`,
    ...tests.map(testcase),
    '  </testsuite>',
  ].join('\n');
}

export default class JUnitReporter {
  constructor(globalConfig, options = {}) {
    this.rootDir = globalConfig.rootDir;
    this.outputFile = path.resolve(globalConfig.rootDir, options.outputFile ?? 'junit.xml');
    this.suiteName = options.suiteName ?? 'jest tests';
  }

  onRunComplete(_contexts, results) {
    const files = [...results.testResults].sort((a, b) => a.testFilePath.localeCompare(b.testFilePath));
    const suites = files.map((r) => testsuite(r, this.rootDir));
    const loadErrors = files.filter((r) => r.testExecError || (r.failureMessage && r.testResults.length === 0)).length;
    const xml = [
      '<?xml version="1.0" encoding="UTF-8"?>',
      `<testsuites${attrs({
        name: this.suiteName,
        tests: results.numTotalTests + loadErrors,
        failures: results.numFailedTests,
        errors: loadErrors,
        skipped: results.numPendingTests + results.numTodoTests,
        time: seconds(Date.now() - results.startTime),
      })}>`,
      ...suites,
      '</testsuites>',
      '',
    ].join('\n');
    // Write then rename, so a reader never sees half a report.
    mkdirSync(path.dirname(this.outputFile), { recursive: true });
    const temp = `${this.outputFile}.${process.pid}.tmp`;
    writeFileSync(temp, xml);
    renameSync(temp, this.outputFile);
  }
}
