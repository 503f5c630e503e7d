/**
 * After a suite the conductor puts the worktree's index and HEAD back (src/git/local-workspace.ts
 * guardGit('suite')): each is written aside in the git directory (`index.consort-<pid>`,
 * `HEAD.consort-<pid>`) and renamed over the file. Without bubblewrap the suite can write `.git`,
 * and the conductor's id is in every proof folder's name: what it leaves at those names must not
 * be written through (a link to a file outside) or block the conductor (a FIFO).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openWorkspace, restoreHeadFile, writeIndexBytes, type GitWorkspace } from '../../src/git/workspace.js';

let root: string;
let dir: string;
let gws: GitWorkspace;
const children: ChildProcess[] = [];

const git = (...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, encoding: 'utf8' }).trim();

beforeEach(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'consort-git-temp-'));
  dir = path.join(root, 'repo');
  execFileSync('git', ['init', '-q', dir]);
  writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  git('add', '-A');
  git('commit', '-qm', 'base');
  gws = await openWorkspace(dir);
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

const temp = (name: 'index' | 'HEAD') => path.join(dir, '.git', `${name}.consort-${process.pid}`);

it.each(['index', 'HEAD'] as const)('a link planted at the %s temp name is not written through', async (name) => {
  const victim = path.join(root, 'victim');
  writeFileSync(victim, 'precious\n');
  const bytes = readFileSync(path.join(dir, '.git', name));
  symlinkSync(victim, temp(name));
  if (name === 'index') await writeIndexBytes(gws, bytes);
  else {
    writeFileSync(path.join(dir, '.git', 'HEAD'), 'ref: refs/heads/elsewhere\n');
    expect(await restoreHeadFile(gws, bytes)).toBe(true);
  }
  expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  expect(lstatSync(path.join(dir, '.git', name)).isFile()).toBe(true);
  expect(readFileSync(path.join(dir, '.git', name)).equals(bytes)).toBe(true);
});

it.each(['index', 'HEAD'] as const)('a FIFO planted at the %s temp name does not block the conductor', async (name) => {
  const bytes = readFileSync(path.join(dir, '.git', name));
  execFileSync('mkfifo', [temp(name)]);
  // Opens the FIFO for reading after a while, so a write that blocks on it ends (and the test with it).
  children.push(spawn('sh', ['-c', 'sleep 3; exec cat "$0" > /dev/null', temp(name)], { stdio: 'ignore' }));
  const started = Date.now();
  if (name === 'index') await writeIndexBytes(gws, bytes);
  else {
    writeFileSync(path.join(dir, '.git', 'HEAD'), 'ref: refs/heads/elsewhere\n');
    await restoreHeadFile(gws, bytes);
  }
  expect(Date.now() - started).toBeLessThan(2000);
  expect(lstatSync(path.join(dir, '.git', name)).isFile()).toBe(true);
  expect(readFileSync(path.join(dir, '.git', name)).equals(bytes)).toBe(true);
});
