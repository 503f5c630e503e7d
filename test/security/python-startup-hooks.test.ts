/**
 * Python runs code of its own choosing at start-up, before the test runner imports anything: `site`
 * imports `sitecustomize` and `usercustomize` wherever `sys.path` finds them (a `PYTHONPATH=src`
 * folder, a site-packages) and executes the `import` lines of every `.pth` file in a site-packages
 * folder — a committed virtualenv's among them, whose `pyvenv.cfg` decides which site-packages the
 * interpreter uses. A driver's hook there runs inside pytest's process and can forge its JUnit
 * report. Played with the real python: the forged run reports the failing test passed, exit 0.
 * These files, and everything in a committed virtualenv, are test-owned.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { Role } from '../../src/conductor/roles.js';
import type { Policy, TurnStep } from '../../src/conductor/state.js';
import { type GitWorkspace } from '../../src/git/workspace.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { execFileAsync, type ExecError } from '../helpers/exec-file.js';
import { committedWorkspace, HARNESS_REFUSAL, scopedTurn } from '../helpers/scoped-turn.js';

const exec = execFileAsync;
const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });
const FROZEN = 'tests/test_calc.py';
const HARNESS = HARNESS_REFUSAL;

/** One line of Python that, at the interpreter's exit, overwrites pytest's report with a pass and exits 0. */
const FORGE =
  'import atexit, os; atexit.register(lambda: (open(\'junit.xml\', \'w\').write(\'<testsuites><testsuite name="pytest" tests="1"><testcase classname="tests.test_calc" name="test_add"/></testsuite></testsuites>\'), os._exit(0)))';

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

async function workspace(suite: string, extra: Record<string, string> = {}): Promise<void> {
  const files: Record<string, string> = {
    '.gitignore': '__pycache__/\njunit.xml\n',
    'src/calc.py': 'def add(a, b):\n    return a - b\n',
    [FROZEN]: 'from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n',
    'migrations/.keep': '',
    '.github/consort.yml': `suite:\n  command: ${suite}\n  reports: junit.xml\nmigrations:\n  dir: migrations\n`,
    ...extra,
  };
  ({ dir, ws } = await committedWorkspace('consort-python-hooks-', files));
  policy = buildPolicy((await loadConfig(dir)).config, '001-calc');
}

afterEach(() => rm(dir, { recursive: true, force: true }));

/** The suite command in the work tree, as a proof runs it: its exit code, and whether the report holds a failure. */
async function suite(command: string): Promise<{ code: number; failure: boolean }> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir };
  let code = 0;
  try {
    await exec('sh', ['-c', command], { cwd: dir, env, timeout: 60_000 });
  } catch (e) {
    code = Number((e as ExecError).code);
  }
  const report = await exec('cat', [path.join(dir, 'junit.xml')]).then(
    (r) => r.stdout,
    () => '',
  );
  return { code, failure: report.includes('<failure') };
}

/** A scripted command agent's turn, then the scope check as the conductor runs it (turn.ts). */
const turn = (role: Role, step: TurnStep, script: string): Promise<string[]> =>
  scopedTurn({ dir, ws, policy, feature: '001-calc', role, step, script, frozen: [FROZEN] });

