/**
 * The node-pg-migrate adapter against the real PostgreSQL server: each test starts from an empty
 * database (the file's, its `public` schema made anew) with its own copy of the fixture migrations
 * (node-pg-migrate's module cache is keyed by path).
 *
 * The fixture's JS migrations run in a child process. What the migrations do is applied through one
 * session kept for the file (openMigrationRunner, as the PR lane keeps one child per side): starting
 * Node and node-pg-migrate for every call was most of this file's time. The tests that call
 * `oneShot` (and the one that cannot connect) go through applyMigrations, a child for that call; the
 * child's isolation, environment and crashes are test/security/migration-child.test.ts's subject.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { isConsortError } from '../../src/core/errors.js';
import { quoteIdent, withDatabase } from '../../src/db/sql.js';
import {
  applyMigrations,
  lineInFile,
  openMigrationRunner,
  type ApplyOptions,
  type ApplyResult,
} from '../../src/migrations/runner.js';
import type { MigrationSession } from '../../src/ports/migration-runner.js';
import { parseMigration } from '../../src/migrations/files.js';
import { tsxEngine7 } from '../helpers/engines.js';
import { query, SYSTEM_PG_URL } from '../helpers/servers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = path.resolve(here, '../fixtures/migrations/app');
const NAMES = [
  '1700000000000_create_users',
  '1700000001000_add_email',
  '1700000002000_create_orders',
  '1700000003000_index_orders_concurrently',
];

let database: string;
let url: string;
let work: string;
let dir: string;

beforeAll(async () => {
  database = `mig_test_${randomBytes(5).toString('hex')}`;
  await query(SYSTEM_PG_URL, `CREATE DATABASE ${quoteIdent(database)}`);
  url = withDatabase(SYSTEM_PG_URL, database);
});

afterAll(async () => {
  await query(SYSTEM_PG_URL, `DROP DATABASE IF EXISTS ${quoteIdent(database)} WITH (FORCE)`);
});

/**
 * Every test starts from an empty `public` schema, owned, granted and commented as in a new database
 * (the fixture's migrations and node-pg-migrate's table live there): much cheaper than a CREATE
 * DATABASE per test, which on PostgreSQL 15 also costs a checkpoint when it is dropped.
 */
beforeEach(async () => {
  await query(
    url,
    `DROP SCHEMA public CASCADE;
     CREATE SCHEMA public AUTHORIZATION pg_database_owner;
     GRANT USAGE ON SCHEMA public TO PUBLIC;
     COMMENT ON SCHEMA public IS 'standard public schema';`,
  );
  work = await mkdtemp(path.join(os.tmpdir(), 'consort-mig-'));
  dir = path.join(work, 'migrations');
  await cp(fixture, dir, { recursive: true });
});

afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

/** One session (one child process, replaced if a migration ends it) for the whole file. */
let session: MigrationSession;
beforeAll(() => {
  session = openMigrationRunner();
});
afterAll(async () => {
  await session.close();
});

function options(direction: 'up' | 'down', extra: Partial<ApplyOptions>): ApplyOptions {
  return { databaseUrl: url, dir, direction, migrationsTable: 'pgmigrations', relativeTo: work, ...extra };
}

/** Through the file's kept session. */
function apply(direction: 'up' | 'down', extra: Partial<ApplyOptions> = {}): Promise<ApplyResult> {
  return session.apply(options(direction, extra));
}

/** Through applyMigrations: a child process of its own for this one call. */
function oneShot(direction: 'up' | 'down', extra: Partial<ApplyOptions> = {}): Promise<ApplyResult> {
  return applyMigrations(options(direction, extra));
}

async function tables(): Promise<string[]> {
  const rows = await query<{ t: string }>(
    url,
    "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
  );
  return rows.map((r) => r.t);
}

async function recorded(): Promise<string[]> {
  return (await query<{ name: string }>(url, 'SELECT name FROM pgmigrations ORDER BY id')).map((r) => r.name);
}

async function advisoryLocks(): Promise<number> {
  const rows = await query<{ n: number }>(
    SYSTEM_PG_URL,
    "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = 'advisory' AND d.datname = $1",
    [database],
  );
  return rows[0]?.n ?? -1;
}

