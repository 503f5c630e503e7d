/**
 * The `.git` guard's tests' repository: one commit on `main`, next to a home folder of its own that
 * HOME points at for the test (git's global files live there). Registers its own beforeEach and
 * afterEach; the returned object's fields are set before each test.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;

export interface GuardRepo {
  root: string;
  dir: string;
  home: string;
}

export function guardRepo(prefix: string): GuardRepo {
  const repo: GuardRepo = { root: '', dir: '', home: '' };
  let pinned: string | undefined;
  beforeEach(async () => {
    repo.root = await mkdtemp(path.join(os.tmpdir(), prefix));
    repo.dir = path.join(repo.root, 'repo');
    repo.home = path.join(repo.root, 'home');
    await mkdir(repo.home);
    pinned = process.env.HOME;
    process.env.HOME = repo.home;
    await exec('git', ['init', '-q', '-b', 'main', repo.dir]);
    await writeFile(path.join(repo.dir, 'a.txt'), 'a\n');
    await exec('git', ['add', '-A'], { cwd: repo.dir });
    await exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one'], { cwd: repo.dir });
  });
  afterEach(async () => {
    process.env.HOME = pinned;
    await rm(repo.root, { recursive: true, force: true });
  });
  return repo;
}
