/**
 * The DDL a template-based provider issues on the server: copy a database from a template,
 * drop one, swap one in place. Open connections are handled deliberately: they are named in the
 * error, or terminated only when the caller asked for it — never killed silently.
 */
import { ConsortError } from '../core/errors.js';
import { pgErrorCode, quoteIdent, type Queryable } from '../db/sql.js';
import { count } from '../core/plural.js';
import { copyDatabaseSettings } from './database-settings.js';

export interface Session {
  pid: number;
  user: string | null;
  application: string | null;
  client: string | null;
}

export async function sessionsOn(db: Queryable, database: string): Promise<Session[]> {
  const { rows } = await db.query<{
    pid: number;
    usename: string | null;
    application_name: string | null;
    client: string | null;
  }>(
    `SELECT pid, usename, application_name, client_addr::text AS client
       FROM pg_stat_activity
      WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'
      ORDER BY pid`,
    [database],
  );
  return rows.map((r) => ({ pid: r.pid, user: r.usename, application: r.application_name || null, client: r.client }));
}

function describe(sessions: Session[]): string {
  return (
    sessions
      .slice(0, 5)
      .map(
        (s) =>
          `${s.application ?? 'unnamed app'} (pid ${s.pid}${s.user ? `, user ${s.user}` : ''}${s.client ? `, from ${s.client}` : ''})`,
      )
      .join(', ') + (sessions.length > 5 ? ` and ${sessions.length - 5} more` : '')
  );
}

/** Refuse (or, when asked, terminate) sessions on a database we are about to copy or drop. */
/**
 * How long sessions seen on a database get to go before they count as connected. A client that has
 * just disconnected is listed until its backend has exited, and many do not wait for that (psql
 * exits as soon as it has said goodbye; a killed process's sockets close after it): a script that
 * runs `psql "$(consort branch url main)" -c …` and then forks `main` would find it busy. PostgreSQL's
 * own CREATE and DROP DATABASE wait up to 5 s for such sessions before refusing.
 */
export const SESSION_GRACE_MS = 1000;

/** The sessions on `database` still there after up to `graceMs` (none, as soon as they are gone). */
export async function sessionsStaying(
  db: Queryable,
  database: string,
  graceMs: number = SESSION_GRACE_MS,
): Promise<Session[]> {
  const deadline = performance.now() + graceMs;
  let sessions = await sessionsOn(db, database);
  while (sessions.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    sessions = await sessionsOn(db, database);
  }
  return sessions;
}

export async function clearSessions(
  db: Queryable,
  database: string,
  branch: string,
  purpose: 'fork' | 'drop' | 'reset',
  terminate: boolean,
  onTerminated?: (line: string) => void,
  /** How long sessions on their way out get (0: the caller waited for them already). */
  graceMs: number = SESSION_GRACE_MS,
): Promise<void> {
  // Sessions on their way out are waited for (briefly) before they are refused; ending them is asked anyway.
  const sessions = terminate ? await sessionsOn(db, database) : await sessionsStaying(db, database, graceMs);
  if (sessions.length === 0) return;
  if (terminate) {
    await db.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [sessions.map((s) => s.pid)]);
    onTerminated?.(
      `Disconnected ${sessions.length === 1 ? '1 session' : `${sessions.length} sessions`} from branch "${branch}": ${describe(sessions)}.`,
    );
    return;
  }
  const what = purpose === 'fork' ? `be used as a parent` : purpose === 'drop' ? 'be deleted' : 'be reset';
  throw new ConsortError(
    'branch-busy',
    `Branch "${branch}" cannot ${what} while ${count(sessions.length, 'session')} ${sessions.length === 1 ? 'is' : 'are'} connected to it: ${describe(sessions)}.`,
    { hint: 'Close those connections, or pass --terminate-connections to end them.' },
  );
}

export async function databaseExists(db: Queryable, database: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  return rows.length > 0;
}

/** How `CREATE DATABASE … TEMPLATE` copied a database: `file_copy` (files, checkpoints) or `wal_log` (through WAL). */
export type CopyStrategy = 'file_copy' | 'wal_log';

/**
 * Templates smaller than this are copied with `STRATEGY WAL_LOG`, larger ones with `FILE_COPY`.
 * FILE_COPY checkpoints the whole server twice per copy (PostgreSQL 15–17, and 18 without
 * `file_copy_method = clone`): on a busy or shared server that costs more than writing a small
 * database to WAL, and concurrent copies queue behind each other's checkpoints. WAL_LOG writes the
 * whole template to WAL, so large templates (and every clone) use FILE_COPY. A server with
 * `fsync = off` (a throwaway one) syncs nothing at a checkpoint, so there copying files is cheaper
 * than writing them through WAL, and FILE_COPY is used too. See docs/benchmarks.md.
 */
