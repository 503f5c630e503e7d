/**
 * The guard reads what it compares into memory, synchronously. A file an agent plants under a
 * guarded folder, or a guarded file it grows, can be gigabytes: after the turn, a file whose size
 * differs from the snapshot's is a change without reading it, and one the snapshot did not have is
 * removed without reading it. The files here are sparse (no disk), but read they would still fill
 * memory: what the guard's process reads (`rchar` in /proc/self/io, every byte read(2) returned to
 * it or to a child it waited for) stays far below their size.
 */
import { existsSync, readFileSync } from 'node:fs';
import { lstat, readFile, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { localWorkspaces } from '../../src/git/local-workspace.js';
import { guardRepo } from '../helpers/guard-repo.js';

let dir: string;
let home: string;
const repo = guardRepo('consort-guard-large-');
beforeEach(() => {
  ({ dir, home } = repo);
});

/** Bytes this process has read so far (files, pipes, and children it has waited for). */
const bytesRead = (): number => Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
const gone = async (p: string) => (await lstat(p).catch(() => null)) === null;
// Under the 2 GiB that readFileSync refuses outright: read, each would be a whole GiB in memory.
const GIB = 1024 ** 3;

(existsSync('/proc/self/io') ? it : it.skip)(
  'a file planted or grown to a GiB under .git and in the home folder is put away without being read',
  async () => {
    const gitDir = path.join(dir, '.git');
    const exclude = await readFile(path.join(gitDir, 'info', 'exclude'));
    await writeFile(path.join(home, '.gitconfig'), '[user]\n\tname = t\n');
    const ws = await localWorkspaces.open(dir);
    const guard = await ws.guardGit('turn');
    await writeFile(path.join(gitDir, 'hooks', 'pre-commit'), '');
    await truncate(path.join(gitDir, 'hooks', 'pre-commit'), GIB); // planted
    await truncate(path.join(gitDir, 'info', 'exclude'), GIB); // grown
    await truncate(path.join(home, '.gitconfig'), GIB); // grown

    const read = bytesRead();
    const changes = (await guard.restore()).map((c) => `${c.status} ${c.path}`);
    const readByRestore = bytesRead() - read;

    expect(changes).toEqual(['added .git/hooks/pre-commit', 'modified .git/info/exclude', 'modified ~/.gitconfig']);
    expect(readByRestore).toBeLessThan(64 * 1024 ** 2);
    expect(await gone(path.join(gitDir, 'hooks', 'pre-commit'))).toBe(true);
    expect(await readFile(path.join(gitDir, 'info', 'exclude'))).toEqual(exclude);
    expect(await readFile(path.join(home, '.gitconfig'), 'utf8')).toBe('[user]\n\tname = t\n');
    expect(await (await ws.guardGit('turn')).restore()).toEqual([]);
  },
  60_000,
);
