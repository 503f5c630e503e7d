/**
 * Python adds the user's site-packages (`~/.local/lib/pythonX.Y/site-packages`) to every
 * interpreter's path, runs the `import` lines of the `.pth` files there and imports a
 * `usercustomize` module from it, before any test. The home folder is shared with the agents (the
 * sandbox shares the file system) and was shared with every proof's suite: until 2026-12-04 a turn
 * that wrote a `usercustomize.py` there — setting `PYTEST_ADDOPTS=-p <plugin>`, a plugin beside it
 * that turns every test into a pass — had the next proof of the committed bug green (the real
 * pytest), with nothing in the commit or in the files the guard compares. A proof's suite now runs
 * with `PYTHONNOUSERSITE=1`, unless the project lists `PYTHONNOUSERSITE` in `suite.passEnv` (its
 * runner installed with `pip install --user`).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { openWorkspace, type GitWorkspace } from '../../src/git/workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { proveHead, sumRepo, testStates } from '../helpers/sum-repo.js';

let dir: string;
let home: string;
let ws: GitWorkspace;
let deps: Dependencies;

beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'consort-user-site-home-'));
  dir = await sumRepo('consort-user-site-', {
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
  await deps.dispose();
  await rm(dir, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

it("a usercustomize an agent wrote into the home folder's user site-packages does not run in a proof", async () => {
  const env = { PATH: process.env.PATH, HOME: home };
  expect(testStates(await proveHead(dir, ws, deps, { env }))).toEqual(['tests.test_calc::test_add failed']);
  // The agent's turn: python's own answer for where the user site is, with this home folder.
  const { stdout } = await promisify(execFile)('python3', ['-c', 'import site; print(site.getusersitepackages())'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
  });
  const site = stdout.trim();
  expect(site.startsWith(home)).toBe(true);
  await mkdir(site, { recursive: true });
  await writeFile(path.join(site, 'usercustomize.py'), "import os\nos.environ['PYTEST_ADDOPTS'] = '-p cheat_plugin'\n");
  await writeFile(
    path.join(site, 'cheat_plugin.py'),
    'def pytest_collection_modifyitems(items):\n    for item in items:\n        item.obj = lambda *a, **k: None\n',
  );
  expect(testStates(await proveHead(dir, ws, deps, { env }))).toEqual(['tests.test_calc::test_add failed']);
}, 120_000);
