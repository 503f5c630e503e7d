/**
 * A guarded name the user linked elsewhere (`.git/hooks` → `~/shared-hooks`) is followed by the
 * guard, as git follows it. Untrusted code can write the home folder even under bubblewrap, so it
 * can leave that link as it is and change what it leads to: make `~/shared-hooks` itself a link to
 * the repository's `.git`, or swap a folder on the way. Walked as before, `.git`'s own files would
 * read as hooks 'added' during the turn and be removed. The link must lead to the same real place
 * (path and inode) as at the snapshot; otherwise what the turn planted on the way is removed (the
 * links only), and nothing is walked or removed through the guarded link.
 */
import { lstat, mkdir, readdir, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { localWorkspaces } from '../../src/git/local-workspace.js';
import { guardRepo } from '../helpers/guard-repo.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
let dir: string;
let home: string;
const repo = guardRepo('consort-guard-tops-');
beforeEach(() => {
  ({ dir, home } = repo);
});

const gone = async (p: string) => (await lstat(p).catch(() => null)) === null;
const HOOK = '#!/bin/sh\nexit 0\n';

/** `.git/hooks` linked to `shared` (made, with one hook), as the user set it up. */
async function linkHooks(shared: string): Promise<void> {
  await mkdir(shared, { recursive: true });
  await writeFile(path.join(shared, 'pre-push'), HOOK);
  await rm(path.join(dir, '.git', 'hooks'), { recursive: true, force: true });
  await symlink(shared, path.join(dir, '.git', 'hooks'));
}

/** Every name under `.git` but hooks/, with its bytes (what a restore must not remove or rewrite). */
async function gitFiles(): Promise<Map<string, string>> {
  const gitDir = path.join(dir, '.git');
  const out = new Map<string, string>();
  for (const rel of await readdir(gitDir, { recursive: true })) {
    if (rel === 'hooks' || rel.startsWith('hooks/')) continue;
    const info = await lstat(path.join(gitDir, rel));
    out.set(rel, info.isFile() ? (await readFile(path.join(gitDir, rel))).toString('base64') : 'folder');
  }
  return out;
}

/** What is left after the restore: `.git` whole, the hook where git reads it, and nothing more to report. */
async function expectPutBack(ws: Awaited<ReturnType<typeof localWorkspaces.open>>, files: Map<string, string>) {
  expect(await gitFiles()).toEqual(files);
  expect(await readFile(path.join(dir, '.git', 'hooks', 'pre-push'), 'utf8')).toBe(HOOK);
  expect((await exec('git', ['log', '--format=%s'], { cwd: dir })).stdout).toBe('one\n');
  expect(await (await ws.guardGit('turn')).restore()).toEqual([]);
}

it("~/shared-hooks made a link to the repository's .git: .git is left whole, the planted link is removed", async () => {
  const shared = path.join(home, 'shared-hooks');
  await linkHooks(shared);
  const files = await gitFiles();
  const ws = await localWorkspaces.open(dir);
  const guard = await ws.guardGit('turn');
  await rename(shared, path.join(home, 'moved'));
  await symlink(path.join(dir, '.git'), shared);

  const changes = (await guard.restore()).map((c) => `${c.status} ${c.path}`);

  expect(changes).toEqual(['modified .git/hooks', 'added ~/shared-hooks']);
  expect(await gone(shared)).toBe(true);
  expect(await readFile(path.join(home, 'moved', 'pre-push'), 'utf8')).toBe(HOOK);
  await expectPutBack(ws, files);
}, 30_000);

it('a folder on the way swapped for one whose hooks link to .git: .git is left whole, only the planted link goes', async () => {
  const shared = path.join(home, 'cfg', 'hooks');
  await linkHooks(shared);
  const files = await gitFiles();
  const ws = await localWorkspaces.open(dir);
  const guard = await ws.guardGit('turn');
  await rename(path.join(home, 'cfg'), path.join(home, 'cfg-old'));
  await mkdir(path.join(home, 'cfg'));
  await symlink(path.join(dir, '.git'), shared);

  const changes = (await guard.restore()).map((c) => `${c.status} ${c.path}`);

  expect(changes).toEqual(['modified .git/hooks', 'added ~/cfg/hooks']);
  expect(await gone(shared)).toBe(true);
  expect(await readFile(path.join(home, 'cfg-old', 'hooks', 'pre-push'), 'utf8')).toBe(HOOK);
  await expectPutBack(ws, files);
}, 30_000);

it('the shared folder swapped for another (no link planted): not walked, nothing removed in it, git reads the hooks put back', async () => {
  const shared = path.join(home, 'shared-hooks');
  await linkHooks(shared);
  const files = await gitFiles();
  const ws = await localWorkspaces.open(dir);
  const guard = await ws.guardGit('turn');
  await rename(shared, path.join(home, 'moved'));
  await mkdir(shared);
  await writeFile(path.join(shared, 'pre-commit'), '#!/bin/sh\ncurl evil\n');

  const changes = (await guard.restore()).map((c) => `${c.status} ${c.path}`);

  expect(changes).toEqual(['modified .git/hooks']);
  expect(await readFile(path.join(shared, 'pre-commit'), 'utf8')).toBe('#!/bin/sh\ncurl evil\n');
  expect((await lstat(path.join(dir, '.git', 'hooks'))).isDirectory()).toBe(true);
  expect(await gone(path.join(dir, '.git', 'hooks', 'pre-commit'))).toBe(true);
  await expectPutBack(ws, files);
}, 30_000);

it('a link on the way the user made is followed; one pointed elsewhere during the turn is pointed back', async () => {
  const real = path.join(home, 'dotfiles');
  await linkHooks(path.join(real, 'hooks'));
  await symlink(real, path.join(home, 'cfg'));
  await rm(path.join(dir, '.git', 'hooks'));
  await symlink(path.join(home, 'cfg', 'hooks'), path.join(dir, '.git', 'hooks'));
  const files = await gitFiles();
  const ws = await localWorkspaces.open(dir);
  expect(await (await ws.guardGit('turn')).restore()).toEqual([]);
  const guard = await ws.guardGit('turn');
  await mkdir(path.join(home, 'evil'));
  await symlink(path.join(dir, '.git'), path.join(home, 'evil', 'hooks'));
  await rm(path.join(home, 'cfg'));
  await symlink(path.join(home, 'evil'), path.join(home, 'cfg'));

  const changes = (await guard.restore()).map((c) => `${c.status} ${c.path}`);

  expect(changes).toEqual(['modified ~/cfg']);
  expect(await readlink(path.join(home, 'cfg'))).toBe(real);
  expect(await readlink(path.join(dir, '.git', 'hooks'))).toBe(path.join(home, 'cfg', 'hooks'));
  await expectPutBack(ws, files);
}, 30_000);
