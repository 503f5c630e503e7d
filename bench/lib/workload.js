/**
 * The benchmark's data set, expressed as the migrations a project would run: two tables, rows
 * from generate_series with deterministic "random-ish" text (md5 of the row number, so every
 * server gets byte-identical data), and secondary indexes. Each migration runs in its own
 * transaction, as a migration tool would run it.
 */
import pg from 'pg';

const MiB = 1024 * 1024;
/** pg_database_size of an empty database on PostgreSQL 18 (catalogs only), measured. */
const EMPTY_DATABASE_BYTES = 7.8e6;
/** Bytes per events row including its share of accounts and all indexes, measured on PostgreSQL 18. */
const BYTES_PER_EVENT = 179;
const EVENTS_PER_ACCOUNT = 20;

/** Row count that makes the whole database about `sizeMb` MiB. */
export function eventsForSize(sizeMb) {
  return Math.max(2000, Math.round((sizeMb * MiB - EMPTY_DATABASE_BYTES) / BYTES_PER_EVENT));
}

/**
 * The ordered migrations that build a database of about `sizeMb` MiB; `extraTables` adds one
 * more migration with that many small tables (each with a primary key, a secondary index and a
 * TOAST table: ~7 files), to model a bigger schema.
 */
export function migrations(sizeMb, { extraTables = 0 } = {}) {
  const events = eventsForSize(sizeMb);
  const accounts = Math.max(1, Math.round(events / EVENTS_PER_ACCOUNT));
  return [
    {
      name: '001_create_tables',
      sql: `CREATE TABLE accounts (
              id         bigint PRIMARY KEY,
              email      text NOT NULL,
              name       text NOT NULL,
              created_at timestamptz NOT NULL
            );
            CREATE TABLE events (
              id         bigint PRIMARY KEY,
              account_id bigint NOT NULL,
              kind       text NOT NULL,
              payload    text NOT NULL,
              created_at timestamptz NOT NULL
            )`,
    },
    {
      name: '002_seed_accounts',
      sql: `INSERT INTO accounts
            SELECT g,
                   'user' || g || '@example.com',
                   initcap(left(md5(g::text), 8)) || ' ' || initcap(substr(md5(g::text), 9, 10)),
                   timestamptz '2024-01-01' + g * interval '1 minute'
              FROM generate_series(1, ${accounts}) AS g`,
    },
    {
      name: '003_seed_events',
      sql: `INSERT INTO events
            SELECT g,
                   1 + (g::bigint * 7919) % ${accounts},
                   (ARRAY['signup', 'login', 'purchase', 'refund', 'logout'])[1 + g % 5],
                   left(md5(g::text) || md5((g + 1)::text), 40 + g % 25),
                   timestamptz '2024-01-01' + g * interval '1 second'
              FROM generate_series(1, ${events}) AS g`,
    },
    {
      name: '004_indexes',
      sql: `CREATE INDEX events_account_created_idx ON events (account_id, created_at);
            CREATE INDEX accounts_email_idx ON accounts (email)`,
    },
    ...(extraTables > 0
      ? [{
          name: '005_extra_tables',
          sql: `DO $$
                BEGIN
                  FOR i IN 1..${extraTables} LOOP
                    EXECUTE format('CREATE TABLE extra_%s (id bigint PRIMARY KEY, ref bigint NOT NULL, note text NOT NULL)', i);
                    EXECUTE format('CREATE INDEX extra_%s_ref_idx ON extra_%s (ref)', i, i);
                    EXECUTE format('INSERT INTO extra_%s SELECT g, g %% 7, md5(g::text) FROM generate_series(1, 100) AS g', i);
                  END LOOP;
                END $$`,
        }]
      : []),
  ].map((m) => ({ ...m, rows: m.name === '003_seed_events' ? events : m.name === '002_seed_accounts' ? accounts : 0 }));
}

/**
 * Run every migration against `url`, each in a transaction. Returns per-migration durations (ms).
 * `onStep` is told before each step (for progress lines).
 */
export async function applyMigrations(url, list, onStep = () => undefined) {
  const client = await connect(url);
  const steps = [];
  try {
    for (const m of list) {
      onStep(m);
      const t0 = performance.now();
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw e;
      }
      steps.push({ name: m.name, ms: performance.now() - t0 });
    }
  } finally {
    await client.end().catch(() => undefined);
  }
  return steps;
}

export async function connect(url) {
  const client = new pg.Client({ connectionString: url, application_name: 'consort-bench' });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Run one statement (or a few) on a short-lived connection and return the rows. */
export async function sql(url, text, params = []) {
  const client = await connect(url);
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Replace the database of a connection URL. */
export function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

/** A backend lingers briefly after its client disconnects: wait until none is left on `database`. */
export async function waitForNoSessions(adminUrl, database, timeoutMs = 15_000) {
  const client = await connect(adminUrl);
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
        [database],
      );
      if (rows[0].n === 0) return;
      if (Date.now() > deadline) throw new Error(`sessions still open on ${database} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
