/**
 * Every provider process confines the shared catalog database as it starts, and two sessions
 * revoking one database's privileges at once make PostgreSQL fail the later with "tuple
 * concurrently updated" (seen: a test file's template provider failing beside another's). The
 * REVOKE is idempotent, and confineDatabase makes it again.
 */
import pg from 'pg';
import { confineDatabase } from '../../src/branches/server-ops.js';
import { SYSTEM_PG_URL } from '../helpers/servers.js';

const database = `consort_confine_race_${process.pid}`;
let admin: pg.Client;
let sessions: pg.Client[];

beforeAll(async () => {
  admin = new pg.Client(SYSTEM_PG_URL);
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${database}`);
  await admin.query(`CREATE DATABASE ${database}`);
  sessions = await Promise.all(
    Array.from({ length: 8 }, async () => {
      const c = new pg.Client(SYSTEM_PG_URL);
      await c.connect();
      return c;
    }),
  );
});

afterAll(async () => {
  await Promise.all(sessions.map((c) => c.end()));
  await admin.query(`DROP DATABASE IF EXISTS ${database}`);
  await admin.end();
});

it('confines one database from eight sessions at once, every time', async () => {
  for (let round = 0; round < 10; round++) {
    await admin.query(`GRANT CONNECT, TEMPORARY ON DATABASE ${database} TO PUBLIC`);
    const results = await Promise.allSettled(sessions.map((c) => confineDatabase(c, database)));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
  }
  const { rows } = await admin.query<{ open: boolean }>(
    "SELECT has_database_privilege('public', $1, 'CONNECT') AS open",
    [database],
  );
  expect(rows[0]!.open).toBe(false);
});
