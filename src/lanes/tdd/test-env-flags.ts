/**
 * Code that behaves differently under test is the cheapest way to a green proof that means
 * nothing (`if (process.env.JEST_WORKER_ID) return expected`); code that loads the test framework
 * can rewire what the tests assert (`expect.extend({ toBe: ok })`); a migration that branches on the
 * database or role it runs on can make the schema the tests expect on a proof's branch only
 * (`IF current_user LIKE '%\_role'`); a migration that changes rows rewrites, on a proof's branch, the
 * seed's rows the tests read (`UPDATE customers SET total = 42 WHERE id = 1` makes a frozen test on
 * the seeded customer pass with no code at all), which a deploy's data never had. The merge gate flags every line
 * the feature added to production code (not tests, not Consort's records) that looks for a test
 * environment or reaches into a test framework, so the person approving sees it; proxy mode does
 * not pass a flagged gate.
 */
import { matchesAny } from '../../core/glob.js';
import { DEFAULT_HARNESS, DEFAULT_TEST_GLOBS } from '../../conductor/roles.js';
import type { Workspace } from '../../ports/workspace.js';

/** Globals a test runner defines (jest, vitest, mocha, jasmine, node:test, QUnit) and vitest's internals. */
const RUNNER_GLOBALS =
  '(?:jest|vi|vitest|describe|it|test|expect|beforeEach|afterEach|beforeAll|afterAll|suite|mocha|jasmine|QUnit|__vitest_\\w+|__jest\\w*)';
/** What holds the globals (`self` only after typeof: `self.test` is a Python attribute). */
const GLOBAL_OBJECT = '(?:globalThis|global|window)';
/** Runner names as they appear in a command line or a loaded module's path. */
const RUNNER_NAMES = '(?<![\\w-])(?:jest|vitest|mocha|jasmine|ava|tap|pytest|unittest|--test)(?![\\w-])';

/** What names the database, role or server a statement runs on (SQL, or a column of that name). */
const WHERE_IT_RUNS =
  '(?:current_database|current_catalog|current_user|session_user|current_role|inet_server_port|inet_server_addr)';