function expectOk(result: ApplyResult): asserts result is Extract<ApplyResult, { ok: true }> {
  if (!result.ok) throw new Error(`expected success, got ${JSON.stringify(result.failed)}`);
}
function expectFailed(result: ApplyResult): asserts result is Extract<ApplyResult, { ok: false }> {
  if (result.ok) throw new Error(`expected a failure, applied ${result.applied.map((m) => m.name).join(', ')}`);
}

describe('applyMigrations up', () => {
  it('applies every pending migration and records the SQL each one sent', async () => {
    const result = await oneShot('up');
    expectOk(result);
    expect(result.applied.map((m) => m.name)).toEqual(NAMES);
    expect(result.applied.map((m) => m.file)).toEqual(
      NAMES.map((n, i) => `migrations/${n}.${['sql', 'js', 'mjs', 'js'][i]}`),
    );
    const [users, email, orders, index] = result.applied;
    // The section as node-pg-migrate slices it (up to the blank line its Down marker pattern starts at), plus its `;`.
    expect(users?.sql).toEqual([
      '-- Up Migration\nCREATE TABLE users (\n  id serial PRIMARY KEY,\n  name text NOT NULL\n);\n;',
    ]);
    expect(email?.sql).toEqual([
      'ALTER TABLE "users"\n  ADD "email" text;',
      'CREATE INDEX "users_email_index" ON "users" ("email");',
    ]);
    // The query the migration ran itself, while building its steps, is attributed to it.
    expect(orders?.sql[0]).toBe('SELECT count(*)::int AS n FROM users');
    expect(orders?.sql[1]).toMatch(/^CREATE TABLE "orders"/);
    expect(index?.sql).toEqual(['CREATE INDEX CONCURRENTLY "orders_user_id_index" ON "orders" ("user_id");']);
    expect(result.applied.map((m) => m.transactional)).toEqual([true, true, true, false]);
    for (const m of result.applied) {
      expect(m.durationMs).toBeGreaterThanOrEqual(0);
      for (const sql of m.sql) expect(sql).not.toMatch(/pgmigrations|advisory|^(BEGIN|COMMIT);?$/);
    }
    expect(await tables()).toEqual(['orders', 'pgmigrations', 'users']);
    expect(await recorded()).toEqual(NAMES);
    expect(result.log).toContain('info: ### MIGRATION 1700000000000_create_users (UP) ###');
  });

  it('is a no-op the second time', async () => {
    expectOk(await apply('up'));
    const again = await apply('up');
    expectOk(again);
    expect(again.applied).toEqual([]);
    expect(again.log).toContain('info: No migrations to run!');
  });

  it('applies only `count` migrations, or exactly the named ones', async () => {
    const first = await apply('up', { count: 1 });
    expectOk(first);
    expect(first.applied.map((m) => m.name)).toEqual(NAMES.slice(0, 1));
    const named = await apply('up', { onlyNames: [NAMES[1] as string, NAMES[2] as string] });
    expectOk(named);
    expect(named.applied.map((m) => m.name)).toEqual(NAMES.slice(1, 3));
    expect(await recorded()).toEqual(NAMES.slice(0, 3));
  });

  it('reports a SQL syntax error with file, statement, Postgres error and line, keeping earlier migrations', async () => {
    await writeFile(
      path.join(dir, '1700000004000_broken.sql'),
      '-- Up Migration\nCREATE TABLE half (id int);\n\nSELEC 1;\n\n-- Down Migration\nDROP TABLE half;\n',
    );
    const result = await apply('up');
    expectFailed(result);
    expect(result.failed).toMatchObject({
      kind: 'statement',
      name: '1700000004000_broken',
      file: 'migrations/1700000004000_broken.sql',
      // As written: without node-pg-migrate's section marker and the `;` it appends.
      statement: 'CREATE TABLE half (id int);\n\nSELEC 1;',
      error: { message: 'syntax error at or near "SELEC"', code: '42601', position: 30, line: 4 },
    });
    expect(result.applied.map((m) => m.name)).toEqual(NAMES);
    // The failing migration's transaction was rolled back, the earlier ones committed.
    expect(await tables()).toEqual(['orders', 'pgmigrations', 'users']);
    expect(await recorded()).toEqual(NAMES);
    expect(await advisoryLocks()).toBe(0);
  });

  it('locates a failing statement from a JS migration in its file', async () => {
    await writeFile(
      path.join(dir, '1700000004000_bad_ref.js'),
      'exports.up = (pgm) => {\n  pgm.sql(`UPDATE users\n     SET name = upper(name)\n   WHERE id IN (SELECT user_id FROM no_such_table)`);\n};\n',
    );
    const result = await apply('up');
    expectFailed(result);
    expect(result.failed).toMatchObject({
      kind: 'statement',
      name: '1700000004000_bad_ref',
      error: { code: '42P01', line: 4 },
    });
  });

  it('keeps what a failing JS migration sent, up to the statement that failed (lint reads it)', async () => {
    await writeFile(
      path.join(dir, '1700000004000_half.js'),
      "exports.up = (pgm) => {\n  pgm.addColumn('users', { age: { type: 'integer' } });\n  pgm.sql('ALTER TABLE no_such_table ADD COLUMN x int');\n  pgm.sql('SELECT 1');\n};\n",
    );
    const result = await apply('up');
    expectFailed(result);
    expect(result.failed).toMatchObject({
      kind: 'statement',
      name: '1700000004000_half',
      sent: {
        sql: [
          expect.stringMatching(/^ALTER TABLE "users"\s+ADD "age" integer;?$/),
          'ALTER TABLE no_such_table ADD COLUMN x int;',
        ],
        transactional: true,
      },
    });
  });

  it('attributes a failing query a JS migration runs itself to that migration', async () => {
    await writeFile(
      path.join(dir, '1700000004000_probe.js'),
      'exports.up = async (pgm) => {\n  await pgm.db.select("SELECT nope FROM users");\n};\n',
    );
    const result = await apply('up');
    expectFailed(result);
    expect(result.failed).toMatchObject({
      kind: 'statement',
      name: '1700000004000_probe',
      statement: 'SELECT nope FROM users',
      error: { code: '42703', line: 2 },
    });
    expect(result.applied).toHaveLength(4);
  });

  it('runs every migration in one transaction when asked, so a failure leaves nothing applied', async () => {
    await rm(path.join(dir, '1700000003000_index_orders_concurrently.js'));
    await writeFile(path.join(dir, '1700000004000_broken.sql'), 'SELECT 1/0;');
    const result = await apply('up', { singleTransaction: true });
    expectFailed(result);
    expect(result.failed).toMatchObject({ kind: 'statement', name: '1700000004000_broken', error: { code: '22012' } });
    expect(result.applied).toEqual([]);
    // What ran before the failure and was rolled back with it, with the SQL it sent (lint reads it).
    expect(result.rolledBack?.map((m) => m.name)).toEqual(NAMES.slice(0, 3));
    expect(result.rolledBack?.every((m) => m.sql.length > 0)).toBe(true);
    expect(await tables()).toEqual(['pgmigrations']); // node-pg-migrate creates its table before the transaction
    expect(await recorded()).toEqual([]);
    expect(await advisoryLocks()).toBe(0);
  });

  it("says what a migration's own COMMIT left applied when a later one fails", async () => {
    // A .sql migration written as a psql script (`COMMIT; BEGIN;` to use the enum value it adds)
    // ends node-pg-migrate's one transaction: the migrations before it are committed, and so is its
    // own first half (unrecorded), and they stay when the next fails. The report says what the
    // migrations table does.
    await rm(path.join(dir, '1700000003000_index_orders_concurrently.js'));
    await writeFile(
      path.join(dir, '1700000003500_order-state.sql'),
      "-- Up Migration\nCREATE TYPE order_state AS ENUM ('new');\nALTER TYPE order_state ADD VALUE 'paid';\nCOMMIT;\nBEGIN;\nSELECT 'paid'::order_state;\n",
    );
    await writeFile(path.join(dir, '1700000004000_broken.sql'), 'SELECT 1/0;');
    const result = await apply('up', { singleTransaction: true });
    expectFailed(result);
    expect(result.failed).toMatchObject({ kind: 'statement', name: '1700000004000_broken', error: { code: '22012' } });
    expect(await recorded()).toEqual(NAMES.slice(0, 3));
    expect(result.applied.map((m) => m.name)).toEqual(NAMES.slice(0, 3));
    expect(await query(url, "SELECT 1 FROM pg_type WHERE typname = 'order_state'")).toHaveLength(1);
    expect(await advisoryLocks()).toBe(0);
  });

  it('reports a migration whose own code throws', async () => {
    // The line where it threw, from the error's stack (the copy node-pg-migrate loaded is elsewhere).
    await writeFile(
      path.join(dir, '1700000004000_throws.js'),
      '// a comment\nexports.up = (pgm) => {\n  pgm.sql("SELECT 1");\n  undefinedFn();\n};\n',
    );
    const result = await apply('up');
    expectFailed(result);
    expect(result.failed).toEqual({
      kind: 'script',
      name: '1700000004000_throws',
      file: 'migrations/1700000004000_throws.js',
      error: { message: 'undefinedFn is not defined', line: 4 },
    });
    expect(result.applied).toHaveLength(4);
  });

  it('reports a JS migration that does not parse as a load failure naming the file', async () => {
    await writeFile(path.join(dir, '1700000004000_typo.js'), 'exports.up = (pgm) => { pgm.sql("SELECT 1" };\n');
    const result = await apply('up');
    expectFailed(result);
    expect(result.failed).toMatchObject({
      kind: 'load',
      name: '1700000004000_typo',
      file: 'migrations/1700000004000_typo.js',
    });
    expect(result.applied).toEqual([]);
  });

  it('surfaces a checkOrder violation as an order failure', async () => {
    expectOk(await apply('up'));
    await writeFile(path.join(dir, '1700000000500_late.sql'), '-- Up Migration\nCREATE TABLE late (id int);\n');
    const result = await apply('up');
    expectFailed(result);
    expect(result.failed).toEqual({
      kind: 'order',
      name: '1700000000500_late',
      file: 'migrations/1700000000500_late.sql',
      error: {
        message: 'Not run migration 1700000000500_late is preceding already run migration 1700000001000_add_email',
      },
    });
    expect(await tables()).not.toContain('late');
    expect(await advisoryLocks()).toBe(0);
  });
});

