/**
 * Least privilege on the database: the URL untrusted code gets (`confinedUri`) is the branch's own
 * login role. A suite holding it reaches its branch and nothing else: not a sibling branch, not the
 * catalog, no superuser powers (`COPY … TO PROGRAM`), no CREATEDB or CREATEROLE. Runs against the
 * PostgreSQL server at 127.0.0.1:5432 with a namespace and catalog of its own.
 */
import { randomBytes } from 'node:crypto';
import { createPostgresProvider } from '../../src/branches/postgres-provider.js';
import type { TemplateBranchProvider } from '../../src/branches/template-provider.js';
import { roleAdminTestProvider } from '../helpers/role-admin.js';
import { asUser, query } from '../helpers/servers.js';

const ADMIN = process.env.CONSORT_TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const tag = randomBytes(4).toString('hex');
const catalogDatabase = `consort_catalog_sec_${tag}`;
let provider: TemplateBranchProvider;

/** The system server's admin is a superuser, so a confined URL must come back. */
async function confined(name: string): Promise<string> {
  const url = await provider.confinedUri!(name);
  if (url === null) throw new Error("no confined URL: the test server's admin is not a superuser");
  return url;
}

const other = (url: string, database: string) => {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
};

beforeAll(async () => {
  provider = createPostgresProvider({ url: ADMIN, namespace: `sec${tag}`, catalogDatabase });
  await provider.create({ name: 'a' });
  await provider.create({ name: 'b' });
  await asUser(await provider.connectionUri('a'), (c) =>
    c.query('CREATE TABLE customers (id int primary key, name text)'),
  );
}, 60_000);

afterAll(async () => {
  await provider.delete('a', { terminateConnections: true }).catch(() => undefined);
  await provider.delete('b', { terminateConnections: true }).catch(() => undefined);
  await provider.delete('main', { terminateConnections: true }).catch(() => undefined);
  await provider.close();
  await asUser(ADMIN, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${catalogDatabase}" WITH (FORCE)`);
    await c.query(`DROP DATABASE IF EXISTS "sec${tag}_main" WITH (FORCE)`);
  });
});

it('reaches its own branch, with what a suite needs there', async () => {
  const url = await confined('a');
  expect(new URL(url).username).not.toBe('postgres');
  await asUser(url, async (c) => {
    await c.query("INSERT INTO customers VALUES (1, 'Ada')");
    expect((await c.query('SELECT count(*)::int AS n FROM customers')).rows[0].n).toBe(1);
    await c.query('CREATE TABLE scratch (x int)'); // a test may create its own tables
    await c.query('ALTER TABLE customers ADD COLUMN phone text'); // and migrate its own branch
    const { rows } = await c.query(
      'SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user',
    );
    expect(rows[0]).toEqual({ rolsuper: false, rolcreatedb: false, rolcreaterole: false });
  });
});

it('owns a partitioned table and its partitions, so it can migrate them', async () => {
  await provider.create({ name: 'parts' });
  try {
    await asUser(await provider.connectionUri('parts'), async (c) => {
      await c.query('CREATE TABLE events (id bigint, at date NOT NULL) PARTITION BY RANGE (at)');
      await c.query("CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')");
    });
    await asUser(await confined('parts'), async (c) => {
      await c.query('ALTER TABLE events ADD COLUMN kind text');
      await c.query("CREATE TABLE events_2025 PARTITION OF events FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')");
      await c.query("ALTER TABLE events_2024 ALTER COLUMN kind SET DEFAULT 'old'");
    });
  } finally {
    await provider.delete('parts', { terminateConnections: true });
  }
});

it('cannot reach a sibling branch or the catalog', async () => {
  const url = await confined('a');
  const b = (await provider.get('b'))!.database;
  await expect(asUser(other(url, b), (c) => c.query('SELECT 1'))).rejects.toThrow(/permission denied for database/);
  await expect(asUser(other(url, catalogDatabase), (c) => c.query('SELECT 1'))).rejects.toThrow(
    /permission denied for database/,
  );
});

it('cannot reach a sibling branch that was reset (its database is a new copy)', async () => {
  const url = await confined('a');
  await provider.reset('b', { terminateConnections: true });
  const b = (await provider.get('b'))!.database;
  await expect(asUser(other(url, b), (c) => c.query('SELECT 1'))).rejects.toThrow(/permission denied for database/);
});

