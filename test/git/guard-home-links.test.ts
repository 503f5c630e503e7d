/**
 * The `.git` guard puts git's global files in the home folder back (src/git/guard.ts). Untrusted
 * code can write the home folder even under bubblewrap, so it can replace a folder on the way to one
 * of them (`~/.config/git`) with a symlink: putting the file back must never delete or write what
 * that link names — the repository's own `.git/config`, which the sandbox keeps read-only to it. The
 * link itself is the change: reported, removed, and the file put back where git reads it. A folder
 * the user linked before the turn (dotfiles) is followed, as git follows it.
 */
import { execFile } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { localWorkspaces } from '../../src/git/local-workspace.js';

const exec = promisify(execFile);
let root: string;
let dir: string;
let home: string;
let pinned: string | undefined;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-guard-home-'));
  dir = path.join(root, 'repo');
  home = path.join(root, 'home');
  await mkdir(home);
  pinned = process.env.HOME;
  process.env.HOME = home;
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  await writeFile(path.join(dir, 'a.txt'), 'a\n');
  await exec('git', ['add', '-A'], { cwd: dir });
  await exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one'], { cwd: dir });
});
afterEach(async () => {
  process.env.HOME = pinned;
  await rm(root, { recursive: true, force: true });
});

const gone = async (p: string) => (await lstat(p).catch(() => null)) === null;

it("a ~/.config/git planted as a link to the repository's .git: .git/config is neither removed nor rewritten", async () => {
  const config = path.join(dir, '.git', 'config');
  const before = await readFile(config);
  const ws = await localWorkspaces.open(dir);
  const guard = await ws.guardGit('turn');
  // No ~/.config/git/config at the snapshot: through the link, .git/config reads as one 'added'.
  await mkdir(path.join(home, '.config'));
  await symlink(path.join(dir, '.git'), path.join(home, '.config', 'git'));

  const changes = await guard.restore();

  expect(changes.map((c) => `${c.status} ${c.path}`)).toContain('added ~/.config/git');
  expect(await readFile(config)).toEqual(before);
  expect(await gone(path.join(home, '.config', 'git'))).toBe(true);
  expect(await (await ws.guardGit('turn')).restore()).toEqual([]);
}, 30_000);

it("a ~/.config/git moved away and linked to .git/info: the user's attributes go back to ~/.config/git, not into .git", async () => {
  const xdg = path.join(home, '.config', 'git');
  await mkdir(xdg, { recursive: true });
  await writeFile(path.join(xdg, 'attributes'), '*.bin binary\n');
  const ws = await localWorkspaces.open(dir);
  const guard = await ws.guardGit('turn');
  await rename(xdg, path.join(home, 'moved'));
  await symlink(path.join(dir, '.git', 'info'), xdg);

  const changes = await guard.restore();

  expect(changes.map((c) => `${c.status} ${c.path}`)).toContain('added ~/.config/git');
  expect(await gone(path.join(dir, '.git', 'info', 'attributes'))).toBe(true);
  expect((await lstat(xdg)).isDirectory()).toBe(true);
  expect(await readFile(path.join(xdg, 'attributes'), 'utf8')).toBe('*.bin binary\n');
}, 30_000);

it('a ~/.config/git the user linked to dotfiles is followed: a change through it is put back, the link stays', async () => {
  const dotfiles = path.join(home, 'dotfiles', 'git');
  await mkdir(dotfiles, { recursive: true });
  await writeFile(path.join(dotfiles, 'attributes'), '*.bin binary\n');
  await mkdir(path.join(home, '.config'));
  await symlink(dotfiles, path.join(home, '.config', 'git'));
  const ws = await localWorkspaces.open(dir);
  const guard = await ws.guardGit('turn');
  await writeFile(path.join(home, '.config', 'git', 'attributes'), '*.js filter=evil\n');

  const changes = await guard.restore();

  expect(changes.map((c) => `${c.status} ${c.path}`)).toEqual(['modified ~/.config/git/attributes']);
  expect(await readlink(path.join(home, '.config', 'git'))).toBe(dotfiles);
  expect(await readFile(path.join(dotfiles, 'attributes'), 'utf8')).toBe('*.bin binary\n');
}, 30_000);
