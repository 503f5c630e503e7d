/**
 * The suite runs code agents wrote, in the proof's own tree, which it may write (reports, caches).
 * Until 2026-12-04 a driver's module that a first test imports could rewrite a later test file in
 * that tree before the runner loaded it, and put it back when the process exited: the frozen test's
 * hash, taken before the suite, was the committed one, the runner ran the rewritten one, and the
 * proof of the committed bug was green (played with the real pytest, which imports test modules one
 * after another). Every committed file of the tree is now stamped before the suite (inode, change
 * time, size, mode — a change time cannot be set back) and compared after it: a suite that wrote one
 * makes its proof `broken` (`tree-changed`), its reports and the files it makes are its own — except
 * a harness file (a `conftest.py` made before pytest collects its folder and removed at exit), which
 * the folders of the tests are watched for while the suite runs.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { openWorkspace, type GitWorkspace } from '../../src/git/workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { git, proveHead, sumRepo, testStates } from '../helpers/sum-repo.js';

let dir: string;
let ws: GitWorkspace;
let deps: Dependencies;

const HEADER = 'import os, sys\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n';

/** The driver's calc.py: still the bug, but on import it weakens the frozen test, and puts it back at exit. */
const REWRITES_THE_TEST = `import atexit, os
_t = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'tests', 'test_calc.py')
_orig = open(_t).read()
open(_t, 'w').write(_orig.replace('== 3', '== -1'))
atexit.register(lambda: open(_t, 'w').write(_orig))

def add(a, b):
    return a - b
`;

beforeEach(async () => {
  dir = await sumRepo('consort-suite-rewrites-', {
    suiteCommand: 'python3 -m pytest -q -p no:cacheprovider --junitxml=junit.xml tests',
    before: async (d) => {
      await mkdir(path.join(d, 'tests'));
      await writeFile(path.join(d, 'calc.py'), 'def add(a, b):\n    return a - b\n');
      // An older test, collected first, and the frozen one.
      await writeFile(
        path.join(d, 'tests', 'test_a_old.py'),
        `${HEADER}import calc\n\n\ndef test_old():\n    assert calc.add(2, 0) == 2\n`,
      );
      await writeFile(
        path.join(d, 'tests', 'test_calc.py'),
        `${HEADER}from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n`,
      );
      // The suite writes these: its report, python's caches, a file of its own next to the tests.
      await writeFile(
        path.join(d, 'tests', 'test_b_writes.py'),
        `import os\n\n\ndef test_writes():\n    open(os.path.join(os.path.dirname(__file__), 'out.tmp'), 'w').write('x')\n`,
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
});

it('a suite that rewrites a committed test while it runs, and puts it back, proves nothing', async () => {
  // Honest: the suite writes its report, caches and files of its own, and the proof runs.
  expect(testStates(await proveHead(dir, ws, deps))).toEqual([
    'tests.test_a_old::test_old passed',
    'tests.test_b_writes::test_writes passed',
    'tests.test_calc::test_add failed',
  ]);
  await writeFile(path.join(dir, 'calc.py'), REWRITES_THE_TEST);
  await git(dir, 'commit', '-qam', 'GREEN as committed: the bug, and a module that rewrites the test');
  const { outcome } = await proveHead(dir, ws, deps);
  expect(outcome).toMatchObject({ kind: 'broken', reason: 'tree-changed' });
  expect(outcome.kind === 'broken' && outcome.message).toContain('(tests/test_calc.py)');
}, 120_000);

it('nor does one that makes a conftest.py before pytest collects its folder, and removes it', async () => {
  // The frozen test two folders down, collected after an older test whose import runs the driver's code.
  await mkdir(path.join(dir, 'tests', 'b', 'c'), { recursive: true });
  await git(dir, 'mv', 'tests/test_calc.py', 'tests/b/c/test_calc.py');
  await writeFile(
    path.join(dir, 'tests', 'b', 'c', 'test_calc.py'),
    `import os, sys\nsys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))))\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n`,
  );
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'the frozen test deeper down');
  expect(testStates(await proveHead(dir, ws, deps))).toContain('tests.b.c.test_calc::test_add failed');
  await writeFile(
    path.join(dir, 'calc.py'),
    `import atexit, os
_c = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'tests', 'b', 'c', 'conftest.py')
open(_c, 'w').write('def pytest_pyfunc_call(pyfuncitem):\\n    return True\\n')
atexit.register(lambda: os.remove(_c))

def add(a, b):
    return a - b
`,
  );
  await git(dir, 'commit', '-qam', 'GREEN as committed: the bug, and a module that makes a conftest.py');
  const { outcome } = await proveHead(dir, ws, deps);
  expect(outcome).toMatchObject({ kind: 'broken', reason: 'tree-changed' });
  expect(outcome.kind === 'broken' && outcome.message).toContain('(tests/b/c/conftest.py)');
}, 120_000);
