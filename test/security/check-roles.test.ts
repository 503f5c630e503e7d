/**
 * Least privilege in the check lane (CLI, Action and App run the same runCheck): a pull request's
 * suite and seed are the project's code, so they get a role confined to their own branch
 * database. The suite and seed here are hostile: each tries to open every other database it can
 * name (the PR branch it forks from, the baseline every fork inherits, `main`, the catalog, the
 * App's store), to run `COPY … TO PROGRAM`, to make a database or a role, to give its own role
 * CREATEDB/CREATEROLE and to SET ROLE to the admin. They write what happened to a file; the test
 * reads it. Both server-backed providers: `local` on the run's shared server behind the App's
 * `cancellable` wrapper, `postgres` on the system server as the CLI opens it — each also with an
 * admin that is no superuser but has CREATEROLE (what managed services give), which must confine
 * the same way (PostgreSQL 18 and 15).
 */
import { testPorts } from '../helpers/check-ports.js';
import { localGitRepo } from '../../src/git/repo.js';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { databaseName } from '../../src/branches/database-name.js';
import { LOCAL_CATALOG_DATABASE } from '../../src/branches/local/provider.js';
import { POSTGRES_CATALOG_DATABASE } from '../../src/branches/postgres-provider.js';
import { cancellable } from '../../app/providers.js';
import { ensureStoreDatabase } from '../../app/store/db.js';
import { resolveSides } from '../../src/cli/commands/check.js';
import { loadConfig } from '../../src/config/load.js';
import { planCheck } from '../../src/lanes/check/plan.js';
import { runCheck } from '../../src/lanes/check/run.js';
import type { BranchProvider } from '../../src/ports/branch-provider.js';
import { roleAdminTestProvider } from '../helpers/role-admin.js';
import { attempt, localTestProvider, postgresTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });
const PG = createRequire(import.meta.url).resolve('pg');

/** Tries everything it should not manage; `PROBE_TARGETS` names the other databases. */
const PROBE = `import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
const pg = createRequire(import.meta.url)(${JSON.stringify(PG)});
const url = process.env.DATABASE_URL;
const result = { user: null, attributes: null, own: null, others: {}, copyToProgram: null, createDatabase: null, createRole: null };
const attempt = async (fn) => { try { const r = await fn(); return 'allowed: ' + JSON.stringify(r?.rows ?? r); } catch (e) { return 'refused: ' + e.message; } };
const c = new pg.Client({ connectionString: url });
await c.connect();
const me = (await c.query('SELECT current_user AS u, rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user')).rows[0];
result.user = me.u;
result.attributes = { superuser: me.rolsuper, createdb: me.rolcreatedb, createrole: me.rolcreaterole };
result.own = await attempt(async () => (await c.query('SELECT count(*)::int AS n FROM customers')).rows[0].n);
result.copyToProgram = await attempt(() => c.query("COPY (SELECT 1) TO PROGRAM 'touch /tmp/consort-pwned'"));
result.createDatabase = await attempt(() => c.query('CREATE DATABASE stolen'));
result.createRole = await attempt(() => c.query('CREATE ROLE stolen LOGIN'));
result.alterRole = await attempt(() => c.query('ALTER ROLE CURRENT_USER CREATEDB CREATEROLE'));
result.setRole = await attempt(() => c.query('SET ROLE ' + process.env.PROBE_ADMIN));
// The seed leaves a SECURITY DEFINER function behind for the suite: it must not run as anyone powerful.
if (process.argv[2] === 'seed.json') {
  result.definer = await attempt(() => c.query("CREATE FUNCTION pwn() RETURNS void LANGUAGE plpgsql SECURITY DEFINER AS $f$ BEGIN COPY (SELECT 1) TO PROGRAM 'touch /tmp/consort-pwned-definer'; END $f$"));
} else {
  result.definer = await attempt(() => c.query('SELECT pwn()'));
}
await c.end();
for (const db of process.env.PROBE_TARGETS.split(',')) {
  const u = new URL(url);
  u.pathname = '/' + db;
  result.others[db] = await attempt(async () => {
    const o = new pg.Client({ connectionString: u.toString() });
    await o.connect();
    try { return (await o.query('SELECT current_database() AS d')).rows[0].d; } finally { await o.end(); }
  });
}
// Beside the checkout: the seed runs from the base's tree, extracted for the run.
writeFileSync(process.env.PROBE_OUT + '/' + process.argv[2], JSON.stringify(result));
`;

interface Probe {
  user: string;
  attributes: Record<string, boolean>;
  own: string;
  others: Record<string, string>;
  copyToProgram: string;
  createDatabase: string;
  createRole: string;
  alterRole: string;
  setRole: string;
  definer: string;
}

