/**
 * Installed packages' metadata in the tree. pytest loads every plugin an `entry_points.txt`
 * declares under `[pytest11]`, and importlib.metadata finds `*.dist-info` and `*.egg-info` folders
 * in any folder on sys.path — the root itself under `python -m pytest`. Until 2026-12-04 a driver's
 * `helper-0.1.dist-info/` at the root, naming a plugin module of its own that turns every test into
 * a no-op, made the failing test pass (played with the real pytest), `src/calc.py` unchanged: neither
 * the metadata nor the new top-level module (found nowhere outside the repository) was harness.
 */
import { rm } from 'node:fs/promises';
import { loadConfig } from '../../src/config/load.js';
import type { Policy } from '../../src/conductor/state.js';
import { type GitWorkspace } from '../../src/git/workspace.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { execFileAsync, type ExecError } from '../helpers/exec-file.js';
import { committedWorkspace, HARNESS_REFUSAL, scopedTurn } from '../helpers/scoped-turn.js';

const FROZEN = 'tests/test_calc.py';
const SUITE = ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'];

let dir: string;
let ws: GitWorkspace;
let policy: Policy;

beforeEach(async () => {
  ({ dir, ws } = await committedWorkspace('consort-entry-points-', {
    '.gitignore': '__pycache__/\njunit.xml\n',
    'pytest.ini': '[pytest]\npythonpath = src\n',
    'src/calc.py': 'def add(a, b):\n    return a - b\n',
    [FROZEN]: 'from calc import add\n\n\ndef test_adds():\n    assert add(1, 2) == 3\n',
    'migrations/.keep': '',
    '.github/consort.yml': `suite:\n  command: python3 ${SUITE.join(' ')} --junitxml=junit.xml\n  reports: junit.xml\nmigrations:\n  dir: migrations\n`,
  }));
  policy = buildPolicy((await loadConfig(dir)).config, '001-calc');
});

afterEach(() => rm(dir, { recursive: true, force: true }));

/** The real pytest on the work tree, as the suite runs it: its exit code. */
async function pytest(): Promise<number> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? dir,
    PYTHONDONTWRITEBYTECODE: '1',
  };
  try {
    await execFileAsync('python3', SUITE, { cwd: dir, env });
    return 0;
  } catch (e) {
    return Number((e as ExecError).code);
  }
}

const PLUGIN =
  'def pytest_collection_modifyitems(items):\\n    for item in items:\\n        item.obj = lambda *a, **k: None\\n';

it.each(['helper-0.1.dist-info', 'src/helper.egg-info'])(
  'the driver cannot add %s declaring a pytest plugin of its own',
  async (meta) => {
    expect(await pytest()).toBe(1);
    const refused = await scopedTurn({
      dir,
      ws,
      policy,
      feature: '001-calc',
      role: 'driver',
      step: 'green',
      frozen: [FROZEN],
      script: `mkdir -p ${meta} && printf 'Metadata-Version: 2.1\\nName: helper\\nVersion: 0.1\\n' > ${meta}/${meta.endsWith('dist-info') ? 'METADATA' : 'PKG-INFO'} && printf '[pytest11]\\nhelper = helper_plugin\\n' > ${meta}/entry_points.txt && printf '${PLUGIN}' > helper_plugin.py`,
    });
    // The cheat is real: pytest loads the plugin, and the failing test passes.
    expect(await pytest()).toBe(0);
    expect(refused.filter((r) => r.includes(meta))).toEqual(
      [`${meta}/entry_points.txt`, `${meta}/${meta.endsWith('dist-info') ? 'METADATA' : 'PKG-INFO'}`]
        .sort()
        .map((f) => `${f}: ${HARNESS_REFUSAL}`),
    );
  },
  120_000,
);
