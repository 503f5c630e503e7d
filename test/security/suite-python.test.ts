/**
 * Whether a driver's new top-level Python module shadows one the suite imports is asked of a python
 * (pythonShadows). Until 2026-12-04 that was always the `python3` on the conductor's PATH, whatever
 * the suite ran: under `.venv/bin/python -m pytest` a module only the virtualenv holds (a library
 * the frozen test takes its expected values from) was "found nowhere", so the driver's `moneyfmt.py`
 * at the root, which `-m pytest` imports first, passed the scope check and made the failing test
 * pass (played with the real python). Now the probe asks the suite's own interpreter, and where the
 * command does not say which one that is (`uv run`, `poetry run`, a `cd` first…) every new top-level
 * module is test-owned.
 */
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { Policy } from '../../src/conductor/state.js';
import { changesSince, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { pythonShadows } from '../../src/lanes/tdd/harness.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { execFileAsync, type ExecError } from '../helpers/exec-file.js';
import { committedWorkspace, HARNESS_REFUSAL, scopedTurn } from '../helpers/scoped-turn.js';
import { workspaceAt } from '../helpers/tdd.js';

const exec = execFileAsync;
const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });
const FROZEN = 'tests/test_calc.py';
const SUITE = '.venv/bin/python -m pytest -q -p no:cacheprovider --junitxml=junit.xml';
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir() };

let dir: string;
let ws: GitWorkspace;
let policy: Policy;
const cleanup: string[] = [];

/** A virtualenv at `at` that sees the system's pytest, with a library only it holds. */
async function virtualenv(at: string): Promise<void> {
  await exec('python3', ['-m', 'venv', '--without-pip', '--system-site-packages', at], { env: ENV, timeout: 60_000 });
  await rm(path.join(at, '.gitignore'), { force: true });
  const [lib] = await readdir(path.join(at, 'lib'));
  await writeFile(path.join(at, 'lib', lib!, 'site-packages', 'moneyfmt.py'), 'def cents(n):\n    return n\n');
}

beforeEach(async () => {
  ({ dir, ws } = await committedWorkspace('consort-suite-python-', {
    '.gitignore': '__pycache__/\njunit.xml\n',
    'conftest.py': "import sys\nsys.path.insert(0, 'src')\n",
    'src/calc.py': 'def add(a, b):\n    return a - b\n',
    // The expected value comes from a library the committed virtualenv holds.
    [FROZEN]:
      'from calc import add\nfrom moneyfmt import cents\n\n\ndef test_add():\n    assert add(1, 2) == cents(3)\n',
    'migrations/.keep': '',
    '.github/consort.yml': `suite:\n  command: ${SUITE}\n  reports: junit.xml\nmigrations:\n  dir: migrations\n`,
  }));
  await virtualenv(path.join(dir, '.venv'));
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'the virtualenv');
  policy = buildPolicy((await loadConfig(dir)).config, '001-calc');
}, 60_000);

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
  for (const d of cleanup.splice(0)) await rm(d, { recursive: true, force: true });
});

/** The suite command in the work tree, as a proof runs it: its exit code. */
async function suite(): Promise<number> {
  try {
    await exec('sh', ['-c', SUITE], { cwd: dir, env: { ...ENV, HOME: dir }, timeout: 60_000 });
    return 0;
  } catch (e) {
    return Number((e as ExecError).code);
  }
}

/** `files` written in the work tree, then what pythonShadows says of them under `command`. */
async function shadows(command: string, files: string[], passEnv: string[] = []): Promise<string[]> {
  const base = await workspaceHead(ws);
  for (const file of files) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), 'x = 1\n');
  }
  return pythonShadows(await workspaceAt(dir), base, await changesSince(ws, base), { command, passEnv });
}

