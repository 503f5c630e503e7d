/**
 * Test support modules under a narrower `build.tests`: with `tests: ['**\/*.test.js']` the frozen
 * test's own helper (`test/helpers.js`, whose `expectSum` asserts) and the data module it imports
 * its expected values from (`test/expected.js`) were the driver's to rewrite in GREEN — a JS data
 * module is code, so the data-file rule did not see it. Played with the real jest: the helper made
 * to assert nothing passes the failing test on the bug, exit 0. A module a test imports from a test
 * folder is now test-owned, whatever `build.tests` says; the code under test stays the driver's.
 */
import { rm } from 'node:fs/promises';
import { loadConfig } from '../../src/config/load.js';
import type { Policy } from '../../src/conductor/state.js';
import { type GitWorkspace } from '../../src/git/workspace.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { relativeImports } from '../../src/lanes/tdd/test-support.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { committedWorkspace, HARNESS_REFUSAL, runJest, scopedTurn } from '../helpers/scoped-turn.js';

const FROZEN = 'test/sum.test.js';

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

beforeAll(async () => {
  ({ dir, ws } = await committedWorkspace('consort-test-support-', {
    'package.json': `${JSON.stringify({ name: 'app', private: true, scripts: { test: 'jest --ci' } }, null, 2)}\n`,
    'src/sum.js': 'module.exports = (a, b) => a - b;\n',
    'test/helpers.js': 'exports.expectSum = (got, want) => expect(got).toBe(want);\n',
    'test/expected.js': 'module.exports = { three: 3 };\n',
    'test/legacy/support.js': 'exports.ok = true;\n',
    [FROZEN]:
      "const sum = require('../src/sum.js');\nconst { expectSum } = require('./helpers');\nconst expected = require('./expected.js');\ntest('adds', () => { expectSum(sum(1, 2), expected.three); });\n",
    'test/legacy.test.js':
      "const { ok } = require('./legacy/support');\ntest('legacy', () => expect(ok).toBe(true));\n",
    'migrations/.keep': '',
    '.github/consort.yml':
      "suite:\n  command: npm test\n  reports: junit.xml\nmigrations:\n  dir: migrations\nbuild:\n  tests: ['**/*.test.js']\n",
  }));
  policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
}, 30_000);

afterEach(() => execFileAsync('git', ['checkout', '-q', '--', '.'], { cwd: dir }));
afterAll(() => rm(dir, { recursive: true, force: true }));

const green = (script: string) =>
  scopedTurn({ dir, ws, policy, feature: '001-sum', role: 'driver', step: 'green', script, frozen: [FROZEN] });

it("the driver cannot make the frozen test's helper assert nothing (the real jest: green on the bug)", async () => {
  expect(await runJest(dir)).toEqual({ failed: 1, code: 1 });
  const refused = await green(`printf 'exports.expectSum = () => {};\\n' > test/helpers.js`);
  expect(await runJest(dir)).toEqual({ failed: 0, code: 0 });
  expect(refused).toEqual([`test/helpers.js: ${HARNESS_REFUSAL}`]);
}, 120_000);

it('the driver cannot rewrite the expected values in a JS data module the frozen test imports', async () => {
  expect(await green(`printf 'module.exports = { three: -1 };\\n' > test/expected.js`)).toEqual([
    `test/expected.js: ${HARNESS_REFUSAL}`,
  ]);
}, 30_000);

it('nor a module an older test imports without its extension', async () => {
  expect(await green(`printf 'exports.ok = 1;\\n' > test/legacy/support.js`)).toEqual([
    `test/legacy/support.js: ${HARNESS_REFUSAL}`,
  ]);
}, 30_000);

it("the code under test, imported from src/, is still the driver's", async () => {
  expect(await green(`printf 'module.exports = (a, b) => a + b;\\n' > src/sum.js`)).toEqual([]);
}, 30_000);

it('reads relative specifiers as the resolvers try them', () => {
  const found = relativeImports(
    "import { a } from './a.js';\nconst b = require('../lib/b');\nawait import('./c/');\nimport 'pkg';\nrequire('../../out');\n",
    'test/x.test.ts',
  );
  expect(found).toEqual(
    expect.arrayContaining(['test/a.js', 'test/a.ts', 'lib/b.js', 'lib/b/index.ts', 'test/c/index.js']),
  );
  expect(found.some((f) => f.startsWith('pkg') || f.includes('out'))).toBe(false);
});
