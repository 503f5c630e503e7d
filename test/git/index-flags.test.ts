/**
 * After a turn, the Workspace asks git for index flags (`skip-worktree`, `assume-unchanged`, which
 * hide an edit from `git status`) only when the index changed during the turn: flags live in the
 * index, so an agent that sets one changes it, and the flagged edit is still seen.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localWorkspaces } from '../../src/git/local-workspace.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
let dir: string;
const git = async (...args: string[]) => (await exec('git', args, { cwd: dir })).stdout.trim();

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-flags-'));
  await git('init', '-q', '-b', 'main');
  await writeFile(path.join(dir, 'a.test.js'), 'test a\n');
  await writeFile(path.join(dir, 'b.js'), 'b\n');
  await git('add', '-A');
  await git('-c', 'user.email=t@example.com', '-c', 'user.name=T', 'commit', '-qm', 'one');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it.each(['--skip-worktree', '--assume-unchanged'])(
  'sees an edit hidden behind %s set during the turn, and clears the flag',
  async (flag) => {
    const ws = await localWorkspaces.open(dir);
    const base = await ws.head();
    const guard = await ws.guardGit();
    await git('update-index', flag, 'a.test.js');
    await writeFile(path.join(dir, 'a.test.js'), 'test a, weakened\n');
    expect(await guard.restore()).toEqual([]);
    expect(await ws.changesSince(base)).toEqual([{ path: 'a.test.js', status: 'modified' }]);
    expect(await git('ls-files', '-v', 'a.test.js')).toBe('H a.test.js');
  },
);

it('sees plain edits when the turn left the index alone', async () => {
  const ws = await localWorkspaces.open(dir);
  const base = await ws.head();
  const guard = await ws.guardGit();
  await writeFile(path.join(dir, 'b.js'), 'b changed\n');
  await writeFile(path.join(dir, 'c.js'), 'c\n');
  await guard.restore();
  expect(await ws.changesSince(base)).toEqual([
    { path: 'b.js', status: 'modified' },
    { path: 'c.js', status: 'added' },
  ]);
});