it("the driver cannot shadow a library only the suite's virtualenv holds", async () => {
  expect(await suite()).toBe(1);
  const refused = await scopedTurn({
    dir,
    ws,
    policy,
    feature: '001-calc',
    role: 'driver',
    step: 'green',
    script: `printf 'def cents(n):\\n    return -1\\n' > moneyfmt.py`,
    frozen: [FROZEN],
  });
  // The cheat is real: `-m pytest` imports the driver's moneyfmt.py, and the failing test passes.
  expect(await suite()).toBe(0);
  expect(refused).toEqual([`moneyfmt.py: ${HARNESS_REFUSAL}`]);
}, 120_000);

it("a new module no python finds, under the virtualenv's python, is still the driver's", async () => {
  expect(await shadows(SUITE, ['consort_app_helpers.py', 'src/invoices.py'])).toEqual([]);
}, 30_000);

it('a virtualenv outside the repository is asked itself, with what it installed', async () => {
  const outside = await mkdtemp(path.join(os.tmpdir(), 'consort-venv-'));
  cleanup.push(outside);
  await virtualenv(path.join(outside, 'venv'));
  await writeFile(
    path.join(outside, 'venv/lib', (await readdir(path.join(outside, 'venv/lib')))[0]!, 'site-packages/ledgerkit.py'),
    '',
  );
  expect(await shadows(`${outside}/venv/bin/python -m pytest`, ['ledgerkit.py', 'consort_app_helpers.py'])).toEqual([
    'ledgerkit.py',
  ]);
  // Its pytest, by the python its #! line names.
  await writeFile(path.join(outside, 'venv/bin/pytest'), `#!${outside}/venv/bin/python\nimport pytest\n`, {
    mode: 0o755,
  });
  expect(await shadows(`${outside}/venv/bin/pytest -q`, [])).toEqual(['ledgerkit.py']);
}, 60_000);

it.each([
  'uv run pytest -q',
  'poetry run pytest',
  'pipenv run pytest',
  'tox -e py',
  'cd api && python3 -m pytest',
  'PYTHONHOME=/opt/py python3 -m pytest',
  'PYTHONPATH=/opt/lib python3 -m pytest',
  'PATH=/opt/py/bin:/usr/bin python3 -m pytest',
  '$PYTHON -m pytest',
  'python3.12 -m pytest',
  'npm test',
])(
  'under `%s`, which does not say which python runs, every new top-level module is test-owned',
  async (command) => {
    expect(await shadows(command, ['consort_app_helpers.py', 'shop/__init__.py'])).toEqual([
      'consort_app_helpers.py',
      'shop/__init__.py',
    ]);
  },
  30_000,
);

it('so is it when suite.passEnv hands the suite a PYTHONPATH of its own', async () => {
  expect(await shadows('python3 -m pytest', ['consort_app_helpers.py'], ['PYTHONPATH'])).toEqual([
    'consort_app_helpers.py',
  ]);
}, 30_000);

it('a python that is a file of the workspace is never started by the conductor', async () => {
  const marker = path.join(await mkdtemp(path.join(os.tmpdir(), 'consort-ran-')), 'ran');
  cleanup.push(path.dirname(marker));
  await mkdir(path.join(dir, 'env/bin'), { recursive: true });
  await writeFile(path.join(dir, 'env/pyvenv.cfg'), 'home = /usr/bin\n');
  await writeFile(path.join(dir, 'env/bin/python'), `#!/bin/sh\ntouch ${marker}\necho '[]'\n`, { mode: 0o755 });
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'a python of its own');
  expect(await shadows('env/bin/python -m pytest', ['consort_app_helpers.py'])).toEqual(['consort_app_helpers.py']);
  // Nor through a link outside the workspace that leads to it.
  const link = path.join(path.dirname(marker), 'python3');
  await symlink(path.join(dir, 'env/bin/python'), link);
  expect(await shadows(`${link} -m pytest`, [])).toEqual(['consort_app_helpers.py']);
  await expect(readdir(path.dirname(marker))).resolves.toEqual(['python3']);
}, 30_000);