async function repo(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-check-roles-'));
  await mkdir(path.join(dir, 'migrations'));
  await mkdir(path.join(dir, '.github'));
  await writeFile(path.join(dir, 'probe.mjs'), PROBE);
  await writeFile(path.join(dir, '.gitignore'), '*.json\n');
  await writeFile(
    path.join(dir, 'migrations', '1700000000000_customers.sql'),
    '-- Up Migration\nCREATE TABLE customers (id int PRIMARY KEY, name text);\n-- Down Migration\nDROP TABLE customers;\n',
  );
  await writeFile(
    path.join(dir, '.github', 'consort.yml'),
    [
      'database:',
      '  seed:',
      '    command: node probe.mjs seed.json',
      'migrations:',
      '  dir: migrations',
      'suite:',
      '  command: node probe.mjs suite.json',
      '',
    ].join('\n'),
  );
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  await git(dir, 'checkout', '-qb', 'feature');
  await writeFile(
    path.join(dir, 'migrations', '1700000000001_phone.sql'),
    '-- Up Migration\nALTER TABLE customers ADD COLUMN phone text;\n-- Down Migration\nALTER TABLE customers DROP COLUMN phone;\n',
  );
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'phone');
  return dir;
}

type Opened = TestProvider & { catalogDatabase: string };
const withCatalog = (open: () => Promise<TestProvider>, catalogDatabase: string) => async (): Promise<Opened> => ({
  ...(await open()),
  catalogDatabase,
});
const cases: [string, () => Promise<Opened>, (t: TestProvider) => BranchProvider][] = [
  [
    'local, as the App wraps it',
    withCatalog(localTestProvider, LOCAL_CATALOG_DATABASE),
    (t) => cancellable(t.provider, new AbortController().signal),
  ],
  ['postgres', withCatalog(postgresTestProvider, POSTGRES_CATALOG_DATABASE), (t) => t.provider],
  // An admin with CREATEROLE and CREATEDB but no superuser, as managed services give (PostgreSQL 18, then 15).
  ['local (a CREATEROLE admin, no superuser)', () => roleAdminTestProvider('local'), (t) => t.provider],
  ['postgres (a CREATEROLE admin, no superuser)', () => roleAdminTestProvider('postgres'), (t) => t.provider],
];

