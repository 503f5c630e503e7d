/**
 * A pull request controls its checkout, `node_modules` too when it commits one: as a link to a
 * directory outside the repository, the check's scratch directory (node_modules/.cache/consort,
 * src/lanes/check/workdir.ts) would be made there, the PR's migration files written there and old
 * scratch folders of dead runs swept there. Only a real directory inside the repository is used,
 * each of its components checked; anything else falls back to the system temp directory.
 */
import { lstat, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createWorkdir } from '../../src/lanes/check/workdir.js';
import { migrationSetFromEntries } from '../../src/migrations/files.js';

let root: string;
let target: string;
/** A scratch folder of a run whose process is gone (no pid is this high): a sweep removes it. */
let dead: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-scratch-link-'));
  target = await mkdtemp(path.join(os.tmpdir(), 'consort-scratch-target-'));
  dead = path.join(target, '.cache', 'consort', 'consort-check-99999999-x');
  await mkdir(dead, { recursive: true });
  await mkdir(path.join(root, 'packages/db/migrations'), { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(target, { recursive: true, force: true });
});

/** Where the scratch directory goes, after writing a migration set in it. */
async function scratchParent(at: string | { root: string; dir: string }): Promise<string> {
  const w = await createWorkdir(at);
  try {
    await w.write(
      'head',
      'migrations',
      migrationSetFromEntries([{ file: 'migrations/1_a.sql', content: 'SELECT 1;' }]),
    );
    return path.dirname(w.root);
  } finally {
    await w.dispose();
  }
}

/** Nothing written in the link's target, and nothing swept there. */
async function untouched(): Promise<void> {
  expect(await readdir(target)).toEqual(['.cache']);
  expect(await readdir(path.join(target, '.cache'))).toEqual(['consort']);
  expect(await readdir(path.join(target, '.cache', 'consort'))).toEqual([path.basename(dead)]);
  expect((await lstat(dead)).isDirectory()).toBe(true);
}

it('a node_modules that is a link to a directory outside: scratch in the temp directory', async () => {
  await symlink(target, path.join(root, 'node_modules'));
  expect(await scratchParent(root)).toBe(os.tmpdir());
  await untouched();
});

it("a monorepo package's node_modules that is a link: scratch in the temp directory", async () => {
  await mkdir(path.join(root, 'node_modules'));
  await symlink(target, path.join(root, 'packages/db/node_modules'));
  expect(await scratchParent({ root, dir: path.join(root, 'packages/db') })).toBe(os.tmpdir());
  await untouched();
});

it('a real node_modules whose .cache, or .cache/consort, is a link: scratch in the temp directory', async () => {
  await mkdir(path.join(root, 'node_modules'));
  await symlink(path.join(target, '.cache'), path.join(root, 'node_modules', '.cache'));
  expect(await scratchParent(root)).toBe(os.tmpdir());
  await untouched();
  await rm(path.join(root, 'node_modules', '.cache'));
  await mkdir(path.join(root, 'node_modules', '.cache'));
  await symlink(path.join(target, '.cache', 'consort'), path.join(root, 'node_modules', '.cache', 'consort'));
  expect(await scratchParent(root)).toBe(os.tmpdir());
  await untouched();
});

it('a real node_modules in the repository keeps its scratch there', async () => {
  await mkdir(path.join(root, 'node_modules'));
  expect(await scratchParent(root)).toBe(path.join(root, 'node_modules', '.cache', 'consort'));
});
