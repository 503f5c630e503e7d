/**
 * A repository's JS/TS migrations are its code: they never run inside Consort's process (the
 * App's holds PRIVATE_KEY and WEBHOOK_SECRET, the Action's its tokens). Every lane applies
 * migrations through applyMigrations, which runs such a set in a child process with the
 * allow-listed basics only. The migration here reads its environment and writes what it saw into
 * the database it migrates; this process has the App's secrets set while it runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import { MigrationChild } from '../../src/migrations/isolated.js';
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

it("expands a .env's references in the child, against its own environment: never to Consort's secrets", async () => {
  // A project with dotenv and dotenv-expand: node-pg-migrate's CLI loads .env and expands it.
  const tree = path.join(dir, 'expanding');
  const migrations = path.join(tree, 'migrations');
  await mkdir(migrations, { recursive: true });
  await writeFile(
    path.join(tree, 'package.json'),
    JSON.stringify({ private: true, devDependencies: { dotenv: '^16', 'dotenv-expand': '^12' } }),
  );
  await writeFile(
    path.join(tree, '.env'),
    [
      'APP_HOME=${HOME}/app',
      'APP_NAME=notes',
      'APP_SCHEMA=${APP_NAME}_v2',
      'LEAK_TOKEN=${GITHUB_TOKEN}',
      'LEAK_KEY=${PRIVATE_KEY:-none}',
      'LEAK_DB=${DATABASE_URL:-no-db}',
      'DATABASE_URL=postgres://dev@localhost/dev',
      '',
    ].join('\n'),
  );
  const names = ['APP_HOME', 'APP_SCHEMA', 'LEAK_TOKEN', 'LEAK_KEY', 'LEAK_DB', 'DATABASE_URL'];
  await writeFile(
    path.join(migrations, '1700000000002_dotenv.js'),
    `exports.up = (pgm) => {
  const seen = JSON.stringify(Object.fromEntries(${JSON.stringify(names)}.map((k) => [k, process.env[k] ?? null])));
  pgm.sql("CREATE TABLE dotenv_seen (what text)");
  pgm.sql(\`INSERT INTO dotenv_seen VALUES ('\${seen.replace(/'/g, "''")}')\`);
};
`,
  );
  const token = process.env.GITHUB_TOKEN;
  process.env.GITHUB_TOKEN = 'ghs_consort-own-token';
  try {
    const r = await applyMigrations({
      databaseUrl: url,
      dir: migrations,
      relativeTo: tree,
      direction: 'up',
      migrationsTable: 'pgmigrations_dotenv',
    });
    expect(r.ok).toBe(true);
  } finally {
    if (token === undefined) delete process.env.GITHUB_TOKEN;
    else process.env.GITHUB_TOKEN = token;
  }
  const [row] = await query<{ what: string }>(url, 'SELECT what FROM dotenv_seen');
  const seen = JSON.parse(row!.what) as Record<string, string | null>;
  expect(seen).toMatchObject({
    APP_SCHEMA: 'notes_v2',
    LEAK_TOKEN: '',
    LEAK_KEY: 'none',
    LEAK_DB: 'no-db',
    DATABASE_URL: null,
  });
  expect(seen.APP_HOME).toMatch(/^\/.+\/app$/);
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

/**
 * A JS migration that looks for Consort's secrets in every /proc/<pid>/environ it can read, and
 * leaves a `setsid` daemon behind that would write a file once the migration is over.
 */
const LINGER = (late: string) => `const { execFileSync, spawn } = require('node:child_process');
const { readdirSync, readFileSync } = require('node:fs');
exports.up = (pgm) => {
  let found = [];
  let read = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\\d+$/.test(p))) {
    try { const text = readFileSync('/proc/' + pid + '/environ', 'latin1'); read += 1; if (text.includes('app-secret')) found.push(pid); } catch {}
  }
  spawn('setsid', ['sh', '-c', 'sleep 2; touch ${late}'], { detached: true, stdio: 'ignore' }).unref();
  const seen = JSON.stringify({ found, read });
  pgm.sql("CREATE TABLE IF NOT EXISTS lingered (what text)");
  pgm.sql(\`INSERT INTO lingered VALUES ('\${seen}')\`);
};
exports.down = false;
`;

describe.each(['bwrap', 'unshare', 'sweep'])('the migration child under %s isolation', (kind) => {
  const pinned = process.env.CONSORT_ISOLATION;
  // /proc/<pid>/environ shows a process's starting environment: a process of Consort's that was
  // started with the secret (as the App's is) stands next to the migration while it runs.
  let holder: ChildProcess;
  beforeAll(() => {
    process.env.CONSORT_ISOLATION = kind;
    holder = spawn('sleep', ['60'], { env: { PATH: process.env.PATH, PRIVATE_KEY: 'app-secret' }, stdio: 'ignore' });
  });
  afterAll(() => {
    holder.kill('SIGKILL');
    if (pinned === undefined) delete process.env.CONSORT_ISOLATION;
    else process.env.CONSORT_ISOLATION = pinned;
  });

  it(`leaves nothing running after it${kind === 'sweep' ? '' : ", and cannot read Consort's environment from /proc"}`, async () => {
    const migrations = path.join(dir, `linger-${kind}`);
    const late = path.join(dir, `late-${kind}`);
    await mkdir(migrations);
    await writeFile(path.join(migrations, '1700000000002_linger.js'), LINGER(late));
    const r = await applyMigrations({
      databaseUrl: url,
      dir: migrations,
      relativeTo: dir,
      direction: 'up',
      migrationsTable: `pgmigrations_${kind}`,
    });
    expect(r.ok).toBe(true);
    const rows = await query<{ what: string }>(url, 'SELECT what FROM lingered');
    const seen = JSON.parse(rows.at(-1)!.what) as { found: string[]; read: number };
    expect(seen.read).toBeGreaterThan(0);
    // Without a namespace the child shares /proc with Consort: the attack is real (docs/security.md).
    if (kind === 'sweep') expect(seen.found).toContain(String(holder.pid));
    else expect(seen.found).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await expect(access(late)).rejects.toThrow();
  }, 30_000);
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

  it('answers a request asked to go first ahead of those already waiting', async () => {
    const turn = (who: string) =>
      `exports.up = (pgm) => { pgm.sql("CREATE TABLE IF NOT EXISTS turns (at serial, who text)"); pgm.sql("INSERT INTO turns (who) VALUES ('${who}')"); };\n`;
    const child = new MigrationChild();
    const step = async (who: string, first: boolean) => {
      const migrations = path.join(dir, `turn-${who}`);
      await mkdir(migrations);
      await writeFile(path.join(migrations, '1700000000001_turn.js'), turn(who));
      return () =>
        child.apply(
          { databaseUrl: url, dir: migrations, direction: 'up', migrationsTable: `pgmigrations_turn_${who}` },
          { first },
        );
    };
    const [a, b, c] = [await step('a', false), await step('b', false), await step('c', true)];
    try {
      // While the child starts, a and b wait; c, asked later, goes before them.
      void child.warm();
      const results = await Promise.all([a(), b(), c()]);
      expect(results.map((r) => r.ok)).toEqual([true, true, true]);
    } finally {
      await child.close();
    }
    const rows = await query<{ who: string }>(url, 'SELECT who FROM turns ORDER BY at');
    expect(rows.map((r) => r.who)).toEqual(['c', 'a', 'b']);
  });
});
