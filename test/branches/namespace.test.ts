/**
 * Removing a whole namespace (`consort branch delete main --recursive`): every branch database,
 * branch role and catalog row goes, main with them — except a database adopted as main, which is
 * the user's and is only forgotten. On the shared embedded server (`local`) and the system
 * PostgreSQL (`postgres`).
 */
import { randomBytes } from 'node:crypto';
import { quoteIdent, withDatabase } from '../../src/db/sql.js';
import { POSTGRES_CATALOG_DATABASE, createPostgresProvider } from '../../src/branches/postgres-provider.js';
import {
  localTestProvider,
  postgresTestProvider,
  query,
  SYSTEM_PG_URL,
  type TestProvider,
} from '../helpers/servers.js';

async function leftovers(adminUrl: string, namespace: string) {
  const databases = await query<{ datname: string }>(
    adminUrl,
    'SELECT datname FROM pg_database WHERE datname LIKE $1',
    [`${namespace}\\_%`],
  );
  const roles = await query<{ rolname: string }>(adminUrl, 'SELECT rolname FROM pg_roles WHERE rolname LIKE $1', [
    `${namespace}\\_%`,
  ]);
  const rows = await query<{ name: string }>(
    withDatabase(adminUrl, POSTGRES_CATALOG_DATABASE),
    'SELECT name FROM consort.branches WHERE namespace = $1',
    [namespace],
  );
  return {
    databases: databases.map((d) => d.datname),
    roles: roles.map((r) => r.rolname),
    rows: rows.map((r) => r.name),
  };
}

describe.each([
  ['local', localTestProvider],
  ['postgres', postgresTestProvider],
])('%s provider: delete main --recursive', (_name, make) => {
  let t: TestProvider;
  beforeAll(async () => {
    t = await make();
  });
  afterAll(async () => t?.cleanup());

  it('refuses main alone, and says how to remove the namespace', async () => {
    await expect(t.provider.delete('main')).rejects.toMatchObject({
      code: 'protected-branch',
      message: expect.stringContaining('cannot be deleted on its own'),
      hint: expect.stringContaining('consort branch delete main --recursive'),
    });
  });

  it('removes every database, role and catalog row of the namespace, main included; a later use starts afresh', async () => {
    await t.provider.create({ name: 'baseline-x' });
    await t.provider.create({ name: 'pr-1', parent: 'baseline-x' });
    await t.provider.confinedUri('pr-1'); // a branch role
    const before = await leftovers(t.adminUrl, t.namespace);
    expect(before.rows.sort()).toEqual(['baseline-x', 'main', 'pr-1']);
    expect(before.roles.length).toBeGreaterThan(0);

    const deleted = await t.provider.delete('main', { recursive: true });
    expect(deleted).toEqual(['pr-1', 'baseline-x', 'main']);
    expect(await leftovers(t.adminUrl, t.namespace)).toEqual({ databases: [], roles: [], rows: [] });

    // The provider is still usable: main is made again, empty.
    expect((await t.provider.list()).map((b) => b.name)).toEqual(['main']);
  });
});

it('postgres: a database adopted as main is forgotten, not dropped', async () => {
  const namespace = `a${randomBytes(4).toString('hex')}`;
  const adopted = `adopted_${randomBytes(4).toString('hex')}`;
  await query(SYSTEM_PG_URL, `CREATE DATABASE ${quoteIdent(adopted)}`);
  const provider = createPostgresProvider({ url: SYSTEM_PG_URL, namespace, mainDatabase: adopted });
  try {
    await query(
      withDatabase(SYSTEM_PG_URL, adopted),
      'CREATE TABLE accounts (id int); INSERT INTO accounts VALUES (1)',
    );
    await provider.create({ name: 'feature' });
    expect(await provider.delete('main', { recursive: true })).toEqual(['feature', 'main']);
    expect(await leftovers(SYSTEM_PG_URL, namespace)).toEqual({ databases: [], roles: [], rows: [] });
    expect(await query(withDatabase(SYSTEM_PG_URL, adopted), 'SELECT id FROM accounts')).toEqual([{ id: 1 }]);
  } finally {
    await provider.close();
    await query(SYSTEM_PG_URL, `DROP DATABASE IF EXISTS ${quoteIdent(adopted)} WITH (FORCE)`);
  }
});
