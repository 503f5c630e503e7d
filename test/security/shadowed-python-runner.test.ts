/**
 * `python -m pytest` (and `python -m unittest`) put the current folder — the repository's root —
 * first on `sys.path`: a committed top-level `pytest.py`, `_pytest/`, `pluggy/` or `xml/` (the JUnit
 * writer's `xml.etree`) is imported in place of the runner or what it imports, and can write a forged
 * JUnit report. The same holds in any folder without an `__init__.py` that pytest's `rootdir`
 * insertion or `pythonpath = src` puts on the path. Played with the real python: the forged runner
 * reports the failing test passed, exit 0. A new top-level module whose name python finds outside the
 * repository is test-owned; one it does not (the driver's `app.py`), or one inside a package, is not.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { Role } from '../../src/conductor/roles.js';
import type { Policy, TurnStep } from '../../src/conductor/state.js';
import { changesSince, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { pythonShadows } from '../../src/lanes/tdd/harness.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { execFileAsync, type ExecError } from '../helpers/exec-file.js';
import { workspaceAt } from '../helpers/tdd.js';
import { committedWorkspace, HARNESS_REFUSAL, scopedTurn } from '../helpers/scoped-turn.js';

const exec = execFileAsync;
const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });
const FROZEN = 'tests/test_calc.py';

/** A stand-in for pytest: a JUnit report where every test passed, and exit 0. */
const FORGED = `import sys
open('junit.xml', 'w').write('<testsuites><testsuite name="pytest" tests="1"><testcase classname="tests.test_calc" name="test_add"/></testsuite></testsuites>')
sys.exit(0)
`;

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

beforeEach(async () => {
  const files: Record<string, string> = {
    '.gitignore': '__pycache__/\njunit.xml\n',
    'calc.py': 'def add(a, b):\n    return a - b\n',
    [FROZEN]: 'from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n',
    'migrations/.keep': '',
    '.github/consort.yml':
      'suite:\n  command: python3 -m pytest -q --junitxml=junit.xml\n  reports: junit.xml\nmigrations:\n  dir: migrations\n',
  };
  ({ dir, ws } = await committedWorkspace('consort-shadowed-runner-', files));
  policy = buildPolicy((await loadConfig(dir)).config, '001-calc');
});

afterEach(() => rm(dir, { recursive: true, force: true }));

/** `python3 -m <module>` in the work tree, as the suite runs it: its exit code. */
async function pythonM(module: string): Promise<number> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dir };
  try {
    await exec('python3', ['-m', module, '-q', '-p', 'no:cacheprovider', '--junitxml=junit.xml'], {
      cwd: dir,
      env,
      timeout: 60_000,
    });
    return 0;
  } catch (e) {
    return Number((e as ExecError).code);
  }
}

/** A scripted command agent's turn, then the scope check as the conductor runs it (turn.ts). */
const turn = (role: Role, step: TurnStep, script: string): Promise<string[]> =>
  scopedTurn({ dir, ws, policy, feature: '001-calc', role, step, script, frozen: [FROZEN] });

const HARNESS = HARNESS_REFUSAL;

it('the driver cannot stand in for pytest with a top-level pytest.py', async () => {
  expect(await pythonM('pytest')).toBe(1);
  const refused = await turn('driver', 'green', `cat > pytest.py <<'EOF'\n${FORGED}EOF\n`);
  // The cheat is real: `python3 -m pytest` runs the driver's module, which reports a pass.
  expect(await pythonM('pytest')).toBe(0);
  expect(await readFile(path.join(dir, 'junit.xml'), 'utf8')).not.toContain('failure');
  expect(refused).toEqual([`pytest.py: ${HARNESS}`]);
}, 120_000);

it.each([
  ['_pytest/__init__.py', 'pytest itself imports'],
  ['pluggy/__init__.py', "pytest's plugin manager"],
  ['xml/__init__.py', "the standard library's JUnit writer (xml.etree)"],
  ['json.py', 'a standard library module'],
  ['src/unittest.py', 'a module in a folder without __init__.py (pythonpath = src)'],
])(
  'the driver cannot write %s (%s)',
  async (file) => {
    expect(await turn('driver', 'green', `mkdir -p "$(dirname ${file})" && printf 'x = 1\\n' > ${file}`)).toEqual([
      `${file}: ${HARNESS}`,
    ]);
  },
  30_000,
);

it('a file inside a shadowing package is judged by the package it belongs to', async () => {
  expect(
    await turn(
      'driver',
      'green',
      `mkdir -p xml/etree && printf '' > xml/__init__.py && printf '' > xml/etree/__init__.py && printf 'x = 1\\n' > xml/etree/ElementTree.py`,
    ),
  ).toEqual([
    `xml/__init__.py: ${HARNESS}`,
    `xml/etree/ElementTree.py: ${HARNESS}`,
    `xml/etree/__init__.py: ${HARNESS}`,
  ]);
}, 30_000);

it("new modules python does not find elsewhere, and modules inside a package, are the driver's", async () => {
  expect(
    await turn(
      'driver',
      'green',
      `printf 'def add(a, b):\\n    return a + b\\n' > calc.py && printf 'y = 2\\n' > consort_app_helpers.py && ` +
        `mkdir -p shop && printf '' > shop/__init__.py && printf 'T = int\\n' > shop/types.py && printf 'x = 1\\n' > shop/json.py`,
    ),
  ).toEqual([]);
  expect(await pythonM('pytest')).toBe(0);
}, 120_000);

it('the navigator may add one in RED', async () => {
  expect(await turn('navigator', 'red', `printf 'x = 1\\n' > json.py && echo '# t' >> tests/test_other.py`)).toEqual(
    [],
  );
}, 30_000);

it("a top-level module the base already has is the project's own (an editable install finds it too)", async () => {
  await writeFile(path.join(dir, 'json.py'), 'x = 1\n');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'its own json module');
  expect(await turn('driver', 'green', `printf 'x = 2\\n' > json.py`)).toEqual([]);
}, 30_000);

it('without a python3 to ask, every new top-level module is test-owned', async () => {
  const base = await workspaceHead(ws);
  await writeFile(path.join(dir, 'consort_app_helpers.py'), 'y = 2\n');
  await mkdir(path.join(dir, 'shop'));
  await writeFile(path.join(dir, 'shop/__init__.py'), '');
  const changes = await changesSince(ws, base);
  const workspace = await workspaceAt(dir);
  const { suite } = (await loadConfig(dir)).config;
  const empty = await mkdtemp(path.join(os.tmpdir(), 'consort-no-python-'));
  const saved = process.env.PATH;
  process.env.PATH = empty;
  try {
    expect(await pythonShadows(workspace, base, changes, suite)).toEqual([
      'consort_app_helpers.py',
      'shop/__init__.py',
    ]);
  } finally {
    process.env.PATH = saved;
    await rm(empty, { recursive: true, force: true });
  }
  // With one, neither is found outside the repository.
  expect(await pythonShadows(workspace, base, changes, suite)).toEqual([]);
}, 30_000);
