/**
 * Crash safety: a process killed mid-create, or leftovers of interrupted resets and deletes,
 * leave nothing half-made that gc (or the next create of that name) does not clean up.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { withDatabase } from '../../src/db/sql.js';
import {
  localTestProvider,
  ownLocalTestProvider,
  postgresTestProvider,
  query,
  type TestProvider,
} from '../helpers/servers.js';

const BIN = path.resolve('bin/consort.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function catalogState(t: TestProvider, name: string, namespace: string): Promise<string | undefined> {
  const rows = await query<{ state: string }>(
    withDatabase(t.adminUrl, 'consort_catalog'),
    'SELECT state FROM consort.branches WHERE namespace = $1 AND name = $2',
    [namespace, name],
  );
  return rows[0]?.state;
}

async function databaseExists(t: TestProvider, db: string): Promise<boolean> {
  return (await query(t.adminUrl, 'SELECT 1 FROM pg_database WHERE datname = $1', [db])).length > 0;
}

describe('a create killed half-way (local provider, real process)', () => {
  let t: TestProvider;
  let dataDir: string;
  beforeAll(async () => {
    t = await ownLocalTestProvider();
    dataDir = t.dataDir!;
  });
  afterAll(async () => t?.cleanup());

  it('is rolled back by gc, and the name can be created again', async () => {
    await t.provider.create({ name: 'big' });
    // Enough data that the copy takes long enough to be interrupted.
    await query(
      await t.provider.connectionUri('big'),
      'CREATE TABLE blob AS SELECT g, repeat(md5(g::text), 8) AS pad FROM generate_series(1, 300000) g; CHECKPOINT',
    );
    const child = spawn(process.execPath, [BIN, 'branch', 'create', 'victim', '--from', 'big'], {
      env: { ...process.env, CONSORT_DATA_DIR: dataDir },
      stdio: 'ignore',
    });
    const exited = new Promise((r) => child.on('exit', r));
    // Watch for the row on one open session (a new connection per look costs more than the look).
    const watcher = new pg.Client({ connectionString: withDatabase(t.adminUrl, 'consort_catalog') });
    await watcher.connect();
    let seen = false;
    try {
      const deadline = Date.now() + 30000;
      while (!seen && Date.now() < deadline) {
        const { rows } = await watcher.query<{ state: string }>(
          'SELECT state FROM consort.branches WHERE namespace = $1 AND name = $2',
          ['local', 'victim'],
        );
        seen = rows[0]?.state === 'creating';
        if (!seen) await sleep(5);
      }
    } finally {
      await watcher.end();
    }
    expect(seen).toBe(true);
    child.kill('SIGKILL');
    await exited;

    expect(await t.provider.get('victim')).toBeUndefined();
    let repaired: string[] = [];
    for (let i = 0; i < 100 && !repaired.includes('victim'); i++) {
      repaired = (await t.provider.gc()).repaired;
      if (!repaired.includes('victim')) await sleep(100); // the killed session's copy may still be finishing
    }
    expect(repaired).toContain('victim');
    expect(await catalogState(t, 'victim', 'local')).toBeUndefined();
    expect(await databaseExists(t, 'victim')).toBe(false);
    // A parent this large (~100 MB) is copied file by file, not written through WAL.
    expect((await t.provider.create({ name: 'victim', parent: 'big' })).copyStrategy).toBe('file_copy');
    expect(await query(await t.provider.connectionUri('victim'), 'SELECT count(*)::int AS n FROM blob')).toEqual([
      { n: 300000 },
    ]);
  });
});

// Repair does not depend on the server's lifecycle: `local` runs in a namespace on the run's shared server.
describe.each([
  ['local', localTestProvider],
  ['postgres', postgresTestProvider],
])('%s provider: leftovers of dead processes', (_name, make) => {
  let t: TestProvider;
  let namespace: string;
  let dbPrefix: string;
  beforeAll(async () => {
    t = await make();
    await t.provider.capabilities();
    namespace = t.namespace;
    dbPrefix = `${namespace}_`;
  });
  afterAll(async () => t?.cleanup());

  const catalogUrl = () => withDatabase(t.adminUrl, 'consort_catalog');

  it('a row left "creating" with its database is cleaned up by the next create of that name', async () => {
    const db = `${dbPrefix}ghost`;
    await query(t.adminUrl, `CREATE DATABASE "${db}"`);
    await query(
      catalogUrl(),
      "INSERT INTO consort.branches (namespace, name, parent, database, state) VALUES ($1, 'ghost', 'main', $2, 'creating')",
      [namespace, db],
    );
    expect(await t.provider.get('ghost')).toBeUndefined();
    const created = await t.provider.create({ name: 'ghost' });
    expect(created.parent).toBe('main');
    expect(await catalogState(t, 'ghost', namespace)).toBe('ready');
  });

  it('an interrupted reset is finished by gc with the new copy in place', async () => {
    await t.provider.create({ name: 'half-reset' });
    const row = (await t.provider.get('half-reset'))!;
    await query(await t.provider.connectionUri('half-reset'), 'CREATE TABLE old_state (x int)');
    const pending = `${dbPrefix}consort_tmp_test01`;
    await query(t.adminUrl, `CREATE DATABASE "${pending}" TEMPLATE "${(await t.provider.get('main'))!.database}"`);
    await query(
      catalogUrl(),
      "UPDATE consort.branches SET state = 'resetting', pending_database = $3 WHERE namespace = $1 AND name = $2",
      [namespace, 'half-reset', pending],
    );
    const result = await t.provider.gc();
    expect(result.repaired).toEqual(['half-reset']);
    expect(await databaseExists(t, pending)).toBe(false);
    expect(
      await query(await t.provider.connectionUri('half-reset'), "SELECT to_regclass('old_state') IS NULL AS fresh"),
    ).toEqual([{ fresh: true }]);
    expect((await t.provider.get('half-reset'))!.database).toBe(row.database);
  });

  it('a reset killed between renaming the old database aside and putting the copy in place: gc finishes both', async () => {
    await t.provider.create({ name: 'aside-reset' });
    const row = (await t.provider.get('aside-reset'))!;
    await query(await t.provider.connectionUri('aside-reset'), 'CREATE TABLE old_state (x int)');
    const pending = `${dbPrefix}consort_tmp_test02`;
    const aside = `${dbPrefix}consort_old_test02`;
    await query(t.adminUrl, `CREATE DATABASE "${pending}" TEMPLATE "${(await t.provider.get('main'))!.database}"`);
    await query(
      catalogUrl(),
      "UPDATE consort.branches SET state = 'resetting', pending_database = $3 WHERE namespace = $1 AND name = $2",
      [namespace, 'aside-reset', pending],
    );
    // Where reset now stands when killed: the old database renamed aside, the copy not yet renamed in.
    await query(t.adminUrl, `ALTER DATABASE "${row.database}" RENAME TO "${aside}"`);
    const result = await t.provider.gc();
    expect(result.repaired.sort()).toEqual([aside, 'aside-reset'].sort());
    expect(await databaseExists(t, pending)).toBe(false);
    expect(await databaseExists(t, aside)).toBe(false);
    expect(
      await query(await t.provider.connectionUri('aside-reset'), "SELECT to_regclass('old_state') IS NULL AS fresh"),
    ).toEqual([{ fresh: true }]);
  });

  it("a reset drops the old database off the caller's time, leaving nothing once settled", async () => {
    await t.provider.create({ name: 'quick-reset' });
    const row = (await t.provider.get('quick-reset'))!;
    await query(await t.provider.connectionUri('quick-reset'), 'CREATE TABLE old_state (x int)');
    await t.provider.reset('quick-reset');
    expect(
      await query(await t.provider.connectionUri('quick-reset'), "SELECT to_regclass('old_state') IS NULL AS fresh"),
    ).toEqual([{ fresh: true }]);
    expect((await t.provider.get('quick-reset'))!.database).toBe(row.database);
    await t.provider.settled();
    const aside = await query(t.adminUrl, 'SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [
      `${dbPrefix}consort_old_`,
    ]);
    expect(aside).toEqual([]);
    // The branch's role owned objects in the old database: deleting the branch still drops it.
    await t.provider.confinedUri('quick-reset');
    await t.provider.reset('quick-reset');
    await t.provider.delete('quick-reset');
    expect(
      await query(t.adminUrl, 'SELECT rolname FROM pg_roles WHERE rolname = $1', [`${row.database.slice(0, 55)}_role`]),
    ).toEqual([]);
  });

  it('a create or delete killed while the branch had its role: gc drops the role with the database', async () => {
    // Where a kill leaves them: a seed running as the branch's own login role (runPrepare), or a
    // pool handout whose copy's role was renamed to the branch's, before the row was marked ready;
    // a delete killed between dropping the database and dropping the role.
    const roleOf = (db: string) => `${db.slice(0, 55)}_role`;
    for (const [name, state, withDatabase] of [
      ['killed-seed', 'creating', true],
      ['killed-drop', 'deleting', false],
    ] as const) {
      const db = `${dbPrefix}${name}`;
      if (withDatabase) await query(t.adminUrl, `CREATE DATABASE "${db}"`);
      await query(t.adminUrl, `CREATE ROLE "${roleOf(db)}" LOGIN PASSWORD 'a-seed-key-0123456789'`);
      if (withDatabase) await query(t.adminUrl, `GRANT CONNECT ON DATABASE "${db}" TO "${roleOf(db)}"`);
      await query(
        catalogUrl(),
        "INSERT INTO consort.branches (namespace, name, parent, database, state) VALUES ($1, $2, 'main', $3, $4)",
        [namespace, name, db, state],
      );
    }
    expect((await t.provider.gc()).repaired.sort()).toEqual(['killed-drop', 'killed-seed']);
    expect(await databaseExists(t, `${dbPrefix}killed-seed`)).toBe(false);
    expect(
      await query(t.adminUrl, 'SELECT rolname FROM pg_roles WHERE rolname = ANY($1)', [
        [roleOf(`${dbPrefix}killed-seed`), roleOf(`${dbPrefix}killed-drop`)],
      ]),
    ).toEqual([]);
  });

  it('an interrupted delete is finished by gc', async () => {
    await t.provider.create({ name: 'half-deleted' });
    const db = (await t.provider.get('half-deleted'))!.database;
    await query(
      catalogUrl(),
      "UPDATE consort.branches SET state = 'deleting' WHERE namespace = $1 AND name = 'half-deleted'",
      [namespace],
    );
    expect((await t.provider.list()).map((b) => b.name)).not.toContain('half-deleted');
    expect((await t.provider.gc()).repaired).toEqual(['half-deleted']);
    expect(await databaseExists(t, db)).toBe(false);
  });
});