describe('applyMigrations down', () => {
  it('reverses every migration in reverse order, including inferred downs', async () => {
    expectOk(await apply('up'));
    const result = await apply('down', { count: Number.POSITIVE_INFINITY });
    expectOk(result);
    expect(result.applied.map((m) => m.name)).toEqual([...NAMES].reverse());
    const email = result.applied.find((m) => m.name === '1700000001000_add_email');
    expect(email?.sql).toEqual(['DROP INDEX "users_email_index";', 'ALTER TABLE "users"\n  DROP "email";']);
    expect(result.applied[0]?.transactional).toBe(false);
    expect(await tables()).toEqual(['pgmigrations']);
    expect(await recorded()).toEqual([]);
  });

  it('reverts one migration by default, and the named one with onlyNames', async () => {
    expectOk(await apply('up'));
    const one = await apply('down');
    expectOk(one);
    expect(one.applied.map((m) => m.name)).toEqual([NAMES[3]]);
    const named = await apply('down', { onlyNames: [NAMES[2] as string] });
    expectOk(named);
    expect(named.applied.map((m) => m.name)).toEqual([NAMES[2]]);
    expect(await recorded()).toEqual(NAMES.slice(0, 2));
  });

  it('reports a ran migration whose file is gone', async () => {
    expectOk(await apply('up'));
    await rm(path.join(dir, '1700000003000_index_orders_concurrently.js'));
    const result = await apply('down');
    expectFailed(result);
    expect(result.failed).toEqual({
      kind: 'load',
      name: NAMES[3],
      error: { message: `Definitions of migrations ${NAMES[3]} have been deleted.` },
    });
  });

  it.each([
    [
      'a SQL migration without a Down section',
      '1700000004000_no_down.sql',
      '-- Up Migration\nCREATE TABLE x (id int);\n',
      'User has disabled down migration on file: 1700000004000_no_down',
    ],
    [
      'a JS migration with down = false',
      '1700000004000_no_down.js',
      'exports.up = (pgm) => { pgm.createTable("x", { id: "id" }); };\nexports.down = false;\n',
      'User has disabled down migration on file: 1700000004000_no_down',
    ],
    [
      'a JS migration whose down cannot be inferred',
      '1700000004000_no_down.js',
      'exports.up = (pgm) => { pgm.sql("CREATE TABLE x (id int)"); };\n',
      'Impossible to automatically infer down migration',
    ],
  ])('reports %s as down-unavailable', async (_title, file, content, message) => {
    await writeFile(path.join(dir, file), content);
    expectOk(await apply('up'));
    const result = await apply('down');
    expectFailed(result);
    expect(result.failed).toEqual({
      kind: 'down-unavailable',
      name: '1700000004000_no_down',
      file: `migrations/${file}`,
      error: { message: expect.stringContaining(message) },
    });
    expect(await tables()).toContain('x');
    expect(await advisoryLocks()).toBe(0);
  });
});

