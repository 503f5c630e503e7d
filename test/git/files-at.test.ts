/**
 * `filesAt`: a side's migrations as a commit holds them, the way node-pg-migrate reads the folder:
 * its own files only, whatever spelling of the folder the configuration uses.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { filesAt } from '../../src/git/repo.js';
import { execFileAsync } from '../helpers/exec-file.js';

let repo: string;
let sha: string;
beforeAll(async () => {
  repo = await mkdtemp(path.join(os.tmpdir(), 'consort-files-at-'));
  await mkdir(path.join(repo, 'db', 'migrations', 'sql'), { recursive: true });
  await writeFile(path.join(repo, 'db', 'migrations', '0001_a.sql'), 'SELECT 1;\n');
  await writeFile(path.join(repo, 'db', 'migrations', 'sql', '0001_a.up.sql'), 'SELECT 2;\n');
  await writeFile(path.join(repo, 'top.sql'), 'SELECT 3;\n');
  // A folder whose name git's pathspecs would read as a pattern (`[v]` matches `v`).
  await mkdir(path.join(repo, 'm[v]'));
  await writeFile(path.join(repo, 'm[v]', '0001_b.sql'), 'SELECT 4;\n');
  await mkdir(path.join(repo, 'mv'));
  await writeFile(path.join(repo, 'mv', '0001_c.sql'), 'SELECT 5;\n');
  const git = (...args: string[]) => execFileAsync('git', ['-C', repo, ...args]);
  await git('init', '-q');
  await git('add', '-A');
  await git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one');
  sha = (await git('rev-parse', 'HEAD')).stdout.trim();
});
afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});

it.each(['db/migrations', './db/migrations', 'db/migrations/', './db/./migrations//', 'db\\migrations'])(
  'reads the folder written %j: its own files, not its subfolder',
  async (dir) => {
    expect(await filesAt(repo, sha, dir)).toEqual([{ file: 'db/migrations/0001_a.sql', content: 'SELECT 1;\n' }]);
  },
);

it('reads the root as "." and "./"', async () => {
  for (const dir of ['.', './']) expect((await filesAt(repo, sha, dir)).map((f) => f.file)).toEqual(['top.sql']);
});

it('reads a folder named like a pattern as that folder alone', async () => {
  expect(await filesAt(repo, sha, 'm[v]')).toEqual([{ file: 'm[v]/0001_b.sql', content: 'SELECT 4;\n' }]);
  expect(await filesAt(repo, sha, 'mv')).toEqual([{ file: 'mv/0001_c.sql', content: 'SELECT 5;\n' }]);
});
