/**
 * Database access for the shop. Every function of the app takes a `db` that is either a pg.Pool or a
 * connected pg.Client; `withTransaction` makes multi-statement work atomic in both cases.
 */
import pg from 'pg';

// Ids and sums are bigint (int8); in this shop they always fit a JavaScript number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${value} does not fit a JavaScript number`);
  return n;
});

export function createPool(connectionString = process.env.DATABASE_URL) {
  if (!connectionString) throw new Error('DATABASE_URL is not set: point it at the shop database');
  return new pg.Pool({ connectionString, max: 5 });
}

const NO_ACTIVE_TRANSACTION = '25P01';

async function transaction(client, fn) {
  await client.query('BEGIN');
  try {
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

async function savepoint(client, fn) {
  let result;
  try {
    result = await fn(client);
  } catch (error) {
    await client.query('ROLLBACK TO SAVEPOINT shop_tx');
    await client.query('RELEASE SAVEPOINT shop_tx');
    throw error;
  }
  await client.query('RELEASE SAVEPOINT shop_tx');
  return result;
}

/**
 * Runs `fn(client)` atomically. With a pool it checks out a client and wraps the work in
 * BEGIN/COMMIT. With a client that is already inside a transaction (a request-scoped unit of work,
 * or a test that rolls back at the end) it uses a savepoint, so a failure undoes only this work and
 * leaves the caller's transaction usable; with a client outside a transaction it opens one.
 */
export async function withTransaction(db, fn) {
  if (db instanceof pg.Pool) {
    const client = await db.connect();
    try {
      return await transaction(client, fn);
    } finally {
      client.release();
    }
  }
  try {
    await db.query('SAVEPOINT shop_tx');
  } catch (error) {
    if (error.code === NO_ACTIVE_TRANSACTION) return transaction(db, fn);
    throw error;
  }
  return savepoint(db, fn);
}