describe('applyMigrations: unexpected failures throw', () => {
  it('throws server-unavailable when it cannot connect', async () => {
    const error = await applyMigrations({
      databaseUrl: 'postgresql://postgres@127.0.0.1:1/postgres',
      dir,
      direction: 'up',
      migrationsTable: 'pgmigrations',
    }).catch((e: unknown) => e);
    expect(isConsortError(error, 'server-unavailable')).toBe(true);
  });

  it("throws branch-busy while another run holds node-pg-migrate's lock", async () => {
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(7241865325823964)');
      const error = await apply('up').catch((e: unknown) => e);
      expect(isConsortError(error, 'branch-busy')).toBe(true);
    } finally {
      await holder.end();
    }
    expectOk(await apply('up'));
  });

  it('rejects count together with onlyNames, and names not in the directory', async () => {
    const both = await apply('up', { count: 1, onlyNames: [NAMES[0] as string] }).catch((e: unknown) => e);
    expect(isConsortError(both, 'invalid-input')).toBe(true);
    const unknown = await apply('up', { onlyNames: ['1700000009999_nowhere'] }).catch((e: unknown) => e);
    expect(isConsortError(unknown, 'invalid-input')).toBe(true);
  });
});

describe('a session keeps a connection per URL when asked', () => {
  /** Each step records its backend and its application_name; the first also changes the latter for the session. */
  async function steps(kind: 'sql' | 'js'): Promise<string> {
    const kept = path.join(work, `kept-${kind}`);
    await mkdir(kept);
    const row = (n: number) => `INSERT INTO kept VALUES (${n}, pg_backend_pid(), current_setting('application_name'))`;
    const first = `CREATE TABLE kept (n int, pid int, app text); ${row(1)}; SET application_name = 'leaked'`;
    if (kind === 'sql') {
      await writeFile(
        path.join(kept, '1700000000001_a.sql'),
        `-- Up Migration\n${first};\n-- Down Migration\nDROP TABLE kept;\n`,
      );
      await writeFile(
        path.join(kept, '1700000000002_b.sql'),
        `-- Up Migration\n${row(2)};\n-- Down Migration\nDELETE FROM kept WHERE n = 2;\n`,
      );
    } else {
      const js = (up: string, down: string) =>
        `exports.up = (pgm) => pgm.sql(${JSON.stringify(up)});\nexports.down = (pgm) => pgm.sql(${JSON.stringify(down)});\n`;
      await writeFile(path.join(kept, '1700000000001_a.js'), js(first, 'DROP TABLE kept'));
      await writeFile(path.join(kept, '1700000000002_b.js'), js(row(2), 'DELETE FROM kept WHERE n = 2'));
    }
    return kept;
  }
  const rows = () =>
    query<{ n: number; pid: number; app: string }>(url, 'SELECT n, pid, app FROM kept ORDER BY n, pid');

  it.each(['sql', 'js'] as const)(
    '%s: the steps share one backend, each starting from a fresh session state, until released',
    async (kind) => {
      const kept = await steps(kind);
      const runner = openMigrationRunner();
      const step = (direction: 'up' | 'down', keep = true) =>
        runner.apply(
          { databaseUrl: url, dir: kept, relativeTo: work, direction, count: 1, migrationsTable: 'pgmigrations' },
          { keep },
        );
      try {
        expectOk(await step('up'));
        expectOk(await step('up'));
        const [a, b] = await rows();
        expect(b!.pid).toBe(a!.pid);
        // What the first step SET for its session did not reach the second.
        expect(b!.app).toBe('consort-migrate');
        await runner.release!(url);
        expectOk(await step('down'));
        expectOk(await step('up', false));
        const again = (await rows()).find((r) => r.n === 2 && r.pid !== a!.pid);
        expect(again).toBeDefined();
        // Released, and a request without keep kept nothing: no session of the runner is left on the database.
        const left = await query<{ n: number }>(
          SYSTEM_PG_URL,
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'consort-migrate'",
          [database],
        );
        expect(left[0]!.n).toBe(1); // the down's connection, kept until close
      } finally {
        await runner.close();
      }
      // A backend leaves pg_stat_activity a moment after its client hung up (it exits on its own
      // time, later on a loaded box): closed means gone within a few seconds.
      const sessions = async () =>
        (
          await query<{ n: number }>(
            SYSTEM_PG_URL,
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'consort-migrate'",
            [database],
          )
        )[0]!.n;
      let after = await sessions();
      for (const deadline = Date.now() + 5000; after > 0 && Date.now() < deadline; after = await sessions())
        await new Promise((r) => setTimeout(r, 50));
      expect(after).toBe(0);
    },
  );

  it('ends a connection a failed request used instead of keeping it', async () => {
    const kept = await steps('sql');
    await writeFile(
      path.join(kept, '1700000000003_bad.sql'),
      '-- Up Migration\nSELEC 1;\n-- Down Migration\nSELECT 1;\n',
    );
    const runner = openMigrationRunner();
    try {
      const up = (count?: number) =>
        runner.apply(
          {
            databaseUrl: url,
            dir: kept,
            direction: 'up',
            migrationsTable: 'pgmigrations',
            ...(count ? { count } : {}),
          },
          { keep: true },
        );
      expectOk(await up(1));
      expectFailed(await up());
      const left = await query<{ n: number }>(
        SYSTEM_PG_URL,
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'consort-migrate'",
        [database],
      );
      expect(left[0]!.n).toBe(0);
      expect(await advisoryLocks()).toBe(0);
    } finally {
      await runner.close();
    }
  });
});

