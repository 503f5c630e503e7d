/**
 * The lane reads HEAD before every turn and proof from git's own files instead of starting git: on
 * a branch (loose ref, then packed), detached, and in a linked worktree it must say what git says;
 * where the files are not that plain it says nothing and git is asked.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { headFromFiles, openWorkspace, workspaceHead } from '../../src/git/workspace.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
let root: string;
const git = async (cwd: string, ...args: string[]) => (await exec('git', args, { cwd })).stdout.trim();

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-head-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

it('reads HEAD as git does: a loose ref, a packed one, a detached HEAD, a linked worktree', async () => {
  const dir = path.join(root, 'repo');
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  await git(dir, 'config', 'user.email', 't@example.com');
  await git(dir, 'config', 'user.name', 'T');
  await writeFile(path.join(dir, 'a.txt'), 'a\n');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'one');
  const ws = await openWorkspace(dir);
  const first = await git(dir, 'rev-parse', 'HEAD');
  expect(await headFromFiles(ws)).toBe(first);

  await git(dir, 'pack-refs', '--all');
  expect(await headFromFiles(ws)).toBe(first);
  await writeFile(path.join(dir, 'a.txt'), 'b\n');
  await git(dir, 'commit', '-qam', 'two'); // a loose ref again, newer than the packed line
  const second = await git(dir, 'rev-parse', 'HEAD');
  expect(await headFromFiles(ws)).toBe(second);

  const linked = path.join(root, 'linked');
  await git(dir, 'worktree', 'add', '-q', '--detach', linked, first);
  const wt = await openWorkspace(linked);
  expect(await headFromFiles(wt)).toBe(first);
  await git(linked, 'checkout', '-q', '-b', 'side');
  expect(await headFromFiles(wt)).toBe(first);
  expect(await headFromFiles(ws)).toBe(second);

  await git(dir, 'checkout', '-q', '--detach', first);
  expect(await headFromFiles(ws)).toBe(first);
  expect(await workspaceHead(ws)).toBe(first);
});

it('leaves anything else to git: a HEAD naming a ref that names a ref, a repository without commits', async () => {
  const dir = path.join(root, 'other');
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  const ws = await openWorkspace(dir);
  expect(await headFromFiles(ws)).toBeNull();
  await expect(workspaceHead(ws)).rejects.toThrow(/no commit yet/);
  await git(dir, '-c', 'user.email=t@example.com', '-c', 'user.name=T', 'commit', '-q', '--allow-empty', '-m', 'one');
  await git(dir, 'symbolic-ref', 'refs/heads/alias', 'refs/heads/main');
  await git(dir, 'symbolic-ref', 'HEAD', 'refs/heads/alias');
  expect(await headFromFiles(ws)).toBeNull();
  expect(await workspaceHead(ws)).toBe(await git(dir, 'rev-parse', 'HEAD'));
});
