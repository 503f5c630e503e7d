/**
 * A pull request (or an agent's turn) controls the migrations directory. A migration that is a
 * link leading out of the repository — or the directory itself made such a link — must be refused
 * before it is read: its text would reach the lint's output, an apply error or the schema diff,
 * and /proc/self/environ holds this process's tokens (src/migrations/files.ts readMigrationSet).
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readMigrationSet } from '../../src/migrations/files.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-migration-links-'));
  await mkdir(path.join(root, 'migrations'));
  await writeFile(path.join(root, 'migrations', '1700000000000_first.sql'), '-- Up Migration\nSELECT 1;\n');
});
afterEach(() => rm(root, { recursive: true, force: true }));

const read = (dir = path.join(root, 'migrations')) => readMigrationSet(dir, { relativeTo: root });

it("refuses a migration linked to this process's environment, without quoting it", async () => {
  process.env.CONSORT_TEST_CANARY = 'ghs_canary-that-must-not-leak';
  try {
    await symlink('/proc/self/environ', path.join(root, 'migrations', '1700000000001_env.sql'));
    const error = await read().then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toBe(
      'The migration migrations/1700000000001_env.sql leads outside the repository, or nowhere.',
    );
    expect(JSON.stringify(error)).not.toContain('canary');
  } finally {
    delete process.env.CONSORT_TEST_CANARY;
  }
});

it('refuses a migrations directory linked out of the repository', async () => {
  await symlink('/proc/self', path.join(root, 'elsewhere'));
  await expect(read(path.join(root, 'elsewhere'))).rejects.toThrow(/leads outside the repository/);
});

it('refuses a dangling link, and reads links that stay inside the repository', async () => {
  await mkdir(path.join(root, 'shared'));
  await writeFile(path.join(root, 'shared', 'second.sql'), '-- Up Migration\nSELECT 2;\n');
  await symlink('../shared/second.sql', path.join(root, 'migrations', '1700000000002_second.sql'));
  expect((await read()).map((m) => m.name)).toEqual(['1700000000000_first', '1700000000002_second']);
  await symlink('../shared/missing.sql', path.join(root, 'migrations', '1700000000003_gone.sql'));
  await expect(read()).rejects.toThrow(/1700000000003_gone\.sql leads outside the repository, or nowhere/);
});