const LOOKS_FOR_TEST_ENV: readonly RegExp[] = [
  // Variables a runner sets for the code it runs.
  /\bJEST_WORKER_ID\b/,
  /\bVITEST(?:_\w+)?\b/,
  /\bNODE_TEST_CONTEXT\b/,
  /\bPYTEST_\w+/,
  /\bMOCHA_\w+/,
  /\bnpm_lifecycle_(?:event|script)\b/,
  /\bCONSORT_(?:ROLE|STEP|TURN|ITEM)\w*/,
  // Such a name taken apart: Object.keys(process.env).some((k) => k.startsWith('JEST')).
  /['"`](?:JEST|VITEST|MOCHA|PYTEST|NODE_TEST)\w*['"`]/,
  // NODE_ENV / vite's MODE next to a 'test' string, however compared (===, includes, startsWith, a regex).
  /\b(?:NODE_ENV|BABEL_ENV|env\.MODE)\b.*(?:['"`/]test\b)|['"`/]test\b.*\b(?:NODE_ENV|BABEL_ENV|env\.MODE)\b/,
  /\bimport\.meta\.(?:vitest|env\??\.(?:TEST|VITEST|MODE))\b/,
  // A runner's globals: typeof jest, typeof globalThis.vi, globalThis.expect, 'jest' in globalThis.
  new RegExp(`\\btypeof\\s*\\(?\\s*(?:(?:${GLOBAL_OBJECT}|self)\\s*\\??\\.\\s*)?${RUNNER_GLOBALS}\\b`),
  new RegExp(`\\b${GLOBAL_OBJECT}\\s*(?:\\??\\.\\s*|\\[\\s*['"\`])${RUNNER_GLOBALS}\\b`),
  new RegExp(`['"\`]${RUNNER_GLOBALS}['"\`]\\s+in\\s+${GLOBAL_OBJECT}\\b`),
  // The command line or the loaded modules name a runner.
  new RegExp(
    `\\b(?:process\\.(?:argv|execArgv|title)|require\\.main|module\\.parent|sys\\.(?:argv|modules))\\b.*${RUNNER_NAMES}`,
  ),
  new RegExp(`['"]${RUNNER_NAMES}['"]\\s+in\\s+sys\\.modules\\b`),
  // Where it runs: a migration (or code) that branches on the database, role or server it runs on
  // can tell a proof's branch (its role's name ends in `_role`, its database is Consort's) from a
  // deploy, and make the schema the tests expect only there (`IF current_user LIKE '%\_role'`).
  new RegExp(
    `\\b${WHERE_IT_RUNS}\\b(?:\\s*\\(\\s*\\))?\\s*(?:=|<>|!=|!?~|\\b(?:NOT|I?LIKE|SIMILAR|IS)\\b|\\bIN\\s*\\(|\\??\\.\\s*(?:startsWith|endsWith|includes|match|indexOf|search|test)\\b)`,
    'i',
  ),
  new RegExp(`(?:=|<>|!=|\\bI?LIKE\\b)\\s*${WHERE_IT_RUNS}\\b`, 'i'),
  /\bcurrent_setting\s*\(\s*'(?:application_name|cluster_name|port|data_directory|listen_addresses|config_file|hba_file)'/i,
  /\bpg_(?:database|stat_activity)\b/i,
  /\b(?:DATABASE_URL|PG(?:DATABASE|USER|HOST|PORT|APPNAME))\b.*\b(?:includes|startsWith|endsWith|match|test|indexOf|search)\b/,
  // Consort's own names (`'consort%'`, `consort_pool_`): only Consort's branches carry them.
  /['"`%][^'"`\n]*consort[^'"`\n]*['"`%]/i,
];

/**
 * A statement that changes rows, in a migration (SQL, or SQL a JS migration passes as a string):
 * not `ON UPDATE CASCADE`, a trigger's `BEFORE UPDATE ON`, `FOR UPDATE` or `GRANT UPDATE ON`.
 */
const CHANGES_ROWS =
  /(?<!\bON\s+)\b(?:UPDATE\s+(?:ONLY\s+)?[\w."]+\s*(?:$|SET\b|AS\b|[\w"]+\s+SET\b)|INSERT\s+INTO\b|DELETE\s+FROM\b|TRUNCATE\b|MERGE\s+INTO\b|COPY\s+[\w."]+[^;]*\bFROM\b)/i;
/** Where migrations are: SQL files, and anything in a `migrations` folder (node-pg-migrate's JS and TS ones). */
const MIGRATION_FILES = ['**/*.sql', '**/migrations/**'];

/** Test frameworks and their assertion libraries, as module names only a test would load. */
const FRAMEWORK_MODULES = '(?:@jest/[\\w.-]+|@vitest/[\\w.-]+|node:test|bun:test)';
/** Names that are test frameworks when imported or required (a bare 'mocha' string is not). */
const FRAMEWORK_NAMES =
  '(?:jest|vitest|mocha|chai|expect|jasmine|ava|tap|uvu|sinon|jest-mock|jest-extended|chai-as-promised)';

/**
 * Production code that reaches into the test framework can rewire what the tests assert
 * (`(await import('@jest/globals')).expect.extend({ toBe: () => ({ pass: true }) })`): importing or
 * requiring a framework, or extending its matchers, is never production's business.
 */
const REACHES_TEST_FRAMEWORK: readonly RegExp[] = [
  new RegExp(`['"\`]${FRAMEWORK_MODULES}(?:/[^'"\`]*)?['"\`]`),
  new RegExp(
    `(?:\\bfrom\\s*|\\bimport\\s*(?:\\(\\s*)?|\\brequire(?:\\.resolve)?\\s*\\(\\s*)['"\`]${FRAMEWORK_NAMES}(?:/[^'"\`]*)?['"\`]`,
  ),
  // A matcher or plugin installed into the runner: expect.extend, expect?.extend, chai.use, jest.mock.
  /\bexpect\s*\??\.\s*(?:extend|addSnapshotSerializer|addEqualityTesters)\b/,
  /\bchai\s*\??\.\s*use\b/,
  /\b(?:jest|vi)\s*\??\.\s*(?:mock|doMock|spyOn|fn|stubGlobal|stubEnv)\b/,
  // Python: pytest or unittest.mock loaded by production code.
  /^\s*(?:import|from)\s+(?:pytest|_pytest|unittest\.mock)\b/,
];
/** Where that is judged: source files, not package.json's devDependencies, lock files or docs; not the test harness (a jest.setup.js extends matchers by right). */
const SOURCE = /\.(?:[cm]?[jt]sx?|vue|svelte|astro|py)$/;

function reachesTestFramework(file: string, text: string): boolean {
  return SOURCE.test(file) && !matchesAny(file, DEFAULT_HARNESS) && REACHES_TEST_FRAMEWORK.some((re) => re.test(text));
}

/** Why an added line of production code or a migration is flagged, or null. */
export function lineFlag(file: string, text: string): string | null {
  if (LOOKS_FOR_TEST_ENV.some((re) => re.test(text))) return 'looks for a test environment';
  if (reachesTestFramework(file, text)) return 'reaches into a test framework';
  if (matchesAny(file, MIGRATION_FILES) && CHANGES_ROWS.test(text))
    return "changes rows in a migration (on a proof's branch, the seed's rows the tests read; check it is the deploy's data change, not the tests' expected values)";
  return null;
}

export async function testEnvironmentFlags(
  ws: Workspace,
  base: string,
  tests: readonly string[] = DEFAULT_TEST_GLOBS,
): Promise<string[]> {
  const flags: string[] = [];
  for (const { file, line, text } of await ws.diffAdded(base)) {
    if (file.startsWith('.consort/') || matchesAny(file, tests)) continue;
    const why = lineFlag(file, text);
    if (why !== null) flags.push(`${file}:${line} ${why}: ${text.trim().slice(0, 160)}`);
  }
  return flags;
}
