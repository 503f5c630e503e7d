/**
 * A TDD run pins git's global configuration (src/git/pinned-config.ts): the conductor's git calls
 * keep the user's settings as the run found them — includes resolved, the excludes file it names —
 * and nothing written to the home folder during the run reaches them. Released, git reads the
 * home folder again. It is still *global*: what a caller passes as its own command-scope entries
 * (GIT_CONFIG_COUNT, e.g. the Action's push auth header) wins over it, as it did over ~/.gitconfig
 * before the pin (git applies GIT_CONFIG_KEY_n in index order, so the pinned entries come first).
 */
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { git } from '../../src/git/exec.js';
import { parseConfigList, pinGlobalConfig } from '../../src/git/pinned-config.js';
import { listFiles, openWorkspace } from '../../src/git/workspace.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
let root: string;
let home: string;
const pinnedHome = process.env.HOME;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-pin-'));
  home = path.join(root, 'home');
  await exec('mkdir', ['-p', home]);
  process.env.HOME = home;
});
afterEach(async () => {
  process.env.HOME = pinnedHome;
  await rm(root, { recursive: true, force: true });
});

it('reads `git config --list -z` entries, a key without a value as true', () => {
  expect(parseConfigList('core.bare\0user.name\nA B\0x.y\nline 1\nline 2\0')).toEqual([
    ['core.bare', 'true'],
    ['user.name', 'A B'],
    ['x.y', 'line 1\nline 2'],
  ]);
});

it("keeps the user's global settings as the run found them, whatever is written to the home folder meanwhile", async () => {
  // An excludes file named in a file ~/.gitconfig includes.
  await writeFile(path.join(home, '.gitconfig'), '[include]\n\tpath = ~/dotfiles/git\n');
  await exec('mkdir', ['-p', path.join(home, 'dotfiles')]);
  await writeFile(path.join(home, 'dotfiles', 'git'), '[core]\n\texcludesFile = ~/dotfiles/ignore\n');
  await writeFile(path.join(home, 'dotfiles', 'ignore'), '*.log\n');
  const dir = path.join(root, 'repo');
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  for (const f of ['a.log', 'b.txt', 'c.txt']) await writeFile(path.join(dir, f), 'x\n');
  const ws = await openWorkspace(dir);
  expect(await listFiles(ws)).toEqual(['b.txt', 'c.txt']);

  const release = await pinGlobalConfig(ws.top);
  try {
    // Untrusted code rewrites the excludes file and the global configuration.
    await appendFile(path.join(home, 'dotfiles', 'ignore'), 'b.txt\n');
    await appendFile(path.join(home, '.gitconfig'), '[core]\n\texcludesFile = /dev/null\n');
    await writeFile(path.join(home, 'more-ignore'), 'c.txt\n');
    await writeFile(path.join(home, 'dotfiles', 'git'), '[core]\n\texcludesFile = ~/more-ignore\n');
    expect(await listFiles(ws)).toEqual(['b.txt', 'c.txt']);
  } finally {
    await release();
  }
  // Unpinned: the home folder's files again (the last excludesFile wins: /dev/null).
  expect(await listFiles(ws)).toEqual(['a.log', 'b.txt', 'c.txt']);
});

it('without a global configuration the run pins none, and no default excludes file either', async () => {
  const dir = path.join(root, 'repo');
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  await writeFile(path.join(dir, 'a.log'), 'x\n');
  const ws = await openWorkspace(dir);
  const release = await pinGlobalConfig(ws.top);
  try {
    // git's default excludes file, written during the run, is not read.
    await exec('mkdir', ['-p', path.join(home, '.config', 'git')]);
    await writeFile(path.join(home, '.config', 'git', 'ignore'), '*.log\n');
    expect(await listFiles(ws)).toEqual(['a.log']);
  } finally {
    await release();
  }
  expect(await listFiles(ws)).toEqual([]);
});

async function repo(): Promise<string> {
  const dir = path.join(root, 'repo');
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  return dir;
}

it("a caller's own GIT_CONFIG entries override the pinned global ones, as they overrode ~/.gitconfig", async () => {
  await writeFile(
    path.join(home, '.gitconfig'),
    '[user]\n\tname = From Global\n[http "https://example.com/"]\n\textraHeader =\n',
  );
  const dir = await repo();
  const own = {
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: 'user.name',
    GIT_CONFIG_VALUE_0: 'From Caller',
    GIT_CONFIG_KEY_1: 'http.https://example.com/.extraheader',
    GIT_CONFIG_VALUE_1: 'AUTHORIZATION: basic abc',
  };
  const read = async () => ({
    name: (await git(dir, ['config', 'user.name'], { env: own })).stdout.trim(),
    headers: (await git(dir, ['config', '--get-urlmatch', 'http.extraheader', 'https://example.com/'], { env: own }))
      .stdout,
  });
  const unpinned = await read();
  expect(unpinned.name).toBe('From Caller');
  const release = await pinGlobalConfig(dir);
  try {
    expect(await read()).toEqual(unpinned);
  } finally {
    await release();
  }
});

it('writes the global configuration back as git reads it: quotes, backslashes, newlines, tabs, subsections with dots and quotes, keys without a value', async () => {
  await writeFile(
    path.join(home, '.gitconfig'),
    [
      '[core]',
      '\tbare',
      '\tpager = less -R # not a comment inside "quotes"',
      '[alias]',
      '\tlg = "log --format=\\"%h\\t%s\\" \\\\ end"',
      '\tml = "line one\\nline two"',
      '[url "https://x.example/a.b/"]',
      '\tinsteadOf = gh:',
      '[branch "Fe\\"at\\\\ure"]',
      '\tremote = origin',
      '[safe]',
      '\tdirectory = /srv/one',
      '\tdirectory = /srv/two',
      '',
    ].join('\n'),
  );
  const dir = path.join(root, 'repo');
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  const list = async (realGlobalConfig: boolean) =>
    parseConfigList((await git(dir, ['config', '--global', '--list', '-z'], { realGlobalConfig })).stdout);
  const real = await list(true);
  expect(real).toContainEqual(['alias.lg', 'log --format="%h\t%s" \\ end']);
  expect(real).toContainEqual(['branch.Fe"at\\ure.remote', 'origin']);
  const release = await pinGlobalConfig(dir);
  try {
    const pinned = await list(false);
    expect(pinned.filter(([key]) => !key.startsWith('core.') || key === 'core.bare' || key === 'core.pager')).toEqual(
      real.filter(([key]) => !key.startsWith('core.') || key === 'core.bare' || key === 'core.pager'),
    );
    expect(pinned.map(([key]) => key)).toEqual(expect.arrayContaining(['core.excludesfile', 'core.attributesfile']));
  } finally {
    await release();
  }
});

it('a second pin on the same workspace: its guards do not find the first pin\'s copies "deleted"', async () => {
  const { localWorkspaces } = await import('../../src/git/local-workspace.js');
  const dir = path.join(root, 'repo');
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  await writeFile(path.join(dir, 'a.txt'), 'a\n');
  await exec('git', ['-C', dir, 'add', '-A']);
  await exec('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '-m', 'a']);
  const ws = await localWorkspaces.open(dir);
  // Two runs on one workspace object (an API caller's, or a test's): each pins, guards and releases.
  for (let run = 0; run < 2; run++) {
    const unpin = await ws.pinGitConfig!();
    try {
      for (let i = 0; i < 2; i++) {
        const guard = await ws.guardGit!('suite');
        expect(await guard.restore()).toEqual([]);
      }
    } finally {
      await unpin();
    }
  }
});