export const WAL_LOG_BELOW_BYTES = 64 * 1024 * 1024;

/** FILE_COPY when the server clones files, does not fsync, or the template is large; WAL_LOG otherwise. */
export async function copyStrategy(db: Queryable, template: string, clone: boolean): Promise<CopyStrategy> {
  if (clone) return 'file_copy';
  const { rows: settings } = await db.query<{ fsync: boolean }>("SELECT current_setting('fsync')::boolean AS fsync");
  if (settings[0]?.fsync === false) return 'file_copy';
  // pg_database_size needs CONNECT on the template (or pg_read_all_stats): without it, the safe default.
  const bytes = await db
    .query<{ bytes: string | null }>(
      'SELECT pg_database_size(oid)::text AS bytes FROM pg_database WHERE datname = $1',
      [template],
    )
    .then(
      ({ rows }) => Number(rows[0]?.bytes ?? Infinity),
      () => Infinity,
    );
  return bytes < WAL_LOG_BELOW_BYTES ? 'wal_log' : 'file_copy';
}

/**
 * Copy `template` to a new database `target`, with the template's own settings (`ALTER DATABASE …
 * SET`, which the copy does not carry: database-settings.ts); returns the strategy that ran. Every
 * database Consort makes from another is made here. A target whose settings cannot be given is dropped.
 */
export async function copyDatabase(
  db: Queryable,
  target: string,
  template: string,
  templateBranch: string,
  clone: boolean,
): Promise<CopyStrategy> {
  const strategy = await copyStrategy(db, template, clone);
  if (clone) await db.query('SET file_copy_method = clone');
  try {
    await db.query(
      `CREATE DATABASE ${quoteIdent(target)} TEMPLATE ${quoteIdent(template)} STRATEGY ${strategy === 'wal_log' ? 'WAL_LOG' : 'FILE_COPY'}`,
    );
  } catch (e) {
    const code = pgErrorCode(e);
    if (code === '55006') {
      // Someone connected to the parent between our check and the copy.
      throw new ConsortError(
        'branch-busy',
        `Branch "${templateBranch}" got a new connection while it was being copied.`,
        {
          hint: 'Retry, or pass --terminate-connections to end sessions on the parent first.',
          cause: e,
        },
      );
    }
    if (code === '42P04') {
      throw new ConsortError(
        'branch-exists',
        `A database named "${target}" already exists but Consort does not track it.`,
        {
          hint: 'Drop that database yourself, or use another branch name or namespace.',
          cause: e,
        },
      );
    }
    throw e;
  }
  try {
    await copyDatabaseSettings(db, template, target);
  } catch (e) {
    await dropDatabase(db, target, true).catch(() => undefined);
    throw e;
  }
  return strategy;
}

export async function dropDatabase(db: Queryable, database: string, force: boolean): Promise<void> {
  await db.query(`DROP DATABASE IF EXISTS ${quoteIdent(database)}${force ? ' WITH (FORCE)' : ''}`);
}

export async function renameDatabase(db: Queryable, from: string, to: string): Promise<void> {
  await db.query(`ALTER DATABASE ${quoteIdent(from)} RENAME TO ${quoteIdent(to)}`);
}

export async function serverVersionNum(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
  return Number(rows[0]!.v);
}

/**
 * Nobody connects to this database by default (PUBLIC loses CONNECT and TEMP); its own role is granted them.
 * Two sessions changing one database's ACL at once make the later fail with "tuple concurrently
 * updated" (every provider process confines the shared catalog database as it starts: two CI jobs
 * on one server, two test files): the REVOKE is idempotent, so it is simply made again.
 */
export async function confineDatabase(db: Queryable, database: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db.query(confineStatement(database));
      return;
    } catch (e) {
      if (attempt >= 8 || !concurrentlyUpdated(e)) throw e;
      await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 10));
    }
  }
}

/** PostgreSQL's internal error for two updates of one catalog row at once (SQLSTATE XX000). */
function concurrentlyUpdated(e: unknown): boolean {
  return pgErrorCode(e) === 'XX000' && /tuple concurrently updated/.test(e instanceof Error ? e.message : '');
}

export function confineStatement(database: string): string {
  return `REVOKE CONNECT, TEMPORARY ON DATABASE ${quoteIdent(database)} FROM PUBLIC`;
}