/** JS migrations that sleep (`seconds` each) and record when they ran, in which process. */
async function sleepy(seconds = 0.6): Promise<string> {
  const d = path.join(work, 'sleepy');
  await mkdir(d);
  // The token is the process's: one per child that loaded the migrations.
  const step = (n: number) =>
    [
      'const token = (globalThis.consortTestToken ??= String(Math.random()));',
      'exports.up = (pgm) => pgm.sql(',
      `  "CREATE TABLE IF NOT EXISTS ran (n int, token text, started timestamptz, ended timestamptz); " +`,
      `  "INSERT INTO ran VALUES (${n}, '" + token + "', clock_timestamp(), NULL); " +`,
      `  "SELECT pg_sleep(${seconds}); UPDATE ran SET ended = clock_timestamp() WHERE n = ${n};",`,
      ');',
      'exports.down = false;',
      '',
    ].join('\n');
  await writeFile(path.join(d, '1700000000001_a.js'), step(1));
  await writeFile(path.join(d, '1700000000002_b.js'), step(2));
  return d;
}
const ran = (at: string) =>
  query<{ n: number; token: string; started: Date; ended: Date }>(
    at,
    'SELECT n, token, started, ended FROM ran ORDER BY n',
  );

describe("a session's child runs requests on different databases side by side", () => {
  it('overlaps two databases, keeps one database in order, all in one process', async () => {
    const d = await sleepy();
    const other = `mig_other_${randomBytes(5).toString('hex')}`;
    await query(SYSTEM_PG_URL, `CREATE DATABASE ${quoteIdent(other)}`);
    const otherUrl = withDatabase(SYSTEM_PG_URL, other);
    const runner = openMigrationRunner();
    try {
      const up = (at: string, count: number) =>
        runner.apply({
          databaseUrl: at,
          dir: d,
          relativeTo: work,
          direction: 'up',
          count,
          migrationsTable: 'pgmigrations',
        });
      // Loaded first, so the requests below wait on the database, not on the process starting.
      runner.warm(undefined, [{ kind: 'js' }]);
      const results = await Promise.all([up(url, 1), up(url, 1), up(otherUrl, 2)]);
      results.forEach(expectOk);
      const [mine, theirs] = [await ran(url), await ran(otherUrl)];
      expect(mine.map((r) => r.n)).toEqual([1, 2]);
      expect(theirs.map((r) => r.n)).toEqual([1, 2]);
      expect(new Set([...mine, ...theirs].map((r) => r.token)).size).toBe(1);
      // One database: the second request started after the first ended.
      expect(mine[1]!.started.getTime()).toBeGreaterThanOrEqual(mine[0]!.ended.getTime());
      // Two databases: the other's first migration ran while this one's did.
      expect(theirs[0]!.started.getTime()).toBeLessThan(mine[0]!.ended.getTime());
      expect(mine[0]!.started.getTime()).toBeLessThan(theirs[0]!.ended.getTime());
    } finally {
      await runner.close();
      await query(SYSTEM_PG_URL, `DROP DATABASE IF EXISTS ${quoteIdent(other)} WITH (FORCE)`);
    }
  });
});

