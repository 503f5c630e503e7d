/**
 * A branch carries its parent's own settings (`ALTER DATABASE … SET`, `ALTER ROLE … IN DATABASE …
 * SET`), which `CREATE DATABASE … TEMPLATE` leaves behind: made directly, from a warm pool (also
 * after the template's settings changed), as a grandchild and by a reset, on both real servers.
 */
import { isConsortError } from '../../src/core/errors.js';
import { settingStatement, splitGucList } from '../../src/branches/database-settings.js';
import { quoteIdent } from '../../src/db/sql.js';
import type { TemplateBranchProvider } from '../../src/branches/template-provider.js';
import { roleAdminTestProvider } from '../helpers/role-admin.js';
import { localTestProvider, postgresTestProvider, query, type TestProvider } from '../helpers/servers.js';

describe('splitGucList', () => {
  it.each([
    ['app, public', ['app', 'public']],
    ['"$user", public', ['$user', 'public']],
    ['"My Schema",public', ['My Schema', 'public']],
    ['"a""b", "c,d"', ['a"b', 'c,d']],
    ['""', ['']],
    ['  MixedCase  ', ['MixedCase']],
    ['', []],
  ])('%j', (value, elements) => {
    expect(splitGucList(value)).toEqual(elements);
  });

  it.each([['"open'], ['a,,b'], ['a b'], ['a,']])('refuses %j', (value) => {
    expect(splitGucList(value)).toBeUndefined();
  });
});

describe('settingStatement', () => {
  it.each([
    [null, 'search_path', '"$user", public', `ALTER DATABASE "d" SET "search_path" TO '$user', 'public'`],
    [null, 'TimeZone', 'UTC', `ALTER DATABASE "d" SET "TimeZone" TO 'UTC'`],
    [null, 'DateStyle', 'SQL, DMY', `ALTER DATABASE "d" SET "DateStyle" TO 'SQL, DMY'`],
    ['r"x', 'app.note', "it's", `ALTER ROLE "r""x" IN DATABASE "d" SET "app.note" TO 'it''s'`],
    [null, 'search_path', '', `ALTER DATABASE "d" SET "search_path" TO ''`],
  ])('%s %s=%s', (role, name, value, statement) => {
    expect(settingStatement('d', { role, name, value })).toBe(statement);
  });
});

/** What a database has in pg_db_role_setting, by role name ('' for every role). */
async function settingsOf(adminUrl: string, database: string): Promise<Record<string, string[]>> {
  const rows = await query<{ role: string | null; setconfig: string[] }>(
    adminUrl,
    `SELECT r.rolname AS role, s.setconfig FROM pg_db_role_setting s
       JOIN pg_database d ON d.oid = s.setdatabase LEFT JOIN pg_roles r ON r.oid = s.setrole
      WHERE d.datname = $1`,
    [database],
  );
  return Object.fromEntries(rows.map((r) => [r.role ?? '', r.setconfig]));
}

