/**
 * A linked worktree has a git directory of its own (`<common>/worktrees/<name>/`), and git reads two
 * control files there: `commondir`, which says where the object store, the refs and `config` are
 * (pointed at a repository of the agent's, every later git call of the conductor reads its
 * objects and its config), and `config.worktree`, read as the worktree's configuration when
 * `extensions.worktreeConfig` is set (a `core.hooksPath` or a clean filter). The guard compares and
 * puts back both, as it does the common directory's own files.
 */
import { lstat, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localWorkspaces } from '../../src/git/local-workspace.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
let root: string;
let main: string;
let wt: string;

const git = async (cwd: string, ...args: string[]) =>
  (await exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd })).stdout.trim();

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-guard-worktree-'));
  main = path.join(root, 'repo');
  wt = path.join(root, 'wt');
  await exec('git', ['init', '-q', '-b', 'main', main]);
  await writeFile(path.join(main, 'a.txt'), 'a\n');
  await git(main, 'add', '-A');
  await git(main, 'commit', '-qm', 'one');
  await git(main, 'worktree', 'add', '-q', '--detach', wt);
  // The user's own set-up: per-worktree configuration on, with a setting of this worktree's.
  await git(main, 'config', 'extensions.worktreeConfig', 'true');
  await git(wt, 'config', '--worktree', 'core.autocrlf', 'false');
});
afterEach(() => rm(root, { recursive: true, force: true }));

const gone = async (p: string) => (await lstat(p).catch(() => null)) === null;

it("a linked worktree's commondir and config.worktree, rewritten or planted during a turn, are put back", async () => {
  const common = path.join(main, '.git');
  const own = path.join(common, 'worktrees', 'wt');
  const commondir = await readFile(path.join(own, 'commondir'));
  const worktreeConfig = await readFile(path.join(own, 'config.worktree'));
  const forged = path.join(root, 'forged');
  await exec('git', ['init', '-q', '-b', 'main', forged]);
  const ws = await localWorkspaces.open(wt);
  const guard = await ws.guardGit('turn');
  await writeFile(path.join(own, 'commondir'), `${path.join(forged, '.git')}\n`);
  await writeFile(path.join(own, 'config.worktree'), '[core]\n\thooksPath = /tmp/evil-hooks\n');
  expect(await git(wt, 'rev-parse', '--git-common-dir')).toBe(path.join(forged, '.git')); // what git now reads

  const changes = (await guard.restore()).map((c) => `${c.status} ${c.path}`);

  expect(changes).toEqual(['modified .git/worktrees/wt/commondir', 'modified .git/worktrees/wt/config.worktree']);
  expect(await readFile(path.join(own, 'commondir'))).toEqual(commondir);
  expect(await readFile(path.join(own, 'config.worktree'))).toEqual(worktreeConfig);
  expect(path.resolve(wt, await git(wt, 'rev-parse', '--git-common-dir'))).toBe(common);
  expect(await (await ws.guardGit('turn')).restore()).toEqual([]);
}, 30_000);

it("a config.worktree planted in a linked worktree's git directory (or the main one's) is removed", async () => {
  const common = path.join(main, '.git');
  const own = path.join(common, 'worktrees', 'wt');
  await rm(path.join(own, 'config.worktree'));
  const ws = await localWorkspaces.open(wt);
  const guard = await ws.guardGit('turn');
  await writeFile(path.join(own, 'config.worktree'), '[core]\n\tfsmonitor = /tmp/evil\n');
  await writeFile(path.join(common, 'config.worktree'), '[core]\n\tfsmonitor = /tmp/evil\n');

  const changes = (await guard.restore()).map((c) => `${c.status} ${c.path}`);

  expect(changes).toEqual(['added .git/config.worktree', 'added .git/worktrees/wt/config.worktree']);
  expect(await gone(path.join(own, 'config.worktree'))).toBe(true);
  expect(await gone(path.join(common, 'config.worktree'))).toBe(true);
}, 30_000);
