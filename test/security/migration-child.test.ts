/**
 * A repository's JS/TS migrations are its code: they never run inside Consort's process (the
 * App's holds PRIVATE_KEY and WEBHOOK_SECRET, the Action's its tokens). Every lane applies
 * migrations through applyMigrations, which runs such a set in a child process with the
 * allow-listed basics only. The migration here reads its environment and writes what it saw into
 * the database it migrates; this process has the App's secrets set while it runs.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import { applyMigrations, openMigrationRunner } from '../../src/migrations/runner.js';
import { query, SYSTEM_PG_URL } from '../helpers/servers.js';

const SNOOP = `exports.up = (pgm) => {
  const seen = JSON.stringify({ pid: process.pid, keys: Object.keys(process.env).sort(), key: process.env.PRIVATE_KEY ?? null });
  pgm.sql("CREATE TABLE seen (what text)");
  pgm.sql(\`INSERT INTO seen VALUES ('\${seen.replace(/'/g, "''")}')\`);
};
exports.down = (pgm) => { pgm.sql('DROP TABLE seen'); };
`;
const BROKEN = "exports.up = () => { throw new Error('the migration broke on purpose'); };\n";

let dir: string;
let db: string;
let url: string;
const saved = { PRIVATE_KEY: process.env.PRIVATE_KEY, WEBHOOK_SECRET: process.env.WEBHOOK_SECRET };

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-migration-child-'));
  db = `mchild_${randomBytes(5).toString('hex')}`;
  await withClient(SYSTEM_PG_URL, (c) => c.query(`CREATE DATABASE ${quoteIdent(db)}`));
  url = withDatabase(SYSTEM_PG_URL, db);
  process.env.PRIVATE_KEY = '-----BEGIN RSA PRIVATE KEY----- app-secret';
  process.env.WEBHOOK_SECRET = 'webhook-secret';
});

afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await withClient(SYSTEM_PG_URL, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(db)} WITH (FORCE)`));
  await rm(dir, { recursive: true, force: true });
});

it('runs a JS migration in a child process that sees neither PRIVATE_KEY nor WEBHOOK_SECRET', async () => {
  const migrations = path.join(dir, 'snoop');
  await mkdir(migrations);
  await writeFile(path.join(migrations, '1700000000000_snoop.js'), SNOOP);
  const r = await applyMigrations({
    databaseUrl: url,
    dir: migrations,
    relativeTo: dir,
    direction: 'up',
    migrationsTable: 'pgmigrations',
  });
  expect(r.ok).toBe(true);
  // What the report needs still comes back: the migration and the SQL it sent.
  expect(r.applied).toEqual([
    expect.objectContaining({ name: '1700000000000_snoop', file: 'snoop/1700000000000_snoop.js', transactional: true }),
  ]);
  expect(r.applied[0]!.sql.some((s) => s.startsWith('CREATE TABLE seen'))).toBe(true);
  const [row] = await query<{ what: string }>(url, 'SELECT what FROM seen');
  const seen = JSON.parse(row!.what) as { pid: number; keys: string[]; key: string | null };
  expect(seen.pid).not.toBe(process.pid);
  expect(seen.key).toBeNull();
  expect(seen.keys).not.toEqual(expect.arrayContaining(['WEBHOOK_SECRET']));
  expect(seen.keys.filter((k) => /TOKEN|SECRET|KEY|INPUT_|ACTIONS_/.test(k))).toEqual([]);
  expect(seen.keys).toContain('PATH');
});

it('reports a JS migration that throws as the same script failure, from the child', async () => {
  const migrations = path.join(dir, 'broken');
  await mkdir(migrations);
  await writeFile(path.join(migrations, '1700000000001_broken.js'), BROKEN);
  const r = await applyMigrations({
    databaseUrl: url,
    dir: migrations,
    relativeTo: dir,
    direction: 'up',
    migrationsTable: 'pgmigrations_broken',
  });
  expect(r).toMatchObject({
    ok: false,
    failed: {
      kind: 'script',
      name: '1700000000001_broken',
      file: 'broken/1700000000001_broken.js',
      error: { message: expect.stringContaining('broke on purpose') },
    },
  });
});

describe('a runner kept for a run (the PR lane: one child per side)', () => {
  /** Each up records the pid and environment of the process it ran in; each down removes its row. */
  const PID = (n: number) => `exports.up = (pgm) => {
  const seen = JSON.stringify({ pid: process.pid, key: process.env.PRIVATE_KEY ?? null });
  pgm.sql("CREATE TABLE IF NOT EXISTS pids (n int, what text)");
  pgm.sql(\`INSERT INTO pids VALUES (${n}, '\${seen}')\`);
};
exports.down = (pgm) => { pgm.sql('DELETE FROM pids WHERE n = ${n}'); };
`;
  const EXIT = 'exports.up = () => { process.exit(3); };\n';

  it('applies step after step in one child process that is not this one and sees no secret', async () => {
    const migrations = path.join(dir, 'kept');
    await mkdir(migrations);
    await writeFile(path.join(migrations, '1700000000001_a.js'), PID(1));
    await writeFile(path.join(migrations, '1700000000002_b.js'), PID(2));
    const runner = openMigrationRunner();
    const step = (direction: 'up' | 'down') =>
      runner.apply({
        databaseUrl: url,
        dir: migrations,
        relativeTo: dir,
        direction,
        count: 1,
        migrationsTable: 'pgmigrations_kept',
      });
    try {
      runner.warm(undefined, [{ kind: 'js' }]);
      for (const direction of ['up', 'up', 'down', 'up'] as const) expect((await step(direction)).ok).toBe(true);
    } finally {
      await runner.close();
    }
    const rows = await query<{ n: number; what: string }>(url, 'SELECT n, what FROM pids ORDER BY n');
    const seen = rows.map((r) => ({ n: r.n, ...(JSON.parse(r.what) as { pid: number; key: string | null }) }));
    expect(seen.map((r) => r.n)).toEqual([1, 2]);
    expect(new Set(seen.map((r) => r.pid)).size).toBe(1);
    expect(seen[0]!.pid).not.toBe(process.pid);
    expect(seen.every((r) => r.key === null)).toBe(true);
  });

  it('replaces a child a migration ended, and says what happened', async () => {
    const migrations = path.join(dir, 'exits');
    await mkdir(migrations);
    await writeFile(path.join(migrations, '1700000000001_exits.js'), EXIT);
    const ok = path.join(dir, 'after-exit');
    await mkdir(ok);
    await writeFile(path.join(ok, '1700000000001_a.js'), PID(7));
    const runner = openMigrationRunner();
    try {
      await expect(
        runner.apply({ databaseUrl: url, dir: migrations, direction: 'up', migrationsTable: 'pgmigrations_exits' }),
      ).rejects.toThrow('The migration process ended without a result');
      const r = await runner.apply({
        databaseUrl: url,
        dir: ok,
        direction: 'up',
        migrationsTable: 'pgmigrations_after_exit',
      });
      expect(r.ok).toBe(true);
    } finally {
      await runner.close();
    }
  });
});