describe.each([
  ['local', localTestProvider],
  ['postgres', postgresTestProvider],
])('%s provider: database settings', (_name, make) => {
  let t: TestProvider;
  let p: TemplateBranchProvider;
  let reader: string;
  const url = (name: string) => p.connectionUri(name);
  const database = async (name: string) => (await p.get(name))!.database;
  /** SHOW in a new session on the branch, as the admin or through `via`. */
  async function show(name: string, via?: string): Promise<{ search_path: string; timezone: string }> {
    const target = via ?? (await url(name));
    const [path] = await query<{ search_path: string }>(target, 'SHOW search_path');
    const [zone] = await query<{ TimeZone: string }>(target, 'SHOW timezone');
    return { search_path: path!.search_path, timezone: zone!.TimeZone };
  }
  const PARENT = { search_path: 'app, "$user", "My Schema", public', timezone: 'Pacific/Chatham' };

  beforeAll(async () => {
    t = await make();
    p = t.provider;
    reader = `${t.namespace}_reader`; // dropped with the namespace
    await query(t.adminUrl, `CREATE ROLE ${quoteIdent(reader)} NOLOGIN`);
    const main = quoteIdent(await database('main'));
    for (const sql of [
      `ALTER DATABASE ${main} SET search_path = app, "$user", "My Schema", public`,
      `ALTER DATABASE ${main} SET timezone = 'Pacific/Chatham'`,
      `ALTER DATABASE ${main} SET DateStyle = 'SQL, DMY'`,
      `ALTER DATABASE ${main} SET consort_test.note = 'it''s = "quoted", ok'`,
      `ALTER ROLE ${quoteIdent(reader)} IN DATABASE ${main} SET work_mem = '3MB'`,
    ])
      await query(t.adminUrl, sql);
  });
  afterAll(async () => {
    await p?.settled();
    await t?.cleanup();
  });

  it('gives a branch and its child the parent settings, for every role and per role', async () => {
    const main = await settingsOf(t.adminUrl, await database('main'));
    expect(main['']).toContain('search_path=app, "$user", "My Schema", public');
    await p.create({ name: 'child' });
    await p.create({ name: 'grandchild', parent: 'child' });
    for (const name of ['child', 'grandchild']) {
      expect(await settingsOf(t.adminUrl, await database(name))).toEqual(main);
      expect(await show(name)).toEqual(PARENT);
    }
    // The confined URL untrusted code gets sees them too.
    const confined = await p.confinedUri('grandchild');
    if (confined !== null) expect(await show('grandchild', confined)).toEqual(PARENT);
    const [note] = await query<{ v: string }>(
      await url('grandchild'),
      "SELECT current_setting('consort_test.note') AS v",
    );
    expect(note!.v).toBe('it\'s = "quoted", ok');
    await p.delete('child', { recursive: true });
  });

  it('hands out pool copies with the template settings, also after they changed', async () => {
    await p.create({ name: 'tmpl' });
    const tmpl = quoteIdent(await database('tmpl'));
    await query(t.adminUrl, `ALTER DATABASE ${tmpl} SET statement_timeout = '42s'`);
    await p.pool('tmpl', 1);
    const first = await p.create({ name: 'leased', parent: 'tmpl' });
    expect(first.pooled).toBe(true);
    expect(await settingsOf(t.adminUrl, await database('leased'))).toEqual(
      await settingsOf(t.adminUrl, await database('tmpl')),
    );
    expect(await show('leased')).toEqual(PARENT);
    await p.settled(); // the pool holds a copy again
    expect(await p.poolStatus('tmpl')).toEqual([{ template: 'tmpl', size: 1, ready: 1 }]);

    // From the admin's own database: no session on the template, so only the settings moved.
    await query(t.adminUrl, `ALTER DATABASE ${tmpl} SET search_path = other, public`);
    const second = await p.create({ name: 'leased2', parent: 'tmpl' });
    expect(second.pooled).toBe(false); // the ready copy has the old settings: not handed out
    expect(await show('leased2')).toEqual({ ...PARENT, search_path: 'other, public' });
    await p.settled();
    const third = await p.create({ name: 'leased3', parent: 'tmpl' });
    expect(third.pooled).toBe(true); // refilled with the new settings
    expect(await show('leased3')).toEqual({ ...PARENT, search_path: 'other, public' });
    await p.pool('tmpl', 0);
    await p.delete('tmpl', { recursive: true });
  });

  it('gives a reset branch the parent settings as they are now', async () => {
    await p.create({ name: 'base' });
    await p.create({ name: 'work', parent: 'base' });
    const base = quoteIdent(await database('base'));
    await query(t.adminUrl, `ALTER DATABASE ${base} SET timezone = 'Asia/Kathmandu'`);
    await query(t.adminUrl, `ALTER DATABASE ${quoteIdent(await database('work'))} SET search_path = mine`);
    await p.reset('work');
    expect(await show('work')).toEqual({ ...PARENT, timezone: 'Asia/Kathmandu' });
    expect(await settingsOf(t.adminUrl, await database('work'))).toEqual(
      await settingsOf(t.adminUrl, await database('base')),
    );
    await p.delete('base', { recursive: true });
  });
});

it('names a parent setting a non-superuser admin may not make, leaves nothing behind, and copies it once granted', async () => {
  const t = await roleAdminTestProvider('postgres');
  const admin = quoteIdent(new URL(t.adminUrl).username);
  try {
    const main = (await t.provider.get('main'))!.database;
    // Only a superuser (or a role granted SET on it) may set it.
    await query(t.superUrl, `ALTER DATABASE ${quoteIdent(main)} SET session_replication_role = replica`);
    const error = await t.provider.create({ name: 'x' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isConsortError(error, 'auth')).toBe(true);
    expect((error as Error).message).toMatch(/parent's setting \(ALTER DATABASE … SET session_replication_role\)/);
    expect((error as { hint: string }).hint).toMatch(/GRANT SET ON PARAMETER session_replication_role/);
    expect(await t.provider.get('x')).toBeUndefined();
    expect(await query(t.superUrl, 'SELECT 1 FROM pg_database WHERE datname = $1', [`${t.namespace}_x`])).toEqual([]);

    await query(t.superUrl, `GRANT SET ON PARAMETER session_replication_role TO ${admin}`);
    await t.provider.create({ name: 'x' });
    const [row] = await query(await t.provider.connectionUri('x'), 'SHOW session_replication_role');
    expect(row).toEqual({ session_replication_role: 'replica' });
  } finally {
    await query(t.superUrl, `REVOKE SET ON PARAMETER session_replication_role FROM ${admin}`).catch(() => undefined);
    await t.cleanup();
  }
});
