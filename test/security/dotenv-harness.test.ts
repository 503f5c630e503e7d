/**
 * `.env` files a frozen test setup reads: vite and vitest load `.env`, `.env.local`, `.env.test` and
 * `.env.test.local` by themselves, jest setups call dotenv (or node's `process.loadEnvFile`) with no
 * file name in any test. A value the tests read there (an expected total, a flag that skips a check)
 * was the driver's to change in GREEN. Played with the real jest: the failing test passes, exit 0.
 */
import { rm } from 'node:fs/promises';
import { loadConfig } from '../../src/config/load.js';
import type { Role } from '../../src/conductor/roles.js';
import type { Policy, TurnStep } from '../../src/conductor/state.js';
import { type GitWorkspace } from '../../src/git/workspace.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { committedWorkspace, HARNESS_REFUSAL, runJest, scopedTurn } from '../helpers/scoped-turn.js';

const FROZEN = 'test/sum.test.js';

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

beforeEach(async () => {
  const files: Record<string, string> = {
    'package.json': `${JSON.stringify({ name: 'app', private: true, scripts: { test: 'jest --ci' } }, null, 2)}\n`,
    'jest.config.js': "module.exports = { setupFiles: ['./jest.setup.js'] };\n",
    // A frozen setup: the tests' settings come from .env, as dotenv's config() loads them.
    'jest.setup.js':
      "const fs = require('fs');\nfor (const line of fs.readFileSync(require('path').join(__dirname, '.env'), 'utf8').split('\\n')) {\n  const [k, v] = line.split('=');\n  if (k && !(k in process.env)) process.env[k] = v;\n}\n",
    '.env': 'STRICT_SUM=1\n',
    'src/sum.js': 'module.exports = (a, b) => a - b;\n',
    [FROZEN]:
      "const sum = require('../src/sum.js');\n(process.env.STRICT_SUM === '1' ? test : test.skip)('adds', () => { expect(sum(1, 2)).toBe(3); });\ntest('runs', () => {});\n",
    'migrations/.keep': '',
    '.github/consort.yml': 'suite:\n  command: npm test\n  reports: junit.xml\nmigrations:\n  dir: migrations\n',
  };
  ({ dir, ws } = await committedWorkspace('consort-dotenv-', files));
  policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
});

afterEach(() => rm(dir, { recursive: true, force: true }));

/** The real jest on the work tree: how many tests failed, and its exit code. */
const jest = () => runJest(dir);

/** A scripted command agent's turn, then the scope check as the conductor runs it (turn.ts). */
const turn = (role: Role, step: TurnStep, script: string): Promise<string[]> =>
  scopedTurn({ dir, ws, policy, feature: '001-sum', role, step, script, frozen: [FROZEN] });

const HARNESS = HARNESS_REFUSAL;

it('the driver cannot change a value the frozen setup loads from .env', async () => {
  expect(await jest()).toEqual({ failed: 1, code: 1 });
  const refused = await turn('driver', 'green', `printf 'STRICT_SUM=0\\n' > .env`);
  // The cheat is real: the failing test is skipped, and jest exits 0.
  expect(await jest()).toEqual({ failed: 0, code: 0 });
  expect(refused).toEqual([`.env: ${HARNESS}`]);
}, 120_000);

it.each(['.env.test', '.env.local', '.env.test.local', '.env.development', 'web/.env', 'web/.env.test'])(
  'the driver cannot write %s (vite and vitest load it unnamed)',
  async (file) => {
    expect(
      await turn('driver', 'green', `mkdir -p "$(dirname ${file})" && printf 'STRICT_SUM=0\\n' > ${file}`),
    ).toEqual([`${file}: ${HARNESS}`]);
  },
  30_000,
);

it('the navigator may change them in RED, with its tests', async () => {
  expect(
    await turn(
      'navigator',
      'red',
      `printf 'STRICT_SUM=1\\nMORE=1\\n' > .env && printf 'X=1\\n' > .env.test && echo '// t' >> test/other.test.js`,
    ),
  ).toEqual([]);
}, 30_000);

it("an honest GREEN in src/ is still the driver's", async () => {
  expect(await turn('driver', 'green', `printf 'module.exports = (a, b) => a + b;\\n' > src/sum.js`)).toEqual([]);
  expect(await jest()).toEqual({ failed: 0, code: 0 });
}, 120_000);
