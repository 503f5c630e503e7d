/**
 * Real servers for tests, cheap enough to use in every file:
 *
 * - localTestProvider(): the `local` provider's branches on the run's one shared embedded
 *   PostgreSQL 18 (test/setup/clusters.ts), in a namespace of its own, so files running side by
 *   side never see each other's branches. Booting a server per file was most of the suite's time.
 * - ownLocalTestProvider() / ownDataDir(): a server of the test's own (a copy of the run's
 *   initdb'd template), for tests about the local provider itself: its server's lifecycle, its
 *   data directory, the CLI or the Action starting it from CONSORT_DATA_DIR.
 * - postgresTestProvider(): the `postgres` provider on the system server (CONSORT_TEST_POSTGRES_URL,
 *   default 127.0.0.1:5432, or the embedded stand-in global-setup.mjs arranges when nothing answers).
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { createLocalProvider, LOCAL_CATALOG_DATABASE } from '../../src/branches/local/provider.js';
import { supportsReflink } from '../../src/branches/local/reflink.js';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { createPostgresProvider, POSTGRES_CATALOG_DATABASE } from '../../src/branches/postgres-provider.js';
import { TemplateBranchProvider } from '../../src/branches/template-provider.js';
import { withDatabase } from '../../src/db/sql.js';
import { copyOfTemplate, sharedServer } from '../setup/clusters.js';
import { systemPgUrl } from '../setup/system-postgres.js';

export const SYSTEM_PG_URL = systemPgUrl();

export interface TestProvider {
  provider: TemplateBranchProvider;
  adminUrl: string;
  /** local: the server's data directory; postgres: the test's namespace. */
  dataDir?: string;
  namespace: string;
  cleanup: () => Promise<void>;
}

const newNamespace = (letter: string) => `${letter}${randomBytes(4).toString('hex')}`;

/** The local provider on the run's shared embedded server, in a namespace of this call's own. */
export async function localTestProvider(): Promise<TestProvider> {
  const server = await sharedServer();
  const namespace = newNamespace('l');
  // As createLocalProvider builds it, but prefixed by the namespace: the server is shared.
  const provider = new TemplateBranchProvider({
    provider: 'local',
    adminUrl: server.url,
    namespace,
    databasePrefix: `${namespace}_`,
    catalogDatabase: LOCAL_CATALOG_DATABASE,
    cloneMode: async (version) => {
      if (version < 180000) return { clone: false, reason: 'PostgreSQL before 18 cannot clone files' };
      const { reflink, reason } = await supportsReflink(path.dirname(server.pgdata));
      return { clone: reflink, reason };
    },
  });
  return {
    provider,
    adminUrl: server.url,
    dataDir: server.dataDir,
    namespace,
    cleanup: async () => {
      await provider.close();
      await dropNamespace(server.url, namespace, LOCAL_CATALOG_DATABASE);
    },
  };
}

/**
 * An initialised, stopped embedded cluster of the test's own (namespace `local`, as users get it):
 * pass it as CONSORT_DATA_DIR to the CLI or the Action. Stop it with `new EmbeddedServer(dir).stop()`;
 * the run's teardown stops and removes whatever is left.
 */
export function ownDataDir(): Promise<string> {
  return copyOfTemplate();
}

/** createLocalProvider exactly as the CLI builds it, on a server of the test's own. */
export async function ownLocalTestProvider(): Promise<TestProvider> {
  const dataDir = await ownDataDir();
  const { provider, server } = await createLocalProvider({ dataDir });
  return {
    provider,
    adminUrl: server.url,
    dataDir,
    namespace: 'local',
    cleanup: async () => {
      await provider.close();
      await new EmbeddedServer(dataDir).stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function postgresTestProvider(): Promise<TestProvider> {
  const namespace = newNamespace('t');
  const provider = createPostgresProvider({ url: SYSTEM_PG_URL, namespace });
  return {
    provider,
    adminUrl: SYSTEM_PG_URL,
    namespace,
    cleanup: async () => {
      await provider.close();
      await dropNamespace(SYSTEM_PG_URL, namespace, POSTGRES_CATALOG_DATABASE);
    },
  };
}

/** Remove every database and catalog row a test namespace left on a shared server. */
export async function dropNamespace(adminUrl: string, namespace: string, catalogDatabase: string): Promise<void> {
  const rows = await query<{ datname: string }>(adminUrl, 'SELECT datname FROM pg_database WHERE datname LIKE $1', [
    `${namespace}\\_%`,
  ]);
  // A few at a time: on PostgreSQL 15 every DROP DATABASE forces a checkpoint, and drops that overlap share one.
  for (let i = 0; i < rows.length; i += 8)
    await Promise.all(
      rows
        .slice(i, i + 8)
        .map(({ datname }) => query(adminUrl, `DROP DATABASE IF EXISTS "${datname.replace(/"/g, '""')}" WITH (FORCE)`)),
    );
  // The branches' own roles (branchRoleName: `<database>_role`) outlive their databases: server-wide.
  const roles = await query<{ rolname: string }>(adminUrl, 'SELECT rolname FROM pg_roles WHERE rolname LIKE $1', [
    `${namespace}\\_%`,
  ]);
  for (const { rolname } of roles)
    await query(adminUrl, `DROP ROLE IF EXISTS "${rolname.replace(/"/g, '""')}"`).catch(() => undefined);
  const catalogUrl = withDatabase(adminUrl, catalogDatabase);
  const catalog = await query<{ ok: boolean }>(adminUrl, 'SELECT true AS ok FROM pg_database WHERE datname = $1', [
    catalogDatabase,
  ]);
  if (catalog.length === 0) return; // the provider was never used
  await query(catalogUrl, "SELECT 1 FROM pg_namespace WHERE nspname = 'consort'").then(async (r) => {
    if (r.length === 0) return;
    await query(catalogUrl, 'DELETE FROM consort.branches WHERE namespace = $1 AND parent IS NOT NULL', [namespace]);
    await query(catalogUrl, 'DELETE FROM consort.branches WHERE namespace = $1', [namespace]);
  });
}

export async function query<T extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** One session as the user `url` names, for a test's several statements (closed afterwards). */
export async function asUser<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Run `sql` as `url`'s user and say what happened: `allowed: <rows>` or `refused: <message>`. */
export async function attempt(url: string, sql: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  try {
    await c.connect();
    const { rows } = await c.query(sql);
    return `allowed: ${JSON.stringify(rows)}`;
  } catch (e) {
    return `refused: ${(e as Error).message}`;
  } finally {
    await c.end().catch(() => undefined);
  }
}
