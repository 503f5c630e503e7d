/**
 * The App's store: a connection pool on the App's database and the migrations that shape its
 * `consort_app` schema (the SQL files in `migrations/` at the package root, applied with the same
 * node-pg-migrate runner the check lane uses). Several App processes may start at once, so
 * migrating happens under an advisory lock and the second process finds nothing left to do.
 */
import path from 'node:path';
import pg from 'pg';
import { ConsortError } from '../../src/core/errors.js';
import { confineDatabase } from '../../src/branches/server-ops.js';
import {
  newPool,
  quoteIdent,
  withAdvisoryLock,
  withClient,
  withDatabase,
  withTransaction,
  type Queryable,
} from '../../src/db/sql.js';
import { applyMigrations } from '../../src/migrations/runner.js';
import { findPackageRoot } from '../../src/core/package-root.js';

export const STORE_SCHEMA = 'consort_app';
export const STORE_MIGRATIONS_TABLE = 'pgmigrations';

export type Db = Queryable;

export interface Store {
  readonly pool: pg.Pool;
  /** Run `fn` in one transaction on one pooled connection. */
  tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The package root (src/core/package-root.ts): where the store's migrations folder is. */
export function packageRoot(from?: string): string {
  const root = findPackageRoot(from);
  if (root === null)
    throw new ConsortError('internal', `Cannot find Consort's package root above ${from ?? 'the store module'}.`);
  return root;
}

export const STORE_MIGRATIONS_DIR = (): string => path.join(packageRoot(), 'migrations');

/**
 * The App's store on its embedded server, which also holds every repository's branches: no role
 * but the admin may connect to it (a branch's confined role cannot even open a session there).
 */
export async function ensureStoreDatabase(adminUrl: string, name: string): Promise<string> {
  await withClient(adminUrl, async (db) => {
    const { rows } = await db.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rows.length === 0)
      await db.query(`CREATE DATABASE ${quoteIdent(name)}`).catch((e: { code?: string }) => {
        if (e.code !== '42P04') throw e; // created by another App process meanwhile
      });
    await confineDatabase(db, name);
  });
  return withDatabase(adminUrl, name);
}

/** Bring the store's schema up to date; returns the names of the migrations applied now. */
export async function migrateStore(url: string, dir: string = STORE_MIGRATIONS_DIR()): Promise<string[]> {
  return withClient(
    url,
    (client) =>
      withAdvisoryLock(client, 'consort_app:migrate', async () => {
        // node-pg-migrate keeps its table in the schema, so the schema must exist before it runs.
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(STORE_SCHEMA)}`);
        const result = await applyMigrations({
          databaseUrl: url,
          dir,
          direction: 'up',
          migrationsTable: STORE_MIGRATIONS_TABLE,
          migrationsSchema: STORE_SCHEMA,
          relativeTo: path.dirname(dir),
        });
        if (!result.ok) {
          const f = result.failed;
          throw new ConsortError(
            'internal',
            `The App's store migration ${f.file ?? f.name ?? ''} failed: ${f.error.message}`,
            {
              hint: 'The App cannot start on a store it cannot migrate; check DATABASE_URL points at a database the App may write.',
            },
          );
        }
        return result.applied.map((m) => m.name);
      }),
    { applicationName: 'consort-app' },
  );
}

export function openStore(url: string, options: { max?: number } = {}): Store {
  const pool = newPool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: 'consort-app',
    connectionTimeoutMillis: 10_000,
  });
  return {
    pool,
    async tx(fn) {
      const client = await pool.connect();
      try {
        return await withTransaction(client, () => fn(client));
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/**
 * Hold a repository-wide lock while `fn` runs: checks share it, promoting migrations to the parent
 * branch takes it alone (a template copy of the parent fails while anything is connected to it).
 */
export async function withRepositoryLock<T>(
  store: Store,
  repositoryId: number,
  mode: 'shared' | 'exclusive',
  fn: () => Promise<T>,
): Promise<T> {
  const client = await store.pool.connect();
  const key = `consort_app:repository:${repositoryId}`;
  try {
    await client.query(`SELECT pg_advisory_lock${mode === 'shared' ? '_shared' : ''}(hashtextextended($1, 0))`, [key]);
    try {
      return await fn();
    } finally {
      await client
        .query(`SELECT pg_advisory_unlock${mode === 'shared' ? '_shared' : ''}(hashtextextended($1, 0))`, [key])
        .catch(() => undefined);
    }
  } finally {
    client.release();
  }
}

/** bigint columns arrive as strings; every id the App stores fits a JS number. */
export const num = (value: unknown): number => Number(value);
export const numOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);
