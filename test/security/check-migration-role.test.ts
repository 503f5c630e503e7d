/**
 * A pull request's migrations are its code. In the check lane (CLI, Action and App run the same
 * runCheck) they run — applied on the PR branch, and down/up again to prove they reverse —
 * as the role confined to that branch, not as the admin; the baseline, built from the base's
 * committed migrations, is still built by the admin. A hostile pull request's migration tries
 * what only the admin could (make itself superuser, make a database or a role, run a program on
 * the server, load an untrusted extension, open another branch) and writes what happened to a
 * file; a plain SQL migration asking for superuser fails the stage with a report that says why.
 * An ordinary pull request — a table, an index, a trusted extension (pgcrypto), a new schema, a
 * new enum, a value renamed in the base's enum, the base's function replaced — still passes,
 * reversibility included. Both server-backed providers: `local` (embedded PostgreSQL 18) and
 * `postgres` (the system server), each with a superuser admin and with a CREATEROLE one.
 */
import { access, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { CheckReport } from '../../src/report/check-report.js';
import { checkBranch, checkRepo, commitBranch, PG } from '../helpers/check-repo.js';
import { roleAdminTestProvider, type RoleAdminTestProvider } from '../helpers/role-admin.js';
import { localTestProvider, postgresTestProvider, query, type TestProvider } from '../helpers/servers.js';

const BASE = `-- Up Migration
CREATE TABLE customers (id int PRIMARY KEY, name text);
CREATE TYPE mood AS ENUM ('sad', 'happy');
CREATE FUNCTION greeting() RETURNS text LANGUAGE sql AS $$ SELECT 'hello' $$;
-- Down Migration
DROP FUNCTION greeting();
DROP TYPE mood;
DROP TABLE customers;
`;

const NORMAL = `-- Up Migration
CREATE EXTENSION IF NOT EXISTS pgcrypto;
CREATE SCHEMA audit;
CREATE TABLE audit.events (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), at timestamptz NOT NULL DEFAULT now());
CREATE TYPE status AS ENUM ('open', 'closed');
CREATE TABLE orders (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), customer int NOT NULL REFERENCES customers, state status NOT NULL DEFAULT 'open');
CREATE INDEX orders_customer ON orders (customer);
ALTER TYPE mood RENAME VALUE 'happy' TO 'glad';
CREATE OR REPLACE FUNCTION greeting() RETURNS text LANGUAGE sql AS $$ SELECT 'hi' $$;
CREATE TABLE ran_as AS SELECT current_user::text AS who, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS super;
-- Down Migration
DROP TABLE ran_as;
CREATE OR REPLACE FUNCTION greeting() RETURNS text LANGUAGE sql AS $$ SELECT 'hello' $$;
ALTER TYPE mood RENAME VALUE 'glad' TO 'happy';
DROP TABLE orders;
DROP TYPE status;
DROP SCHEMA audit CASCADE;
DROP EXTENSION pgcrypto;
`;

/** The suite of the ordinary pull request: uses what its migration made. */
const SUITE = `import { createRequire } from 'node:module';
const pg = createRequire(import.meta.url)(${JSON.stringify(PG)});
const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
await c.connect();
await c.query("INSERT INTO customers VALUES (1, 'a')");
const { rows } = await c.query("INSERT INTO orders (customer) VALUES (1) RETURNING id, state, greeting() AS g");
await c.end();
if (rows[0].state !== 'open' || rows[0].g !== 'hi' || !/^[0-9a-f-]{36}$/.test(rows[0].id)) { console.error(rows); process.exit(1); }
`;

/** A JS migration (run in the migration child) that tries everything only the admin could; `out` gets what happened. */
const hostile = (out: string, targets: string[]) => `const pg = require(${JSON.stringify(PG)});
const { writeFileSync } = require('node:fs');
exports.up = async (pgm) => {
  pgm.noTransaction();
  const attempt = async (sql) => { try { await pgm.db.query(sql); return 'allowed'; } catch (e) { return 'refused: ' + e.message; } };
  const me = (await pgm.db.query('SELECT current_user AS u, rolsuper AS s FROM pg_roles WHERE rolname = current_user')).rows[0];
  const result = { user: me.u, superuser: me.s, others: {} };
  result.alterRole = await attempt('ALTER ROLE CURRENT_USER SUPERUSER');
  result.createDatabase = await attempt('CREATE DATABASE stolen_by_pr');
  result.createRole = await attempt('CREATE ROLE stolen_by_pr LOGIN SUPERUSER');
  result.copyToProgram = await attempt("COPY (SELECT 1) TO PROGRAM 'touch /tmp/consort-pwned-by-migration'");
  result.dblink = await attempt('CREATE EXTENSION dblink');
  for (const db of ${JSON.stringify(targets)}) {
    const o = new pg.Client({ host: ${JSON.stringify('HOST')}, port: Number(${JSON.stringify('PORT')}), user: me.u, database: db, password: 'x' });
    try { await o.connect(); await o.query('CREATE TABLE pwned (x int)'); result.others[db] = 'allowed'; }
    catch (e) { result.others[db] = 'refused: ' + e.message; }
    finally { await o.end().catch(() => undefined); }
  }
  writeFileSync(${JSON.stringify(out)}, JSON.stringify(result));
};
exports.down = false;
`;

interface Hostile {
  user: string;
  superuser: boolean;
  alterRole: string;
  createDatabase: string;
  createRole: string;
  copyToProgram: string;
  dblink: string;
  others: Record<string, string>;
}

const repo = () =>
  checkRepo('check-migration-role', {
    'suite.mjs': SUITE,
    'migrations/1700000000000_base.sql': BASE,
    '.github/consort.yml': ['migrations:', '  dir: migrations', 'suite:', '  command: node suite.mjs', ''].join('\n'),
  });

const cases: [string, () => Promise<TestProvider>][] = [
  ['local (PostgreSQL 18)', localTestProvider],
  ['postgres (the system server)', postgresTestProvider],
  // An admin with CREATEROLE and CREATEDB, no superuser: what managed services give.
  ['local (PostgreSQL 18, a CREATEROLE admin)', () => roleAdminTestProvider('local')],
  ['postgres (PostgreSQL 15, a CREATEROLE admin)', () => roleAdminTestProvider('postgres')],
];

describe.each(cases)("a pull request's migrations on the %s provider", (_name, open) => {
  let t: TestProvider;
  let dir: string;

  beforeAll(async () => {
    t = await open();
    dir = await repo();
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await query(t.adminUrl, 'DROP DATABASE IF EXISTS stolen_by_pr');
    await query(t.adminUrl, 'DROP ROLE IF EXISTS stolen_by_pr');
    await t.cleanup();
  });

  const check = (branch: string, pr: number): Promise<CheckReport> => checkBranch(dir, branch, pr, t.provider);

  it('an ordinary one (table, index, pgcrypto, schema, enums, the base function replaced) passes, as the branch role', async () => {
    await commitBranch(dir, 'normal', { 'migrations/1700000000001_orders.sql': NORMAL });
    const report = await check('normal', 21);
    expect([report.stages.baseline.status, report.stages.baseline.summary]).toEqual(['passed', expect.any(String)]);
    expect([report.stages.migrations.status, report.stages.migrations.summary]).toEqual(['passed', expect.any(String)]);
    expect(report.stages.migrations.ranAs).toBe('branch');
    expect(report.stages.migrations.summary).not.toMatch(/as the admin/);
    expect([report.stages.reversibility.status, report.stages.reversibility.summary]).toEqual([
      'passed',
      '1 migration reverses cleanly',
    ]);
    expect([report.stages.suite.status, report.stages.suite.summary]).toEqual(['passed', expect.any(String)]);
    // Only what the migration made is in the diff: the role taking the branch's objects is not.
    expect(report.stages.schemaDiff.text).not.toMatch(/_role/);
    expect(report.stages.schemaDiff.text).toMatch(/orders/);
    const db = (await t.provider.get('pr-21'))!.database;
    // Read as a superuser: a CREATEROLE admin on PostgreSQL 16+ holds the branch role without its privileges.
    const reader = 'superUrl' in t ? (t as RoleAdminTestProvider).superUrl : t.adminUrl;
    const [ran] = await query(reader.replace(/\/[^/?]*(\?|$)/, `/${db}$1`), 'SELECT who, super FROM ran_as');
    expect(ran).toEqual({ who: expect.stringMatching(/_role$/), super: false });
    expect(ran!.who).not.toBe(new URL(t.adminUrl).username || 'postgres');
  }, 120_000);

  it('a hostile one cannot become superuser, make a database or role, run a program or reach another branch', async () => {
    const out = path.join(dir, 'hostile.json');
    const main = (await t.provider.get('main'))!.database;
    const normal = (await t.provider.get('pr-21'))?.database ?? main;
    const server = new URL(t.adminUrl);
    await commitBranch(dir, 'hostile', {
      'migrations/1700000000001_probe.js': hostile(out, [main, normal])
        .replace(JSON.stringify('HOST'), JSON.stringify(server.hostname))
        .replace(JSON.stringify('PORT'), JSON.stringify(server.port || '5432')),
      'migrations/1700000000002_superuser.sql':
        '-- Up Migration\nALTER ROLE CURRENT_USER SUPERUSER;\n-- Down Migration\nSELECT 1;\n',
    });
    const report = await check('hostile', 22);

    const seen = JSON.parse(await readFile(out, 'utf8')) as Hostile;
    expect(seen.user).toMatch(/_role$/);
    expect(seen.superuser).toBe(false);
    expect(seen.alterRole).toMatch(/^refused: (permission denied|must be superuser)/); // PG 18 | PG 15
    expect(seen.createDatabase).toMatch(/^refused: permission denied/);
    expect(seen.createRole).toMatch(/^refused: (permission denied|must be superuser)/);
    expect(seen.copyToProgram).toMatch(/^refused: .*(permission denied|must be superuser|pg_execute_server_program)/);
    expect(seen.dblink).toMatch(/^refused: permission denied/);
    for (const [db, outcome] of Object.entries(seen.others))
      expect([db, outcome]).toEqual([
        db,
        expect.stringMatching(/^refused: (permission denied|password authentication)/),
      ]);
    await expect(access('/tmp/consort-pwned-by-migration')).rejects.toThrow();
    expect(await query(t.adminUrl, "SELECT 1 FROM pg_database WHERE datname = 'stolen_by_pr'")).toEqual([]);
    expect(await query(t.adminUrl, "SELECT 1 FROM pg_roles WHERE rolname = 'stolen_by_pr'")).toEqual([]);

    // The plain SQL migration asking for superuser fails the stage, and the report says why.
    expect(report.stages.migrations.status).toBe('failed');
    expect(report.stages.migrations.summary).toMatch(
      /1700000000002_superuser\.sql failed: (permission denied|must be superuser).*run as a role confined to its branch database.*check\.migrationsRole: admin.*must land on the base first/,
    );
    expect(report.stages.migrations.failure).toMatchObject({ code: '42501' });
    expect(report.stages.migrations.ranAs).toBe('branch');
    expect(report.stages.suite.status).toBe('skipped');
  }, 120_000);
});
