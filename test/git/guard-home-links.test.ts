/**
 * The `.git` guard puts git's global files in the home folder back (src/git/guard.ts). Untrusted
 * code can write the home folder even under bubblewrap, so it can replace a folder on the way to one
 * of them (`~/.config/git`) with a symlink: putting the file back must never delete or write what
 * that link names — the repository's own `.git/config`, which the sandbox keeps read-only to it. The
 * link itself is the change: reported, removed, and the file put back where git reads it. A folder
 * the user linked before the turn (dotfiles) is followed, as git follows it, and a global file the
 * user linked (`~/.gitconfig` → a dotfiles repository) stays linked: its bytes go back where it leads.
 */
import { lstat, mkdir, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { localWorkspaces } from '../../src/git/local-workspace.js';
import { guardRepo } from '../helpers/guard-repo.js';

let root: string;
let dir: string;
let home: string;
const repo = guardRepo('consort-guard-home-');
beforeEach(() => {
  ({ root, dir, home } = repo);
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

describe('a ~/.gitconfig the user linked into a dotfiles repository', () => {
  const CONFIG = '[user]\n\tname = me\n';
  let dotfiles: string;
  let gitconfig: string;

  beforeEach(async () => {
    dotfiles = path.join(home, 'dotfiles');
    gitconfig = path.join(home, '.gitconfig');
    await mkdir(dotfiles);
    await writeFile(path.join(dotfiles, 'gitconfig'), CONFIG);
    await symlink('dotfiles/gitconfig', gitconfig); // relative, as dotfiles managers make them
  });

  it('changed through the link: the content goes back through it, and the link stays', async () => {
    const ws = await localWorkspaces.open(dir);
    const guard = await ws.guardGit('turn');
    await writeFile(gitconfig, '[core]\n\tfsmonitor = /tmp/evil\n');

    const changes = await guard.restore();

    expect(changes.map((c) => `${c.status} ${c.path}`)).toEqual(['modified ~/.gitconfig']);
    expect(await readlink(gitconfig)).toBe('dotfiles/gitconfig');
    expect(await readFile(path.join(dotfiles, 'gitconfig'), 'utf8')).toBe(CONFIG);
    expect(await (await ws.guardGit('turn')).restore()).toEqual([]);
  }, 30_000);

  it('pointed elsewhere during the turn: pointed back, and what it pointed at is neither written nor removed', async () => {
    const config = path.join(dir, '.git', 'config');
    const before = await readFile(config);
    const ws = await localWorkspaces.open(dir);
    const guard = await ws.guardGit('turn');
    await rm(gitconfig);
    await symlink(config, gitconfig);

    const changes = await guard.restore();

    expect(changes.map((c) => `${c.status} ${c.path}`)).toEqual(['modified ~/.gitconfig']);
    expect(await readlink(gitconfig)).toBe('dotfiles/gitconfig');
    expect(await readFile(config)).toEqual(before);
    expect(await readFile(path.join(dotfiles, 'gitconfig'), 'utf8')).toBe(CONFIG);
  }, 30_000);

  it("the dotfiles folder made a link to the repository's .git: the planted link goes, nothing is written into .git", async () => {
    const ws = await localWorkspaces.open(dir);
    const guard = await ws.guardGit('turn');
    await rename(dotfiles, path.join(home, 'moved'));
    await symlink(path.join(dir, '.git'), dotfiles);

    const changes = await guard.restore();

    expect(changes.map((c) => `${c.status} ${c.path}`)).toEqual(['deleted ~/.gitconfig', 'added ~/dotfiles']);
    expect(await gone(path.join(dir, '.git', 'gitconfig'))).toBe(true);
    expect((await lstat(dotfiles)).isDirectory()).toBe(true);
    expect(await readlink(gitconfig)).toBe('dotfiles/gitconfig');
    expect(await readFile(path.join(dotfiles, 'gitconfig'), 'utf8')).toBe(CONFIG);
  }, 30_000);

  it('replaced by a file of its own during the turn: the link is made again', async () => {
    const ws = await localWorkspaces.open(dir);
    const guard = await ws.guardGit('turn');
    await rm(gitconfig);
    await writeFile(gitconfig, '[core]\n\tfsmonitor = /tmp/evil\n');

    const changes = await guard.restore();

    expect(changes.map((c) => `${c.status} ${c.path}`)).toEqual(['modified ~/.gitconfig']);
    expect(await readlink(gitconfig)).toBe('dotfiles/gitconfig');
    expect(await readFile(path.join(dotfiles, 'gitconfig'), 'utf8')).toBe(CONFIG);
  }, 30_000);
});

it('a ~/.gitconfig made a link during the turn is removed, the file put back in its place', async () => {
  const gitconfig = path.join(home, '.gitconfig');
  await writeFile(gitconfig, '[user]\n\tname = me\n');
  const copy = path.join(root, 'copy');
  await writeFile(copy, '[user]\n\tname = me\n[include]\n\tpath = /tmp/evil\n');
  const ws = await localWorkspaces.open(dir);
  const guard = await ws.guardGit('turn');
  await rm(gitconfig);
  await symlink(copy, gitconfig);

  const changes = await guard.restore();

  expect(changes.map((c) => `${c.status} ${c.path}`)).toEqual(['modified ~/.gitconfig']);
  expect((await lstat(gitconfig)).isFile()).toBe(true);
  expect(await readFile(gitconfig, 'utf8')).toBe('[user]\n\tname = me\n');
  expect(await readFile(copy, 'utf8')).toContain('/tmp/evil');
}, 30_000);
