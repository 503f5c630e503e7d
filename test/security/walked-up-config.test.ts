/**
 * A proof's worktree lies next to the repository, so every folder above the repository is above
 * it too — and an agent's turn can write there (the sandbox shares the file system). pytest, when
 * the commit holds no ini file of its own, walks up from its arguments and takes the first folder
 * with one (an empty `pytest.ini` will do) as its rootdir, loading that folder's `conftest.py`.
 * Until 2026-12-04 a driver's GREEN turn that wrote `../pytest.ini` and a `../conftest.py` that turns
 * every test into a pass had the proof of the committed bug green (played with the real pytest).
 * The guard now compares what runners find by walking up (src/git/guard.ts, WALKED_UP) in every
 * folder above the repository: the turn is refused, the files removed, and the proof still fails.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkScope } from '../../src/conductor/scope.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { changesSince, openWorkspace, restore, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { policy } from '../conductor/fixtures.js';
import { driverGreenTurn, exists, proveHead, sumRepo, testStates } from '../helpers/sum-repo.js';

const CONFTEST =
  'def pytest_collection_modifyitems(items):\n    for item in items:\n        item.obj = lambda *a, **k: None\n';

let parent: string;
let dir: string;
let ws: GitWorkspace;
let deps: Dependencies;

beforeEach(async () => {
  // A folder of the test's own above the repository: nothing else on the machine walks up into it.
  parent = await mkdtemp(path.join(os.tmpdir(), 'consort-walked-up-'));
  dir = await sumRepo(`${path.basename(parent)}/repo-`, {
    suiteCommand: 'python3 -m pytest -q -p no:cacheprovider --junitxml=junit.xml tests',
    before: async (d) => {
      await mkdir(path.join(d, 'tests'));
      await writeFile(path.join(d, 'calc.py'), 'def add(a, b):\n    return a - b\n');
      await writeFile(
        path.join(d, 'tests', 'test_calc.py'),
        'import os, sys\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n',
      );
      await writeFile(path.join(d, '.gitignore'), 'node_modules/\njunit.xml\n__pycache__/\n');
    },
  });
  ws = await openWorkspace(dir);
  deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
});

afterEach(async () => {
  await deps?.dispose();
  await rm(parent, { recursive: true, force: true });
});

const proveAtHead = async () => testStates(await proveHead(dir, ws, deps));

it('the cheat is real: a pytest.ini and conftest.py above the repository make the proof of the bug green', async () => {
  expect(await proveAtHead()).toEqual(['tests.test_calc::test_add failed']);
  await writeFile(path.join(parent, 'pytest.ini'), '[pytest]\n');
  await writeFile(path.join(parent, 'conftest.py'), CONFTEST);
  expect((await proveAtHead()).join()).toMatch(/test_add passed/);
}, 120_000);

it("a driver's turn that writes them is refused, they are removed, and the proof still fails", async () => {
  const port = bindWorkspace(ws);
  const base = await workspaceHead(ws);
  const guard = await port.guardGit();
  const result = await driverGreenTurn(
    dir,
    port,
    deps,
    `printf '[pytest]\\n' > ../pytest.ini && cat > ../conftest.py <<'EOF'\n${CONFTEST}EOF\nmkdir -p ../.cargo && printf '[target.x86_64-unknown-linux-gnu]\\nrunner = "true"\\n' > ../.cargo/config.toml && printf 'cheat\\n' > ../.python-version`,
  );
  expect(result.exit).toEqual({ kind: 'done' });
  const changes = [...(await guard.restore()), ...(await changesSince(ws, base))];
  const refused = checkScope({
    policy: policy(),
    role: 'driver',
    step: 'green',
    item: 'T1',
    changes,
    frozen: {},
    hashes: {},
  }).map((r) => path.basename(r.path));
  expect(refused.sort()).toEqual(['.python-version', 'config.toml', 'conftest.py', 'pytest.ini']);
  await restore(ws, base, []);
  expect(await exists(path.join(parent, 'pytest.ini'))).toBe(false);
  expect(await exists(path.join(parent, 'conftest.py'))).toBe(false);
  expect(await proveAtHead()).toEqual(['tests.test_calc::test_add failed']);
}, 120_000);
