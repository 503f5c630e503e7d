/**
 * Run the project's own suite against a branch: its URL in `suite.env` (and the PG* variables),
 * a timeout that kills the whole process group, and the JUnit reports it writes, normalized.
 */
import type { ConsortConfig } from '../../config/schema.js';
import { parseDuration } from '../../core/duration.js';
import { childEnv, withheldNames } from '../../core/child-env.js';
import { ConsortError } from '../../core/errors.js';
import { redact } from '../../core/redact.js';
import type { Clock } from '../../ports/clock.js';
import type { ProcessRunner } from '../../ports/process.js';
import type { Stages } from '../../report/check-report.js';
import { readJUnitReports, summarizeSuite, type SuiteResult } from '../../suite/junit.js';
import { branchEnv } from '../../suite/pg-env.js';

const TAIL = 8000;

export async function suiteStage(
  config: ConsortConfig,
  workspace: string,
  url: string,
  env: NodeJS.ProcessEnv,
  processes: ProcessRunner,
  clock: Clock,
  signal: AbortSignal | undefined,
  onOutput?: (chunk: string) => void,
): Promise<Partial<Stages['suite']> & Pick<Stages['suite'], 'status' | 'summary'>> {
  const started = clock.now();
  const result = await processes.run({
    command: config.suite.command,
    cwd: workspace,
    env: childEnv(
      { ...branchEnv(url, [config.suite.env]), CI: env.CI ?? 'true' },
      // The caller's settings; of its credential-looking ones, only those the project passes (suite.passEnv).
      { inherit: env, pass: Object.keys(env), secrets: config.suite.passEnv },
    ),
    // A pull request's code: in a PID namespace of its own where one can be made, so it cannot read
    // Consort's /proc/<pid>/environ (the App's private key) nor leave a process behind, and under
    // bubblewrap it cannot see the local provider's data directory (its superuser password).
    isolate: true,
    timeoutMs: parseDuration(config.suite.timeout),
    maxOutputBytes: 2 * 1024 * 1024,
    ...(signal ? { signal } : {}),
    ...(onOutput ? { onOutput: (chunk: string) => onOutput(chunk) } : {}),
  });
  const outputTail = redact(result.output.slice(-TAIL), [new URL(url).password]);
  const base = { command: config.suite.command, exitCode: result.exitCode, timedOut: result.timedOut, outputTail };
  if (result.notFound) {
    return {
      ...base,
      status: 'failed',
      summary: `the suite command was not found: \`${config.suite.command}\` (set suite.command in the Consort configuration)`,
    };
  }
  if (result.timedOut)
    return {
      ...base,
      status: 'failed',
      summary: `timed out after ${config.suite.timeout}; the whole process group was killed`,
    };
  if (result.aborted) return { ...base, status: 'failed', summary: 'cancelled' };

  let junit: SuiteResult | undefined;
  let junitProblem: string | undefined;
  if (config.suite.reports.length > 0) {
    try {
      junit = await readJUnitReports(config.suite.reports, workspace, {
        newerThan: new Date(started.getTime() - 2000),
      });
    } catch (e) {
      junitProblem = e instanceof ConsortError ? e.message : String(e);
    }
  }
  const tests = junit ? { ...junit.totals } : null;
  const failures = (junit?.suites ?? [])
    .flatMap((s) => s.tests)
    .filter((t) => t.state === 'failed' || t.state === 'errored')
    .map((t) => ({
      id: t.id,
      name: t.name,
      state: t.state as 'failed' | 'errored',
      ...(t.message ? { message: t.message } : {}),
      ...(t.file ? { file: t.file } : {}),
    }));
  const exit = result.exitCode === null ? `killed by ${result.signal}` : `exit ${result.exitCode}`;
  const noScript = result.exitCode !== 0 ? missingTestScript(config.suite.command, result.output) : null;
  if (noScript !== null) return { ...base, tests, failures, status: 'failed', summary: noScript };
  const counts = junit ? summarizeSuite(junit) : exit;
  if (result.exitCode !== 0 || failures.length > 0) {
    return {
      ...base,
      tests,
      failures,
      status: 'failed',
      summary: `${counts}${junit ? ` (${exit})` : ''}${withheldNote(env, config.suite.passEnv)}`,
    };
  }
  if (junitProblem)
    return {
      ...base,
      tests,
      failures,
      status: 'failed',
      summary: `the suite passed but its JUnit report is unusable: ${junitProblem}`,
    };
  return {
    ...base,
    tests,
    failures,
    status: 'passed',
    summary: junit ? counts : 'exit 0 (no JUnit report configured)',
  };
}

/**
 * A failed suite's note on the credential-looking variables of the caller's environment it was not
 * given (`JWT_SECRET`…): a suite that reads one fails for that alone, and the fix is a setting.
 */
export function withheldNote(env: NodeJS.ProcessEnv, passEnv: readonly string[]): string {
  const names = withheldNames(env, passEnv);
  if (names.length === 0) return '';
  const shown = names.length > 5 ? `${names.slice(0, 5).join(', ')} and ${names.length - 5} more` : names.join(', ');
  return `; it was not given ${shown} (credential-looking: list what it needs in suite.passEnv)`;
}

/**
 * The default `npm test` in a project without a `test` script (npm's "Missing script", the
 * placeholder `npm init` writes, or no package.json at all: a project in another language left on
 * the default): said plainly, as the suite's failure. Still a failure, never a skip: a pull
 * request that removes its project's test script must not pass the merge gate.
 */
export function missingTestScript(command: string, output: string): string | null {
  if (!/^\s*npm\s+(?:run\s+)?test\s*$/.test(command)) return null;
  if (/^npm (?:error|ERR!) enoent .*package\.json/m.test(output))
    return `there is no package.json, so \`${command.trim()}\` ran no tests: set suite.command in the Consort configuration to the command that runs your tests`;
  const what = /^npm (?:error|ERR!) Missing script: "test"/m.test(output)
    ? 'package.json has no `test` script'
    : /Error: no test specified/.test(output)
      ? 'package.json\'s `test` script is npm init\'s placeholder (`echo "Error: no test specified" && exit 1`)'
      : null;
  if (what === null) return null;
  return `${what}, so \`${command.trim()}\` ran no tests: add the script, or set suite.command in the Consort configuration to the command that runs your tests`;
}
