/**
 * Expected values a test reads from a data file are as frozen as the test: the driver rewriting
 * them to what the bug computes proves the bug green. Until 2026-12-04 the data files were found
 * only by a quoted literal ending in a data extension, in a test; a scripted `command` agent's GREEN
 * turn played each of these past the scope check, and the real runner then passed the failing test:
 *
 * - a template literal with an interpolation (`${__dirname}/../data/expected.json`), or a Python
 *   f-string (`f"{ROOT}/data/expected.toml"`), was not read as naming its file;
 * - `require('../data/expected')` (node and jest resolve it to `expected.json`) named no file;
 * - a `.toml` (`.ini`, `.cfg`, `.properties`…) was no data file;
 * - the data a harness file reads (a jest setup file's `config/test.json`, whose flag makes every
 *   assertion lenient) was not the harness's: only tests were read for the files they name.
 */
import { rm } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config/load.js';
import type { Role } from '../../src/conductor/roles.js';
import type { Policy, TurnStep } from '../../src/conductor/state.js';
import { type GitWorkspace } from '../../src/git/workspace.js';
import { dataReferences } from '../../src/lanes/tdd/harness.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { committedWorkspace, HARNESS_REFUSAL, runJest, scopedTurn } from '../helpers/scoped-turn.js';

const FROZEN = 'test/sum.test.js';
const JEST_CONFIG = 'suite:\n  command: npm test\n  reports: junit.xml\nmigrations:\n  dir: migrations\n';
let dir: string;
let ws: GitWorkspace;
let policy: Policy;

async function setup(files: Record<string, string>): Promise<void> {
  ({ dir, ws } = await committedWorkspace('consort-indirect-data-', {
    'package.json': `${JSON.stringify({ name: 'app', private: true, scripts: { test: 'jest --ci' } }, null, 2)}\n`,
    'src/sum.js': 'module.exports = (a, b) => a - b;\n',
    'data/expected.json': '{ "sum": 3 }\n',
    'data/unread.json': '{}\n',
    'migrations/.keep': '',
    '.github/consort.yml': JEST_CONFIG,
    ...files,
  }));
  policy = buildPolicy((await loadConfig(dir)).config, '001-sum');
}
afterEach(() => rm(dir, { recursive: true, force: true }));

const turn = (role: Role, step: TurnStep, script: string, frozen = [FROZEN]): Promise<string[]> =>
  scopedTurn({ dir, ws, policy, feature: '001-sum', role, step, script, frozen });

const REWRITE = `printf '{ "sum": -1 }\\n' > data/expected.json && printf '{ "x": 1 }\\n' > data/unread.json`;

it.each([
  [
    'a template literal with an interpolation',
    "const fs = require('fs');\nconst e = JSON.parse(fs.readFileSync(`${__dirname}/../data/expected.json`, 'utf8'));",
  ],
  ["a module specifier without the file's extension", "const e = require('../data/expected');"],
])(
  'the driver cannot rewrite the expected values a frozen test reads through %s',
  async (_how, load) => {
    await setup({
      [FROZEN]: `const sum = require('../src/sum.js');\n${load}\ntest('adds', () => { expect(sum(1, 2)).toBe(e.sum); });\n`,
    });
    expect(await runJest(dir)).toEqual({ failed: 1, code: 1 });
    const refused = await turn('driver', 'green', REWRITE);
    // The cheat is real: the real jest passes the failing test on the bug.
    expect(await runJest(dir)).toEqual({ failed: 0, code: 0 });
    expect(refused).toEqual([`data/expected.json: ${HARNESS_REFUSAL}`]);
  },
  120_000,
);