it("a pooled branch's role is made with the copy: no login until handed out, then its own database only; a reset from the pool ends the old key", async () => {
  const prefix = `sec${tag}_`;
  const poolRoles = async () =>
    (
      await query<{ rolname: string; rolcanlogin: boolean; keyed: boolean }>(
        ADMIN,
        "SELECT rolname, rolcanlogin, rolpassword IS NOT NULL AS keyed FROM pg_authid WHERE starts_with(rolname, $1) AND rolname LIKE '%\\_role' ORDER BY 1",
        [`${prefix}consort_pool_`],
      )
    ).map((r) => ({ login: r.rolcanlogin, keyed: r.keyed }));
  await provider.create({ name: 'tpl' });
  await asUser(await provider.connectionUri('tpl'), (c) => c.query('CREATE TABLE orders (id int primary key)'));
  try {
    await provider.pool!('tpl', 2);
    // Each ready copy has its role already, owning the copy's table, with neither a login nor a key.
    expect(await poolRoles()).toEqual([
      { login: false, keyed: false },
      { login: false, keyed: false },
    ]);
    expect((await provider.create({ name: 'p1', parent: 'tpl' })).pooled).toBe(true);
    const url = await confined('p1');
    expect(new URL(url).username).toBe(`${prefix}p1_role`);
    await asUser(url, async (c) => {
      await c.query('INSERT INTO orders VALUES (1)');
      await c.query('ALTER TABLE orders ADD COLUMN note text'); // the owner: it can migrate its branch
    });
    for (const database of [
      (await provider.get('tpl'))!.database,
      (await provider.get('a'))!.database,
      catalogDatabase,
    ])
      await expect(asUser(other(url, database), (c) => c.query('SELECT 1'))).rejects.toThrow(
        /permission denied for database/,
      );
    // The copy still in the pool: its role has no key, and the handed-out role cannot reach it.
    const [member] = await query<{ datname: string }>(
      ADMIN,
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
      [`${prefix}consort_pool_`],
    );
    await expect(asUser(other(url, member!.datname), (c) => c.query('SELECT 1'))).rejects.toThrow(
      /permission denied for database/,
    );
    // A reset takes a pooled copy: the branch's role is now that copy's, and the old key is dead.
    await provider.reset('p1', { terminateConnections: true });
    await expect(asUser(url, (c) => c.query('SELECT 1'))).rejects.toThrow(
      /password authentication failed|not permitted to log in/,
    );
    const after = await confined('p1');
    expect(new URL(after).username).toBe(`${prefix}p1_role`);
    expect(await asUser(after, async (c) => (await c.query('SELECT count(*)::int AS n FROM orders')).rows[0].n)).toBe(
      0,
    );
    await provider.settled();
  } finally {
    await provider.delete('tpl', { recursive: true, terminateConnections: true });
  }
  // Nothing left: the copies' roles, the branch's old role (aside) and the new one go with their databases.
  expect(await poolRoles()).toEqual([]);
  expect(
    await query(ADMIN, 'SELECT rolname FROM pg_roles WHERE rolname IN ($1, $2) OR starts_with(rolname, $3)', [
      `${prefix}p1_role`,
      `${prefix}tpl_role`,
      `${prefix}consort_old_`,
    ]),
  ).toEqual([]);
}, 120_000);

it('has no superuser powers: no COPY TO PROGRAM, no CREATE DATABASE, no CREATE ROLE', async () => {
  const url = await confined('a');
  await asUser(url, async (c) => {
    await expect(c.query("COPY (SELECT 1) TO PROGRAM 'id'")).rejects.toThrow(
      /permission denied|must be superuser|pg_execute_server_program/,
    );
    await expect(c.query('CREATE DATABASE stolen')).rejects.toThrow(/permission denied/);
    await expect(c.query('CREATE ROLE stolen')).rejects.toThrow(/permission denied/);
  });
});

it('says it cannot confine when the admin is not a superuser (a CREATEDB-only role), instead of failing the check', async () => {
  const admin = `sec${tag}_admin`;
  await asUser(ADMIN, (c) => c.query(`CREATE ROLE "${admin}" LOGIN CREATEDB PASSWORD 'pw'`));
  const url = new URL(ADMIN);
  url.username = admin;
  url.password = 'pw';
  const weak = createPostgresProvider({
    url: url.toString(),
    namespace: `sec${tag}w`,
    catalogDatabase: `${catalogDatabase}_w`,
  });
  try {
    await weak.create({ name: 'x' });
    expect(await weak.confinedUri('x')).toBeNull();
  } finally {
    await weak.delete('x', { terminateConnections: true }).catch(() => undefined);
    await weak.delete('main', { terminateConnections: true }).catch(() => undefined);
    await weak.close();
    await asUser(ADMIN, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS "${catalogDatabase}_w" WITH (FORCE)`);
      await c.query(`DROP DATABASE IF EXISTS "sec${tag}w_main" WITH (FORCE)`);
      await c.query(`DROP DATABASE IF EXISTS "sec${tag}w_x" WITH (FORCE)`);
      await c.query(`DROP ROLE IF EXISTS "${admin}"`);
    });
  }
});

it('confines with an admin that has CREATEROLE but is no superuser, holding the role without its privileges (PostgreSQL 18)', async () => {
  const t = await roleAdminTestProvider('local');
  try {
    await t.provider.create({ name: 'x' });
    await t.provider.create({ name: 'y' });
    const url = await t.provider.confinedUri('x');
    if (url === null) throw new Error('a CREATEROLE admin on PostgreSQL 18 must confine');
    const role = decodeURIComponent(new URL(url).username);
    // The admin may SET ROLE to it (to hand it objects), but does not act with its privileges.
    const grants = await query(
      t.superUrl,
      `SELECT m.inherit_option, m.set_option FROM pg_auth_members m
        WHERE m.roleid = $1::regrole AND m.member = $2::regrole AND m.grantor = m.member`,
      [role, new URL(t.adminUrl).username],
    );
    expect(grants).toEqual([{ inherit_option: false, set_option: true }]);
    // And the role is a member of nothing: it gets nothing back.
    expect(await query(t.superUrl, 'SELECT 1 FROM pg_auth_members WHERE member = $1::regrole', [role])).toEqual([]);
    await asUser(url, async (c) => {
      await expect(c.query('ALTER ROLE CURRENT_USER CREATEDB')).rejects.toThrow(/permission denied/);
      await expect(c.query(`SET ROLE "${new URL(t.adminUrl).username}"`)).rejects.toThrow(/permission denied/);
    });
    const y = (await t.provider.get('y'))!.database;
    await expect(asUser(other(url, y), (c) => c.query('SELECT 1'))).rejects.toThrow(/permission denied for database/);
    await expect(asUser(other(url, t.catalogDatabase), (c) => c.query('SELECT 1'))).rejects.toThrow(
      /permission denied for database/,
    );
  } finally {
    await t.cleanup();
  }
});
