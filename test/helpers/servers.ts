/**
 * Real servers for tests: a throwaway embedded PostgreSQL 18 (its own data directory under the
 * system temp dir, reachable by the postgres OS user when tests run as root) and the PostgreSQL
 * server at 127.0.0.1:5432 with a unique namespace per test file.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createLocalProvider } from '../../src/branches/local/provider.js';
import { EmbeddedServer } from '../../src/branches/local/server.js';
import { createPostgresProvider } from '../../src/branches/postgres-provider.js';
import type { TemplateBranchProvider } from '../../src/branches/template-provider.js';

export const SYSTEM_PG_URL = process.env.CONSORT_TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface TestProvider {
  provider: TemplateBranchProvider;
  adminUrl: string;
  /** local: the server's data directory; postgres: the test's namespace. */
  dataDir?: string;
  namespace: string;
  cleanup: () => Promise<void>;
}

export async function localTestProvider(): Promise<TestProvider> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'consort-test-'));
  await chmod(dataDir, 0o755); // the postgres OS user must reach it when tests run as root
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
  const namespace = `t${randomBytes(4).toString('hex')}`;
  const provider = createPostgresProvider({ url: SYSTEM_PG_URL, namespace });
  return {
    provider,
    adminUrl: SYSTEM_PG_URL,
    namespace,
    cleanup: async () => {
      await provider.close();
      await dropNamespace(namespace);
    },
  };
}

/** Remove every database and catalog row a test namespace left on the shared server. */
async function dropNamespace(namespace: string): Promise<void> {
  const client = new pg.Client({ connectionString: SYSTEM_PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${namespace}\\_%`]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
  const cat = new pg.Client({ connectionString: SYSTEM_PG_URL.replace(/\/[^/]*$/, '/consort_catalog') });
  await cat.connect();
  try {
    await cat.query('DELETE FROM consort.branches WHERE namespace = $1 AND parent IS NOT NULL', [namespace]);
    await cat.query('DELETE FROM consort.branches WHERE namespace = $1', [namespace]);
  } finally {
    await cat.end();
  }
}

export async function query<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}
