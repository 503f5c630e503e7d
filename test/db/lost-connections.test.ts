/**
 * A connection the server ends (a stopped or restarted server, `pg_terminate_backend`) must come back
 * as a rejected query, never as an 'error' event nobody listens to: pg raises that one from its
 * socket handler, so it ends the process — the CLI mid-command, or the App for every repository.
 * pg-pool listens only while a client is idle in the pool, so a client checked out between two
 * queries was exposed too. Every client and pool in Consort comes from newClient / newPool (and
 * lint refuses `new pg.Client` / `new pg.Pool` elsewhere).
 */
import pg from 'pg';
import { newClient, newPool, withClient } from '../../src/db/sql.js';
import { scratchPgUrl } from '../setup/system-postgres.js';

let url: string;
beforeAll(async () => {
  url = await scratchPgUrl();
});

/** End a session from the server's side, as a fast shutdown does: FATAL 57P01 to an idle client. */
async function terminate(pid: number): Promise<void> {
  await withClient(url, async (admin) => {
    const { rows } = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
    expect(rows[0]?.ok).toBe(true);
  });
}

/** Resolves when the client's connection has closed (events.once would reject on the 'error' before it). */
const closed = (c: pg.ClientBase): Promise<void> => new Promise((resolve) => c.once('end', () => resolve()));

const backendPid = async (c: pg.ClientBase): Promise<number> =>
  (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

it('an idle client whose session the server ends: its next query rejects, the process lives', async () => {
  const client = newClient({ connectionString: url, application_name: 'consort-test-lost' });
  await client.connect();
  const ended = closed(client);
  await terminate(await backendPid(client));
  await ended;
  await expect(client.query('SELECT 1')).rejects.toThrow(/not queryable|terminat/i);
  await client.end().catch(() => undefined);
});

it('a client checked out of a pool (between two queries) whose session the server ends: the same', async () => {
  const pool = newPool({ connectionString: url, max: 2, application_name: 'consort-test-lost' });
  try {
    const client = await pool.connect();
    const ended = closed(client);
    await terminate(await backendPid(client));
    await ended;
    await expect(client.query('SELECT 1')).rejects.toThrow(/not queryable|terminat/i);
    client.release(true);
    // The pool makes a new connection for the next caller.
    await expect(pool.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
  } finally {
    await pool.end();
  }
});

it('an idle client in the pool whose session the server ends: the pool drops it and goes on', async () => {
  const pool = newPool({ connectionString: url, max: 1, application_name: 'consort-test-lost' });
  try {
    const client = await pool.connect();
    const pid = await backendPid(client);
    client.release();
    const ended = closed(client);
    await terminate(pid);
    await ended;
    await expect(pool.query('SELECT 2 AS two')).resolves.toMatchObject({ rows: [{ two: 2 }] });
  } finally {
    await pool.end();
  }
});
