/**
 * A pull request controls its checkout's `.github/consort.yml`, and may make it a link. A link to a
 * file outside the repository (such as /proc/self/environ) must be refused before it is read: the
 * parse error would otherwise quote that file — this process's environment, tokens among it — into
 * the log and the check's comment (src/config/load.ts).
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { readSeed } from '../../src/lanes/check/baseline.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-config-link-'));
  await mkdir(path.join(root, '.github'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

it("refuses a config that is a link to this process's environment, without quoting it", async () => {
  process.env.CONSORT_TEST_CANARY = 'ghs_canary-that-must-not-leak';
  try {
    await symlink('/proc/self/environ', path.join(root, '.github', 'consort.yml'));
    const error = await loadConfig(root).then(
      () => null,
      (e: unknown) => e as Error & { hint?: string },
    );
    expect(error?.message).toMatch(/^Config file \.github\/consort\.yml leads outside the repository/);
    expect(JSON.stringify(error)).not.toContain('canary');
    expect(String(error?.message)).not.toContain('canary');
  } finally {
    delete process.env.CONSORT_TEST_CANARY;
  }
});

it('refuses a link to a file outside the repository, named by path too', async () => {
  const outside = await mkdtemp(path.join(os.tmpdir(), 'consort-config-outside-'));
  try {
    await writeFile(path.join(outside, 'secret.yml'), 'suite:\n  command: echo hi\n');
    await symlink(path.join(outside, 'secret.yml'), path.join(root, 'mine.yml'));
    await expect(loadConfig(root, { path: 'mine.yml' })).rejects.toThrow(/leads outside the repository/);
  } finally {
    await rm(outside, { recursive: true, force: true });
  }
});

it('reads a link to a file inside the repository, and a regular file', async () => {
  await writeFile(path.join(root, 'base.yml'), 'suite:\n  command: echo linked\n');
  await symlink('../base.yml', path.join(root, '.github', 'consort.yml'));
  expect((await loadConfig(root)).config.suite.command).toBe('echo linked');
  await rm(path.join(root, '.github', 'consort.yml'));
  await writeFile(path.join(root, '.github', 'consort.yml'), 'suite:\n  command: echo plain\n');
  expect((await loadConfig(root)).config.suite.command).toBe('echo plain');
});

it('refuses a seed file linked out of the repository (the check applies it, and its errors quote it)', async () => {
  await symlink('/proc/self/environ', path.join(root, 'seed.sql'));
  await expect(readSeed(root, 'seed.sql')).rejects.toThrow(
    'Cannot read the seed file seed.sql: it leads outside the repository.',
  );
  await writeFile(path.join(root, 'real.sql'), 'SELECT 1;\n');
  await rm(path.join(root, 'seed.sql'));
  await symlink('real.sql', path.join(root, 'seed.sql'));
  expect(await readSeed(root, 'seed.sql')).toBe('SELECT 1;\n');
});