describe('sitecustomize and usercustomize', () => {
  const SUITE = 'PYTHONPATH=src python3 -m pytest -q -p no:cacheprovider --junitxml=junit.xml';
  beforeEach(() => workspace(SUITE));

  it("the driver cannot run code in pytest's process with a src/sitecustomize.py", async () => {
    expect(await suite(SUITE)).toEqual({ code: 1, failure: true });
    const refused = await turn(
      'driver',
      'green',
      `printf '%s\\n' "${FORGE.replace(/"/g, '\\"')}" > src/sitecustomize.py`,
    );
    // The cheat is real: python imports it at start-up, and the failing test's run reports a pass.
    expect(await suite(SUITE)).toEqual({ code: 0, failure: false });
    expect(refused).toEqual([`src/sitecustomize.py: ${HARNESS}`]);
  }, 120_000);

  it.each([
    'sitecustomize.py',
    'usercustomize.py',
    'src/usercustomize.py',
    'src/sitecustomize/__init__.py',
    'src/hooks.pth',
    'lib/python3.11/site-packages/forge.py',
    'vendor/dist-packages/_pytest/main.py',
    'env/pyvenv.cfg',
  ])(
    'the driver cannot write %s',
    async (file) => {
      expect(await turn('driver', 'green', `mkdir -p "$(dirname ${file})" && printf 'x = 1\\n' > ${file}`)).toEqual([
        `${file}: ${HARNESS}`,
      ]);
    },
    30_000,
  );

  it("nor lib/sitecustomize.pyc, compiled Python being no agent's at all (test/security/shadowed-modules.test.ts)", async () => {
    expect(await turn('driver', 'green', `mkdir -p lib && printf 'x = 1\\n' > lib/sitecustomize.pyc`)).toEqual([
      "lib/sitecustomize.pyc: compiled Python, never an agent's to commit (python can import a .pyc in place of its source)",
    ]);
  }, 30_000);

  it('the navigator may, in RED', async () => {
    expect(
      await turn('navigator', 'red', `printf 'x = 1\\n' > src/sitecustomize.py && echo '# t' >> tests/test_other.py`),
    ).toEqual([]);
  }, 30_000);

  it("an honest GREEN is still the driver's", async () => {
    expect(await turn('driver', 'green', `printf 'def add(a, b):\\n    return a + b\\n' > src/calc.py`)).toEqual([]);
    expect(await suite(SUITE)).toEqual({ code: 0, failure: false });
  }, 120_000);
});

describe('a committed virtualenv', () => {
  const SUITE = '.venv/bin/python -m pytest -q -p no:cacheprovider --junitxml=junit.xml';
  beforeEach(async () => {
    // A virtualenv that sees the system's pytest, committed with the project (its python a link).
    await workspace(SUITE, { 'conftest.py': "import sys\nsys.path.insert(0, 'src')\n" });
    await exec('python3', ['-m', 'venv', '--without-pip', '--system-site-packages', '.venv'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dir },
      timeout: 60_000,
    });
    await rm(path.join(dir, '.venv/.gitignore'), { force: true });
    await git(dir, 'add', '-A');
    await git(dir, 'commit', '-qm', 'the virtualenv');
  }, 60_000);

  it('the driver cannot add a .pth file to its site-packages', async () => {
    expect(await suite(SUITE)).toEqual({ code: 1, failure: true });
    const refused = await turn(
      'driver',
      'green',
      `d=$(echo .venv/lib/python3*/site-packages) && printf '%s\\n' "${FORGE.replace(/"/g, '\\"')}" > "$d/zz_forge.pth"`,
    );
    // The cheat is real: site runs the .pth file's import line in the virtualenv's python.
    expect(await suite(SUITE)).toEqual({ code: 0, failure: false });
    const [lib] = await readdir(path.join(dir, '.venv/lib'));
    expect(refused).toEqual([`.venv/lib/${lib}/site-packages/zz_forge.pth: ${HARNESS}`]);
  }, 120_000);

  it.each([
    ['.venv/pyvenv.cfg', `printf 'include-system-site-packages = false\\n' >> .venv/pyvenv.cfg`],
    ['.venv/bin/activate', `echo 'export PYTHONPATH=forge' >> .venv/bin/activate`],
    ['.venv/bin/pytest', `printf '#!/bin/sh\\nexit 0\\n' > .venv/bin/pytest`],
  ])(
    'the driver cannot change %s (anything in a folder that holds a pyvenv.cfg)',
    async (file, script) => {
      expect(await turn('driver', 'green', script)).toEqual([`${file}: ${HARNESS}`]);
    },
    30_000,
  );
});