describe("a session's preload", () => {
  /** node-pg-migrate 7.9.1 (CommonJS) with the repository's tsx, as a project deploying TS migrations has them. */
  const engine7 = tsxEngine7;
  /** TypeScript migrations that count, per process, how often a migration file was loaded, and when. */
  async function counted(): Promise<string> {
    const d = path.join(work, 'counted');
    await mkdir(d);
    const step = (n: number) =>
      [
        'const g = globalThis as { consortLoads?: number };',
        'g.consortLoads = (g.consortLoads ?? 0) + 1;',
        'const loadedAt: number = Date.now();',
        'export const up = (pgm: { sql: (s: string) => void }): void => {',
        `  pgm.sql("CREATE TABLE IF NOT EXISTS loads (n int, loaded_at bigint, loads int); INSERT INTO loads VALUES (${n}, " + loadedAt + ", " + g.consortLoads + ")");`,
        '};',
        'export const down = false;',
        '',
      ].join('\n');
    await writeFile(path.join(d, '1700000000001_a.ts'), step(1));
    await writeFile(path.join(d, '1700000000002_b.ts'), step(2));
    await writeFile(path.join(d, '.notes.ts'), 'throw new Error("a dot file is not a migration");\n');
    return d;
  }
  const loads = () =>
    query<{ n: number; loaded_at: string; loads: number }>(url, 'SELECT n, loaded_at, loads FROM loads ORDER BY n');

  it("loads a CommonJS engine's migrations ahead, once: its first request finds them loaded", async () => {
    const d = await counted();
    const runner = openMigrationRunner();
    try {
      runner.warm(engine7, [{ kind: 'ts' }]);
      await runner.preload!(d);
      const asked = Date.now();
      expectOk(await runner.apply({ ...options('up', {}), dir: d, engine: engine7 }));
      const rows = await loads();
      expect(rows.map((r) => r.n)).toEqual([1, 2]);
      for (const r of rows) expect(Number(r.loaded_at)).toBeLessThanOrEqual(asked);
      // node-pg-migrate's own load found them in the module cache: two loads in all, not four.
      expect(rows.map((r) => r.loads)).toEqual([2, 2]);
    } finally {
      await runner.close();
    }
  });

  it('is dropped once a request came first: it never holds back the steps on other databases', async () => {
    // Long enough that the other database's step, started after the preload, begins inside it on a
    // loaded box (at 0.6 s a whole-suite run at load 10 missed it by 0.6 s).
    const d = await sleepy(3);
    const other = `mig_other_${randomBytes(5).toString('hex')}`;
    await query(SYSTEM_PG_URL, `CREATE DATABASE ${quoteIdent(other)}`);
    const otherUrl = withDatabase(SYSTEM_PG_URL, other);
    const runner = openMigrationRunner();
    try {
      const up = (at: string, count: number) =>
        runner.apply({ ...options('up', {}), databaseUrl: at, dir: d, count, engine: engine7 });
      runner.warm(engine7, [{ kind: 'js' }]);
      const mine = up(url, 1);
      // Its migration is running (3 s of sleep) when the files come to be on disk.
      const sleeping = () =>
        query(
          SYSTEM_PG_URL,
          "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query LIKE '%pg_sleep%'",
          [database],
        );
      while ((await sleeping()).length === 0) await new Promise((r) => setTimeout(r, 20));
      await runner.preload!(d);
      const theirs = up(otherUrl, 1);
      expectOk(await mine);
      expectOk(await theirs);
      const [a, b] = [(await ran(url))[0]!, (await ran(otherUrl))[0]!];
      expect(b.started.getTime()).toBeLessThan(a.ended.getTime());
    } finally {
      await runner.close();
      await query(SYSTEM_PG_URL, `DROP DATABASE IF EXISTS ${quoteIdent(other)} WITH (FORCE)`);
    }
  });

  it('loads them in the order node-pg-migrate 7 does (by timestamp, not by character)', async () => {
    // 9_… sorts after 10_… by character; node-pg-migrate 7 loads (runs their top-level code) by timestamp.
    const d = path.join(work, 'ordered');
    await mkdir(d);
    const step = (name: string) =>
      [
        'const g = globalThis as { consortOrder?: string[] };',
        `(g.consortOrder ??= []).push(${JSON.stringify(name)});`,
        'export const up = (pgm: { sql: (s: string) => void }): void => {',
        `  pgm.sql("CREATE TABLE IF NOT EXISTS load_order (n text, seen text); INSERT INTO load_order VALUES ('${name}', '" + g.consortOrder!.join(',') + "')");`,
        '};',
        'export const down = false;',
        '',
      ].join('\n');
    await writeFile(path.join(d, '9_a.ts'), step('9_a'));
    await writeFile(path.join(d, '10_b.ts'), step('10_b'));
    const seen = async (preload: boolean): Promise<string[]> => {
      await query(url, 'DROP TABLE IF EXISTS load_order; DROP TABLE IF EXISTS pgmigrations');
      const runner = openMigrationRunner();
      try {
        runner.warm(engine7, [{ kind: 'ts' }]);
        if (preload) await runner.preload!(d);
        expectOk(await runner.apply({ ...options('up', {}), dir: d, engine: engine7 }));
        const rows = await query<{ seen: string }>(url, 'SELECT seen FROM load_order');
        return [...new Set(rows.map((r) => r.seen))];
      } finally {
        await runner.close();
      }
    };
    const without = await seen(false);
    expect(without).toEqual(['9_a,10_b']);
    expect(await seen(true)).toEqual(without);
  });

  it('loads nothing ahead for an ESM engine (the bundled node-pg-migrate 9 loads through jiti)', async () => {
    const d = await counted();
    const runner = openMigrationRunner();
    try {
      runner.warm(undefined, [{ kind: 'ts' }]);
      await runner.preload!(d);
      const asked = Date.now();
      expectOk(await runner.apply({ ...options('up', {}), dir: d }));
      for (const r of await loads()) expect(Number(r.loaded_at)).toBeGreaterThanOrEqual(asked);
    } finally {
      await runner.close();
    }
  });
});