describe.each(cases)('a hostile suite and seed on the %s provider', (_name, open, wrap) => {
  let t: Opened;
  let catalog: string;
  let dir: string;
  let store: string;
  let suite: Probe;
  let seed: Probe;
  let databases: { pr: string; baseline: string; main: string };

  beforeAll(async () => {
    t = await open();
    catalog = t.catalogDatabase;
    dir = await repo();
    store = `${t.namespace}_app_store`;
    await ensureStoreDatabase(t.adminUrl, store);
    const provider = wrap(t);
    const { config, source } = await loadConfig(dir);
    const { base, head } = await resolveSides(localGitRepo, dir, config, { base: 'main' }, () => undefined);
    const main = (await t.provider.get('main'))!.database;
    // Every database the check will make is named by its plan, before it runs (branch databases are `<namespace>_<branch>`).
    const request = { workspace: dir, config, configSource: source, base, head, pr: 7, toolVersion: 'test' };
    const planned = await planCheck({ ...request, env: {} }, testPorts);
    const baseline = databaseName(`${t.namespace}_`, planned.baseline!);
    databases = { pr: databaseName(`${t.namespace}_`, planned.branches.branch), baseline, main };
    const plan = await planCheck(
      {
        ...request,
        env: {
          PROBE_TARGETS: [databases.pr, databases.baseline, main, catalog, store, 'postgres'].join(','),
          PROBE_ADMIN: new URL(t.adminUrl).username || 'postgres',
          PROBE_OUT: dir,
        },
      },
      testPorts,
    );
    expect(plan.baseline).toBe(planned.baseline);
    const report = await runCheck(plan, { ...testPorts, provider });
    expect(report.stages.suite).toMatchObject({ status: 'passed' });
    expect((await t.provider.get('pr-7'))!.database).toBe(databases.pr);
    seed = JSON.parse(await readFile(path.join(dir, 'seed.json'), 'utf8')) as Probe;
    suite = JSON.parse(await readFile(path.join(dir, 'suite.json'), 'utf8')) as Probe;
  }, 90_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await query(t.adminUrl, `DROP DATABASE IF EXISTS "${store}" WITH (FORCE)`);
    await t.cleanup();
  });

  it('runs as a role of its own with no powers, and reaches its own branch', () => {
    for (const p of [suite, seed]) {
      expect(p.user).not.toBe(new URL(t.adminUrl).username || 'postgres');
      expect(p.user).toMatch(/_role$/);
      expect(p.attributes).toEqual({ superuser: false, createdb: false, createrole: false });
      expect(p.own).toBe('allowed: 0'); // the baseline's table, empty
    }
  });

  it('cannot open the PR branch, the baseline, main, the catalog, the App store or postgres', () => {
    expect(Object.keys(suite.others)).toHaveLength(6);
    for (const [db, outcome] of Object.entries(suite.others)) {
      if (db === 'postgres')
        expect(outcome).toMatch(/^refused|^allowed: "postgres"$/); // a server's default database: holds nothing of Consort's
      else expect([db, outcome]).toEqual([db, expect.stringMatching(/^refused: permission denied for database/)]);
    }
    // The seed runs while the baseline is built (its own database) and before the PR branch exists.
    for (const db of [databases.main, catalog, store]) {
      expect([db, seed.others[db]]).toEqual([db, expect.stringMatching(/^refused: permission denied for database/)]);
    }
    expect(seed.others[databases.baseline]).toBe(`allowed: "${databases.baseline}"`);
  });

  it('cannot run COPY … TO PROGRAM, create a database or a role, raise its own role or become the admin', async () => {
    for (const p of [suite, seed]) {
      expect(p.copyToProgram).toMatch(/^refused: .*(permission denied|must be superuser|pg_execute_server_program)/);
      expect(p.createDatabase).toMatch(/^refused: permission denied/);
      expect(p.createRole).toMatch(/^refused: permission denied/);
      expect(p.alterRole).toMatch(/^refused: permission denied/);
      expect(p.setRole).toMatch(/^refused: permission denied to set role/);
    }
    await expect(access('/tmp/consort-pwned')).rejects.toThrow();
  });

  it('cannot use a SECURITY DEFINER function the seed left to act as the admin', async () => {
    expect(seed.definer).toMatch(/^allowed/);
    expect(suite.definer).toMatch(/^refused: .*(permission denied|must be superuser|pg_execute_server_program)/);
    await expect(access('/tmp/consort-pwned-definer')).rejects.toThrow();
  });

  it("leaves the PR branch readable and writable by the admin's URL (`consort branch url pr-7`) and by its own role", async () => {
    // A CREATEROLE admin holds the branch's role without its privileges on PostgreSQL 16+: once the
    // role owns the tables, the admin must still have been given them (src/branches/branch-role.ts).
    const owner = await t.provider.connectionUri('pr-7');
    expect(new URL(owner).username).toBe(new URL(t.adminUrl).username);
    const read = 'SELECT count(*)::int AS n, count(phone)::int AS phones FROM customers';
    expect(await attempt(owner, read)).toBe('allowed: [{"n":0,"phones":0}]');
    expect(await attempt(owner, "INSERT INTO customers VALUES (1, 'Ada', '555') RETURNING id")).toBe(
      'allowed: [{"id":1}]',
    );
    const confined = await t.provider.confinedUri!('pr-7');
    expect(confined).not.toBeNull();
    expect(new URL(confined!).username).toMatch(/_role$/);
    expect(await attempt(confined!, read)).toBe('allowed: [{"n":1,"phones":1}]');
    // What the role makes or changes later, the admin still reads (and the other way round).
    expect(await attempt(confined!, 'ALTER TABLE customers ADD COLUMN note text')).toBe('allowed: []');
    expect(await attempt(confined!, 'CREATE TABLE later (id serial PRIMARY KEY, what text)')).toBe('allowed: []');
    expect(await attempt(confined!, "INSERT INTO later (what) VALUES ('x')")).toBe('allowed: []');
    expect(await attempt(owner, 'SELECT note FROM customers')).toBe('allowed: [{"note":null}]');
    expect(await attempt(owner, "INSERT INTO later (what) VALUES ('y') RETURNING id")).toBe('allowed: [{"id":2}]');
    expect(await attempt(owner, "UPDATE customers SET note = 'seen' RETURNING note")).toBe(
      'allowed: [{"note":"seen"}]',
    );
    expect(await attempt(confined!, 'SELECT count(*)::int AS n FROM later')).toBe('allowed: [{"n":2}]');
  });

  it("leaves no login role behind for the baseline's seed", async () => {
    const rows = await query(t.adminUrl, 'SELECT rolname FROM pg_roles WHERE rolname = $1', [seed.user]);
    expect(rows).toEqual([]);
    const owners = await query(
      t.adminUrl.replace(/\/[^/?]*(\?|$)/, `/${databases.baseline}$1`),
      "SELECT DISTINCT pg_get_userbyid(relowner) AS o FROM pg_class WHERE relnamespace = 'public'::regnamespace",
    );
    expect(owners.map((r) => r.o)).not.toContain(seed.user);
  });
});
