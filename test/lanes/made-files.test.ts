/**
 * The watch on a proof's test and harness folders (src/lanes/tdd/made-files.ts), on the real file
 * system: a harness file the suite makes (and removes) is seen, so is a watched folder swapped for a
 * copy and back (its files keep their stamps, and a watch follows the old folder), and what runners
 * write there as a matter of course (Python's bytecode caches, the config Vite bundles beside
 * vitest.config.ts) is not a harness file.
 */
import { cp, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { watchMadeFiles } from '../../src/lanes/tdd/made-files.js';

let dir: string;
const COMMITTED = ['vitest.config.ts', 'tests/b/c/test_calc.py', 'tests/fixtures/__init__.py', 'src/calc.py'];
const TESTS = ['tests/**'];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-made-files-'));
  for (const file of COMMITTED) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), '\n');
  }
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it("is quiet about runners' own caches, and names a harness file made and removed", async () => {
  const watched = watchMadeFiles(dir, COMMITTED, TESTS);
  const stamp = path.join(dir, 'vitest.config.ts.timestamp-1700000000000-9f2c1a.mjs');
  await writeFile(stamp, 'export default {};\n');
  await rm(stamp);
  await mkdir(path.join(dir, 'tests', 'fixtures', '__pycache__'));
  await writeFile(path.join(dir, 'tests', 'fixtures', '__pycache__', '__init__.cpython-311.pyc'), '');
  await writeFile(path.join(dir, 'tests', 'b', 'c', 'out.tmp'), 'x'); // a file of the suite's own
  await writeFile(path.join(dir, 'tests', 'fixtures', 'written.json'), '{}'); // output in a data folder
  expect(await watched.stop()).toEqual([]);

  const again = watchMadeFiles(dir, COMMITTED, TESTS);
  await writeFile(
    path.join(dir, 'tests', 'b', 'c', 'conftest.py'),
    'def pytest_pyfunc_call(pyfuncitem):\n    return True\n',
  );
  await rm(path.join(dir, 'tests', 'b', 'c', 'conftest.py'));
  await writeFile(path.join(dir, 'tests', 'fixtures', 'conftest.py'), '\n'); // in a data folder too
  expect(await again.stop()).toEqual(['tests/b/c/conftest.py', 'tests/fixtures/conftest.py']);
});

it('names a watched folder swapped for a copy and back', async () => {
  const watched = watchMadeFiles(dir, COMMITTED, TESTS);
  const b = path.join(dir, 'tests', 'b');
  await cp(path.join(b, 'c'), path.join(b, '.x'), { recursive: true });
  await writeFile(path.join(b, '.x', 'conftest.py'), 'def pytest_pyfunc_call(pyfuncitem):\n    return True\n');
  await rename(path.join(b, 'c'), path.join(b, '.orig'));
  await rename(path.join(b, '.x'), path.join(b, 'c'));
  // … the runner collects the copy; at exit the original goes back.
  await rm(path.join(b, 'c'), { recursive: true });
  await rename(path.join(b, '.orig'), path.join(b, 'c'));
  expect(await watched.stop()).toEqual(['tests/b/c/']);
});
