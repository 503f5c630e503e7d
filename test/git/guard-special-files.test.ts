/**
 * The `.git` guard (src/git/guard.ts) reads what it compares on the main thread; what an agent
 * plants there need not be a regular file. A FIFO (whose read never ends), a symlink to one, a
 * symlink loop and a dangling symlink are each reported as the turn's change and removed, and the
 * guard finishes; a hooks folder that is a symlink to a shared one (a user's own set-up) is followed
 * and left as it is.
 */
import { lstat, mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localWorkspaces } from '../../src/git/local-workspace.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
let root: string;
let dir: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-guard-special-'));
  dir = path.join(root, 'repo');
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  await writeFile(path.join(dir, 'a.txt'), 'a\n');
  await exec('git', ['add', '-A'], { cwd: dir });
  await exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one'], { cwd: dir });
});
afterEach(() => rm(root, { recursive: true, force: true }));

const gone = async (p: string) => (await lstat(p).catch(() => null)) === null;

it('a FIFO, a symlink to one, a symlink loop and a dangling symlink planted under .git are put away, and the guard ends', async () => {
  const ws = await localWorkspaces.open(dir);
  const guard = await ws.guardGit('turn');
  const gitDir = path.join(dir, '.git');
  await exec('mkfifo', [path.join(gitDir, 'hooks', 'pre-commit'), path.join(root, 'fifo')]);
  await symlink(path.join(root, 'fifo'), path.join(gitDir, 'info', 'attributes'));
  await symlink('.', path.join(gitDir, 'info', 'loop'));
  await symlink(path.join(root, 'nowhere'), path.join(gitDir, 'info', 'sparse-checkout'));

  const changes = await guard.restore();

  expect(changes.map((c) => `${c.status} ${c.path}`)).toEqual(
    expect.arrayContaining([
      'added .git/hooks/pre-commit',
      'added .git/info/attributes',
      'added .git/info/sparse-checkout',
    ]),
  );
  expect(changes.some((c) => c.status === 'added' && c.path.startsWith('.git/info/loop'))).toBe(true);
  for (const rel of ['hooks/pre-commit', 'info/attributes', 'info/loop', 'info/sparse-checkout'])
    expect(await gone(path.join(gitDir, rel))).toBe(true);
  // The next guard starts from what was put back: nothing more to report.
  expect(await (await ws.guardGit('turn')).restore()).toEqual([]);
}, 30_000);

it("a hooks folder linked to a shared one is the user's: followed, compared, left linked", async () => {
  const shared = path.join(root, 'shared-hooks');
  await mkdir(shared);
  await writeFile(path.join(shared, 'pre-push'), '#!/bin/sh\nexit 0\n');
  const hooks = path.join(dir, '.git', 'hooks');
  await rm(hooks, { recursive: true, force: true });
  await symlink(shared, hooks);
  const ws = await localWorkspaces.open(dir);

  const guard = await ws.guardGit('turn');
  expect(await guard.restore()).toEqual([]);
  expect(await readlink(hooks)).toBe(shared);

  const again = await ws.guardGit('turn');
  await writeFile(path.join(shared, 'pre-commit'), '#!/bin/sh\ncurl evil\n'); // planted through the link
  expect((await again.restore()).map((c) => `${c.status} ${c.path}`)).toEqual(['added .git/hooks/pre-commit']);
  expect(await gone(path.join(shared, 'pre-commit'))).toBe(true);
  expect(await readlink(hooks)).toBe(shared);
});

it('a guarded folder or file that became a link during the turn is the link itself: never walked, never removed through', async () => {
  const elsewhere = path.join(root, 'elsewhere');
  await mkdir(elsewhere);
  await writeFile(path.join(elsewhere, 'precious'), 'keep me\n');
  const gitDir = path.join(dir, '.git');
  const exclude = await readFile(path.join(gitDir, 'info', 'exclude'));
  const config = await readFile(path.join(gitDir, 'config'));
  const ws = await localWorkspaces.open(dir);
  const guard = await ws.guardGit('turn');
  await rm(path.join(gitDir, 'info'), { recursive: true, force: true });
  await symlink(elsewhere, path.join(gitDir, 'info'));
  await writeFile(path.join(root, 'config-copy'), config); // the same bytes, read through a link of the agent's
  await rm(path.join(gitDir, 'config'));
  await symlink(path.join(root, 'config-copy'), path.join(gitDir, 'config'));

  const changes = (await guard.restore()).map((c) => `${c.status} ${c.path}`);

  expect(changes).toEqual(expect.arrayContaining(['added .git/info', 'modified .git/config']));
  expect(await readFile(path.join(elsewhere, 'precious'), 'utf8')).toBe('keep me\n');
  expect((await lstat(path.join(gitDir, 'info'))).isDirectory()).toBe(true);
  expect(await readFile(path.join(gitDir, 'info', 'exclude'))).toEqual(exclude);
  expect((await lstat(path.join(gitDir, 'config'))).isFile()).toBe(true);
  expect(await (await ws.guardGit('turn')).restore()).toEqual([]);
}, 30_000);
