/**
 * `.env` files a frozen test setup reads: vite and vitest load `.env`, `.env.local`, `.env.test` and
 * `.env.test.local` by themselves, jest setups call dotenv (or node's `process.loadEnvFile`) with no
 * file name in any test. A value the tests read there (an expected total, a flag that skips a check)
 * was the driver's to change in GREEN. Played with the real jest: the failing test passes, exit 0.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { Role } from '../../src/conductor/roles.js';
import type { Policy, TurnStep } from '../../src/conductor/state.js';
import { openWorkspace, type GitWorkspace } from '../../src/git/workspace.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { execFileAsync, type ExecError } from '../helpers/exec-file.js';
import { scopedTurn } from '../helpers/scoped-turn.js';

const exec = execFileAsync;
const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });
const JEST = path.resolve('node_modules/jest/bin/jest.js');
const FROZEN = 'test/sum.test.js';

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-dotenv-'));
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
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  ws = await openWorkspace(dir);
  policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
});

afterEach(() => rm(dir, { recursive: true, force: true }));

/** The real jest on the work tree: how many tests failed, and its exit code. */
async function jest(): Promise<{ failed: number; code: number }> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, CI: 'true' };
  const args = [JEST, '--ci', '--no-cache', '--json', '--rootDir', dir];
  const parse = (stdout: string, code: number) => ({
    failed: (JSON.parse(stdout) as { numFailedTests: number }).numFailedTests,
    code,
  });
  try {
    return parse((await exec(process.execPath, args, { cwd: dir, env, timeout: 60_000 })).stdout, 0);
  } catch (e) {
    const err = e as ExecError;
    return parse(String(err.stdout), Number(err.code));
  }
}

/** A scripted command agent's turn, then the scope check as the conductor runs it (turn.ts). */
const turn = (role: Role, step: TurnStep, script: string): Promise<string[]> =>
  scopedTurn({ dir, ws, policy, feature: '001-sum', role, step, script, frozen: [FROZEN] });

const HARNESS = 'the test harness (test-owned: only the navigator changes it, in RED)';

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
