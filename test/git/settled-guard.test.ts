/**
 * The settled-snapshot guard (src/git/local-workspace.ts): after a guard's restore, the next guard
 * starts from what that restore put back. Between the two the conductor itself moves on — it
 * commits the turn's work. Its own change must not be taken for a suite's and put back.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localWorkspaces } from '../../src/git/local-workspace.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-settled-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });

it.each([
  ['on a branch', false],
  ['on a detached HEAD', true],
])("a suite's guard after the conductor's commit %s puts nothing back", async (_, detached) => {
  const dir = path.join(root, 'repo');
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  await writeFile(path.join(dir, 'a.txt'), 'a\n');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'one');
  if (detached) await git(dir, 'checkout', '-q', '--detach');
  const ws = await localWorkspaces.open(dir);

  const turn = await ws.guardGit('turn');
  await writeFile(path.join(dir, 'b.txt'), 'b\n'); // the agent's work
  expect(await turn.restore()).toEqual([]);
  await ws.commitPaths(['b.txt'], 'the turn'); // the conductor commits it
  const committed = await ws.head();

  const suite = await ws.guardGit('suite');
  // The suite touches nothing of git's.
  expect(await suite.restore()).toEqual([]);
  expect(await ws.head()).toBe(committed);
});
