/**
 * Files the runner's configuration names are the harness too. A jest config's
 * `setupFilesAfterEnv: ['<rootDir>/src/setupTests.js']` (Create React App's name, and the usual
 * one in vitest's `setupFiles`) loads that file into every test, but its path matched no harness
 * glob: a driver's `jest.mock('./sum.js', () => …)` there made the failing test pass (played with
 * the real jest), the bug still in `src/sum.js`. Until 2026-12-04 it was the driver's to write in
 * GREEN; so were a reporter, a test environment or a babel plugin a config named.
 */
import { rm } from 'node:fs/promises';
import { loadConfig } from '../../src/config/load.js';
import type { Role } from '../../src/conductor/roles.js';
import type { Policy, TurnStep } from '../../src/conductor/state.js';
import { type GitWorkspace } from '../../src/git/workspace.js';
import { withoutCodeSettings } from '../../src/lanes/tdd/harness.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { committedWorkspace, HARNESS_REFUSAL, runJest, scopedTurn } from '../helpers/scoped-turn.js';

const FROZEN = 'test/sum.test.js';

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

beforeEach(async () => {
  ({ dir, ws } = await committedWorkspace('consort-harness-named-', {
    'package.json': `${JSON.stringify({ name: 'app', private: true, scripts: { test: 'jest --ci' }, mocha: { require: 'test-support/mocha-hooks.cjs' } }, null, 2)}\n`,
    'jest.config.js':
      // Coverage settings name the code under test: it stays the driver's.
      "module.exports = { setupFilesAfterEnv: ['<rootDir>/src/setupTests.js'], reporters: ['default', './tools/report.js'], collectCoverageFrom: ['src/sum.js', 'src/main.ts'], coverageThreshold: { './src/sum.js': { lines: 90 } } };\n",
    'vite.config.ts':
      "export default { build: { lib: { entry: 'src/main.ts' } }, test: { setupFiles: ['./src/vitest-setup.ts'] } };\n",
    '.mocharc.yml': 'spec: spec/\nfile: tools/mocha-setup.js\nignore:\n  - src/sum.js\n',
    'src/setupTests.js': '// shared test setup\n',
    'src/vitest-setup.ts': '// vitest setup\n',
    'src/main.ts': 'export {};\n',
    'test-support/mocha-hooks.cjs': '',
    'tools/report.js': 'module.exports = class { onRunComplete() {} };\n',
    'tools/mocha-setup.js': '',
    'src/sum.js': 'module.exports = { sum: (a, b) => a - b };\n',
    [FROZEN]: "const { sum } = require('../src/sum.js');\ntest('adds', () => { expect(sum(1, 2)).toBe(3); });\n",
    'migrations/.keep': '',
    '.github/consort.yml': 'suite:\n  command: npm test\n  reports: junit.xml\nmigrations:\n  dir: migrations\n',
  }));
  policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
});

afterEach(() => rm(dir, { recursive: true, force: true }));

const turn = (role: Role, step: TurnStep, script: string): Promise<string[]> =>
  scopedTurn({ dir, ws, policy, feature: '001-sum', role, step, script, frozen: [FROZEN] });

it('the driver cannot rewrite the setup file the jest config names (a jest.mock of the code under test)', async () => {
  expect(await runJest(dir)).toEqual({ failed: 1, code: 1 });
  const refused = await turn(
    'driver',
    'green',
    `printf "jest.mock('./sum.js', () => ({ sum: () => 3 }));\\n" > src/setupTests.js`,
  );
  // The cheat is real: the failing test passes on the double, src/sum.js still subtracts.
  expect(await runJest(dir)).toEqual({ failed: 0, code: 0 });
  expect(refused).toEqual([`src/setupTests.js: ${HARNESS_REFUSAL}`]);
}, 120_000);

it.each(['tools/report.js', 'src/vitest-setup.ts', 'test-support/mocha-hooks.cjs', 'tools/mocha-setup.js'])(
  'nor %s, which a runner configuration names',
  async (file) => {
    expect(await turn('driver', 'green', `printf '// cheat\\n' >> ${file}`)).toEqual([`${file}: ${HARNESS_REFUSAL}`]);
  },
  30_000,
);

it("the app's own entry a vite.config names, and the code under test (named by coverage and ignore settings), stay the driver's", async () => {
  expect(
    await turn(
      'driver',
      'green',
      "printf 'export const x = 1;\\n' > src/main.ts && printf 'module.exports = { sum: (a, b) => a + b };\\n' > src/sum.js",
    ),
  ).toEqual([]);
  expect(await runJest(dir)).toEqual({ failed: 0, code: 0 });
}, 120_000);

it('what runner settings that name the code (coverage, where tests are looked for) say is not read as files the runner loads', () => {
  expect(
    withoutCodeSettings(
      "export default { test: { include: ['src/**/*.test.ts'], setupFiles: './src/setup.ts', coverage: { exclude: ['src/main.ts'] } } }",
    ),
  ).toBe("export default { test: { include: , setupFiles: './src/setup.ts', coverage:  } }");
  expect(withoutCodeSettings('spec: spec/\nignore:\n  - src/a.js\n  - src/b.js\nrequire: test/setup.js\n')).toBe(
    'spec: \nignore:\n  \nrequire: test/setup.js\n',
  );
  expect(withoutCodeSettings('{"jest":{"testMatch":["src/a.test.js"],"setupFiles":["src/setup.js"]}}')).toBe(
    '{"jest":{"testMatch":,"setupFiles":["src/setup.js"]}}',
  );
});