it('the driver cannot rewrite the data a frozen setup file reads', async () => {
  const pkg = { name: 'app', private: true, scripts: { test: 'jest --ci' } };
  await setup({
    'package.json': `${JSON.stringify({ ...pkg, jest: { setupFilesAfterEnv: ['<rootDir>/jest.setup.js'] } }, null, 2)}\n`,
    'config/test.json': '{ "strict": true }\n',
    'jest.setup.js':
      "const { strict } = require('./config/test.json');\nif (!strict) global.expect = () => ({ toBe: () => undefined });\n",
    [FROZEN]: "const sum = require('../src/sum.js');\ntest('adds', () => { expect(sum(1, 2)).toBe(3); });\n",
  });
  expect(await runJest(dir)).toEqual({ failed: 1, code: 1 });
  const refused = await turn('driver', 'green', `printf '{ "strict": false }\\n' > config/test.json`);
  expect(await runJest(dir)).toEqual({ failed: 0, code: 0 });
  expect(refused).toEqual([`config/test.json: ${HARNESS_REFUSAL}`]);
}, 120_000);

it('the driver cannot rewrite a TOML file a frozen pytest test reads through an f-string', async () => {
  const test = 'tests/test_calc.py';
  await setup({
    'calc.py': 'def add(a, b):\n    return a - b\n',
    'data/expected.toml': 'sum = 3\n',
    [test]:
      'import os, tomllib\nfrom calc import add\nROOT = os.path.dirname(os.path.dirname(__file__))\n\ndef test_add():\n    with open(f"{ROOT}/data/expected.toml", "rb") as f:\n        assert add(1, 2) == tomllib.load(f)["sum"]\n',
    '.github/consort.yml':
      'suite:\n  command: python3 -m pytest -q -p no:cacheprovider --junitxml=junit.xml tests\n  reports: junit.xml\nmigrations:\n  dir: migrations\n',
  });
  const pytest = () =>
    promisify(execFile)('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, PYTHONDONTWRITEBYTECODE: '1' },
    }).then(
      () => 0,
      (e: { code: number }) => e.code,
    );
  expect(await pytest()).toBe(1);
  const refused = await turn('driver', 'green', `printf 'sum = -1\\n' > data/expected.toml`, [test]);
  expect(await pytest()).toBe(0);
  expect(refused).toEqual([`data/expected.toml: ${HARNESS_REFUSAL}`]);
}, 120_000);

it("data nothing test-owned names stays the driver's, and so does an honest GREEN", async () => {
  await setup({
    [FROZEN]: "const sum = require('../src/sum.js');\ntest('adds', () => { expect(sum(1, 2)).toBe(3); });\n",
  });
  expect(
    await turn(
      'driver',
      'green',
      `printf 'module.exports = (a, b) => a + b;\\n' > src/sum.js && printf '{ "sum": 4 }\\n' > data/expected.json`,
    ),
  ).toEqual([]);
  expect(await runJest(dir)).toEqual({ failed: 0, code: 0 });
}, 120_000);

it("what an older test's text mentions, or the app's vite config names, stays the driver's", async () => {
  await setup({
    [FROZEN]: "const sum = require('../src/sum.js');\ntest('adds', () => { expect(sum(1, 2)).toBe(3); });\n",
    'test/readme.test.js': "test('says where to look', () => { expect('see README.md').toContain('README'); });\n",
    'vite.config.js': "export default { build: { rollupOptions: { input: 'index.html' } } };\n",
    'index.html': '<!doctype html>\n',
    'README.md': '# app\n',
  });
  expect(
    await turn(
      'driver',
      'green',
      `printf 'module.exports = (a, b) => a + b;\\n' > src/sum.js && printf '<!doctype html><title>app</title>\\n' > index.html && printf '# app, summing\\n' > README.md`,
    ),
  ).toEqual([]);
}, 120_000);

it('reads the pieces of interpolated strings and resolves bare relative specifiers', () => {
  expect(
    dataReferences(
      "const a = `${root}/fixtures/${name}.json`;\nconst b = `${__dirname}/../data/x.csv`;\nopen(f'{HERE}/cases.toml')\nrequire('../data/expected');\nrequire('./helper.js');\nrequire('lodash');",
      'test/unit/a.test.js',
    ).sort(),
  ).toEqual(['cases.toml', 'data/x.csv', 'test/data/expected.json']);
});