describe('lineInFile', () => {
  const sql = parseMigration({
    file: '1_a.sql',
    content: '-- a comment\n\n-- Up Migration\nSELECT 1;\nSELEC 2;\n-- Down Migration\nSELEC 3;\n',
  });
  it.each<[string, string, number | undefined, 'up' | 'down', number | undefined]>([
    ['up section', '\n-- Up Migration\nSELECT 1;\nSELEC 2;\n;', 28, 'up', 5],
    ['down section', '-- Down Migration\nSELEC 3;\n', 19, 'down', 7],
    ['no position', 'SELECT 1;', undefined, 'up', undefined],
  ])('%s', (_title, statement, position, direction, line) => {
    expect(lineInFile(sql, statement, position, direction)).toBe(line);
  });

  it('finds a literal statement in a JS file, and gives up on generated SQL', () => {
    const js = parseMigration({
      file: '1_a.js',
      content: 'exports.up = (pgm) => {\n  pgm.sql("SELECT 1;\\nSELEC 2");\n  pgm.createTable("t", {});\n};\n',
    });
    expect(lineInFile(js, 'SELECT 1;', 1, 'up')).toBe(2);
    expect(lineInFile(js, 'CREATE TABLE "t" ();', 1, 'up')).toBeUndefined();
  });
});
