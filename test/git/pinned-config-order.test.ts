/**
 * A pinned global configuration (src/git/pinned-config.ts) is still *global*: what a caller passes
 * as its own command-scope entries (GIT_CONFIG_COUNT, e.g. the Action's push auth header) must win
 * over it, as it did over ~/.gitconfig before the pin. git applies GIT_CONFIG_KEY_n in index order
 * (the last value of a single-valued key wins; an empty `http.extraHeader` clears the list), so the
 * pinned entries have to come before the caller's, not after.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { git } from '../../src/git/exec.js';
import { pinGlobalConfig } from '../../src/git/pinned-config.js';

const exec = promisify(execFile);
let root: string;
let home: string;
const pinnedHome = process.env.HOME;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-pin-order-'));
  home = path.join(root, 'home');
  await exec('mkdir', ['-p', home]);
  process.env.HOME = home;
});
afterEach(async () => {
  process.env.HOME = pinnedHome;
  await rm(root, { recursive: true, force: true });
});

async function repo(): Promise<string> {
  const dir = path.join(root, 'repo');
  await exec('git', ['init', '-q', '-b', 'main', dir]);
  return dir;
}

it("a caller's own GIT_CONFIG entries override the pinned global ones, as they overrode ~/.gitconfig", async () => {
  await writeFile(
    path.join(home, '.gitconfig'),
    '[user]\n\tname = From Global\n[http "https://example.com/"]\n\textraHeader =\n',
  );
  const dir = await repo();
  const own = {
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: 'user.name',
    GIT_CONFIG_VALUE_0: 'From Caller',
    GIT_CONFIG_KEY_1: 'http.https://example.com/.extraheader',
    GIT_CONFIG_VALUE_1: 'AUTHORIZATION: basic abc',
  };
  const read = async () => ({
    name: (await git(dir, ['config', 'user.name'], { env: own })).stdout.trim(),
    headers: (await git(dir, ['config', '--get-urlmatch', 'http.extraheader', 'https://example.com/'], { env: own }))
      .stdout,
  });
  const unpinned = await read();
  expect(unpinned.name).toBe('From Caller');
  const release = await pinGlobalConfig(dir);
  try {
    expect(await read()).toEqual(unpinned);
  } finally {
    await release();
  }
});
