/**
 * What an agent plants under `.git` (or in the home folder) can make the guard's own reads fail
 * with more than ENOENT: a symlink loop (`a -> b -> a`: ELOOP) or a link to a name too long for
 * the kernel (ENAMETOOLONG). Such an entry holds nothing git could read, but planted it is a change:
 * reported and removed (the link itself), and everything else the turn changed is still put back —
 * the guard must not stop before it restores anything.
 */
import { appendFile, lstat, mkdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { localWorkspaces } from '../../src/git/local-workspace.js';
import { guardRepo } from '../helpers/guard-repo.js';

let dir: string;
let home: string;
const repo = guardRepo('consort-guard-errors-');
beforeEach(() => {
  ({ dir, home } = repo);
});

const gone = async (p: string) => (await lstat(p).catch(() => null)) === null;
const tooLong = 'x'.repeat(300); // one name longer than NAME_MAX (255)

it('a symlink loop and a name too long, planted under .git and in the home folder, are put away with the rest', async () => {
  const gitDir = path.join(dir, '.git');
  const config = await readFile(path.join(gitDir, 'config'));
  const ws = await localWorkspaces.open(dir);
  const guard = await ws.guardGit('turn');
  await symlink('b', path.join(gitDir, 'info', 'a'));
  await symlink('a', path.join(gitDir, 'info', 'b'));
  await symlink(tooLong, path.join(gitDir, 'hooks', 'pre-commit'));
  await mkdir(path.join(home, '.config', 'git'), { recursive: true });
  await symlink('attributes', path.join(home, '.config', 'git', 'attributes')); // a loop of one
  await symlink(path.join(home, tooLong), path.join(home, '.gitconfig'));
  await appendFile(path.join(gitDir, 'config'), '[core]\n\tfsmonitor = /tmp/evil\n');

  const changes = (await guard.restore()).map((c) => `${c.status} ${c.path}`);

  expect(changes).toEqual(
    expect.arrayContaining([
      'added .git/info/a',
      'added .git/info/b',
      'added .git/hooks/pre-commit',
      'modified .git/config',
      'added ~/.config/git/attributes',
      'added ~/.gitconfig',
    ]),
  );
  for (const planted of [
    path.join(gitDir, 'info', 'a'),
    path.join(gitDir, 'info', 'b'),
    path.join(gitDir, 'hooks', 'pre-commit'),
    path.join(home, '.config', 'git', 'attributes'),
    path.join(home, '.gitconfig'),
  ])
    expect(await gone(planted)).toBe(true);
  expect(await readFile(path.join(gitDir, 'config'))).toEqual(config);
  expect(await (await ws.guardGit('turn')).restore()).toEqual([]);
}, 30_000);

it('such an entry already there at the snapshot is no change: the guard starts and finds nothing', async () => {
  const gitDir = path.join(dir, '.git');
  await symlink('b', path.join(gitDir, 'info', 'a'));
  await symlink('a', path.join(gitDir, 'info', 'b'));
  await symlink(tooLong, path.join(gitDir, 'hooks', 'pre-commit'));
  const ws = await localWorkspaces.open(dir);

  const guard = await ws.guardGit('turn');

  expect(await guard.restore()).toEqual([]);
}, 30_000);
