/**
 * Names in another case. On a case-insensitive file system (macOS's APFS, Windows' NTFS) jest opens
 * a committed `JEST.CONFIG.JS` as its `jest.config.js`, node searches `Node_Modules/` as
 * `node_modules/`, Consort reads `.github/CONSORT.yml` as its configuration, node reads
 * `src/Package.json` as the `package.json` whose `imports` remap a test's module, and a checkout
 * writes `test/Sum.test.js` over a frozen `test/sum.test.js`. Until 2026-12-05 the scope check
 * matched its globs in one case only, so each of these was the driver's to write in GREEN.
 */
import { rm } from 'node:fs/promises';
import { loadConfig } from '../../src/config/load.js';
import { checkScope } from '../../src/conductor/scope.js';
import type { Policy } from '../../src/conductor/state.js';
import { type GitWorkspace } from '../../src/git/workspace.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { committedWorkspace, scopedTurn } from '../helpers/scoped-turn.js';

const FROZEN = 'test/sum.test.js';
const OTHER_CASE =
  'named like the test harness in another case (a case-insensitive file system opens it as the harness file): no agent writes it';

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

beforeAll(async () => {
  ({ dir, ws } = await committedWorkspace('consort-case-names-', {
    'package.json': `${JSON.stringify({ name: 'app', private: true, scripts: { test: 'jest --ci' } }, null, 2)}\n`,
    'src/sum.js': 'module.exports = (a, b) => a - b;\n',
    [FROZEN]: "const sum = require('../src/sum.js');\ntest('adds', () => { expect(sum(1, 2)).toBe(3); });\n",
    'migrations/.keep': '',
    '.github/consort.yml': 'suite:\n  command: npm test\n  reports: junit.xml\nmigrations:\n  dir: migrations\n',
  }));
  policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
});

afterEach(() => execFileAsync('git', ['clean', '-fdxq'], { cwd: dir }));
afterAll(() => rm(dir, { recursive: true, force: true }));

const green = (script: string) =>
  scopedTurn({ dir, ws, policy, feature: '001-sum', role: 'driver', step: 'green', script, frozen: [FROZEN] });

it.each([
  ['JEST.CONFIG.JS', OTHER_CASE],
  ['Jest.Config.js', OTHER_CASE],
  ['src/__MOCKS__/sum.js', OTHER_CASE],
  ['src/Fixtures/expected.js', OTHER_CASE],
  ['.ENV', OTHER_CASE],
  ['.NPMRC', OTHER_CASE],
  [
    'Node_Modules/jest/bin/jest.js',
    "installed dependencies, never an agent's to commit (a proof runs the pristine install, unless the commit has its own)",
  ],
  ['.github/CONSORT.yml', "no agent's to change (Consort's configuration, a migration already on the base, the seed)"],
  ['.Consort/features/001-sum/Gates.json', "the conductor's own record"],
])(
  'the driver cannot write %s',
  async (file, why) => {
    expect(
      await green(`mkdir -p "$(dirname '${file}')" && printf 'module.exports = {};\\n' > '${file}'`),
    ).toContainEqual(`${file}: ${why}`);
  },
  30_000,
);

it('the driver cannot add a src/Package.json whose imports remap a module', async () => {
  const pkg = JSON.stringify({ imports: { '#sum': './double.js' } });
  expect(await green(`printf '%s\\n' '${pkg}' > src/Package.json`)).toEqual([
    'src/Package.json: the test harness (test-owned: only the navigator changes it, in RED)',
  ]);
}, 30_000);

it("an honest GREEN, with capitals in its names, is still the driver's", async () => {
  expect(
    await green(
      `printf 'module.exports = (a, b) => a + b;\\n' > src/sum.js && printf 'module.exports = 1;\\n' > src/JestHelpers.js && printf 'x\\n' > README.MD`,
    ),
  ).toEqual([]);
}, 30_000);

it('no agent writes a frozen test in another case (checked out over it)', () => {
  const refused = checkScope({
    policy,
    role: 'driver',
    step: 'green',
    item: 'T1',
    changes: [{ path: 'src/Sum.TEST.js', status: 'added' }],
    frozen: { 'src/sum.test.js': 'h' },
    hashes: { 'src/sum.test.js': 'h' },
  });
  expect(refused.map((r) => `${r.path}: ${r.why}`)).toEqual([
    'src/Sum.TEST.js: the frozen test src/sum.test.js in another case (a case-insensitive file system checks one out over the other)',
  ]);
});
