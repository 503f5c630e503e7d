/**
 * The narrow database seam: scoped clients, transactions and advisory locks, and the one helper
 * that quotes identifiers. No SQL in Consort concatenates an unquoted identifier.
 */
import pg from 'pg';

export type Queryable = Pick<pg.ClientBase, 'query'>;

/** Swallows a connection's 'error' event: what it reports, the next query on the client rejects with. */
const lost = (): undefined => undefined;

/**
 * A client whose lost connection (a server stopped or restarted, `pg_terminate_backend`, a network
 * cut) surfaces as a rejected query, not as an 'error' event nobody listens to, which ends the
 * process. Every client Consort makes comes from here or from `newPool` (lint holds it to that).
 */
export function newClient(config: pg.ClientConfig): pg.Client {
  // eslint-disable-next-line no-restricted-syntax -- the one place a client is made
  const client = new pg.Client(config);
  client.on('error', lost);
  return client;
}

/**
 * A pool whose clients, idle or checked out, never raise an unhandled 'error': pg-pool listens only
 * while a client is idle, so one checked out between two queries (a transaction, a lock held while
 * files are written) when the server goes away would otherwise take the process with it.
 */
export function newPool(config: pg.PoolConfig): pg.Pool {
  // eslint-disable-next-line no-restricted-syntax -- the one place a pool is made
  const pool = new pg.Pool(config);
  pool.on('error', lost);
  pool.on('connect', (client) => client.on('error', lost));
  return pool;
}

export function quoteIdent(name: string): string {
  if (name.includes('\u0000')) throw new Error('identifier contains a NUL byte');
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * A string constant that reads back as `value` whatever `standard_conforming_strings` is: with a
 * backslash in it, an escape string (E'…', backslashes doubled), as libpq's PQescapeLiteral does;
 * a plain '…' would turn `\t` into a tab (or `\'` into a quote) on a server with it off.
 */
export function quoteLiteral(value: string): string {
  if (value.includes('\u0000')) throw new Error('literal contains a NUL byte');
  const body = value.replace(/'/g, "''");
  return value.includes('\\') ? `E'${body.replace(/\\/g, '\\\\')}'` : `'${body}'`;
}

export async function withClient<T>(
  connectionString: string,
  fn: (client: pg.Client) => Promise<T>,
  options: { applicationName?: string } = {},
): Promise<T> {
  const client = newClient({
    connectionString,
    application_name: options.applicationName ?? 'consort',
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function withTransaction<T>(client: Queryable, fn: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await fn();
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}

/** Session-level advisory lock keyed by text; released even if `fn` throws. */
export async function withAdvisoryLock<T>(client: Queryable, key: string, fn: () => Promise<T>): Promise<T> {
  await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]);
  try {
    return await fn();
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]).catch(() => undefined);
  }
}

export async function tryAdvisoryLock(client: Queryable, key: string): Promise<boolean> {
  const { rows } = await client.query('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [key]);
  return rows[0].ok === true;
}

export async function advisoryUnlock(client: Queryable, key: string): Promise<void> {
  await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
}

/** Replace the database of a connection string, keeping credentials and parameters. */
export function withDatabase(connectionString: string, database: string): string {
  const url = new URL(connectionString);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

export function pgErrorCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}
