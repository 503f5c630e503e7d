/**
 * The node-pg-migrate adapter: runs a directory's migrations through node-pg-migrate's own
 * programmatic `runner`, so what Consort applies is exactly what a deploy would apply, and records
 * the SQL each migration sent. A bad migration is an expected outcome (a failed ApplyResult); only
 * an unusable database (cannot connect, lock held elsewhere, connection lost) throws.
 */
import pg from 'pg';
import { newClient } from '../db/sql.js';
import { ConsortError } from '../core/errors.js';
import { escapeRegExp } from '../core/regexp.js';
import { quoteIdent } from '../db/sql.js';
import type {
  AppliedMigration,
  ApplyFailure,
  ApplyOptions,
  ApplyResult,
  MigrationError,
  MigrationRunner,
  MigrationSession,
} from '../ports/migration-runner.js';
import type { MigrationEngine } from './engine.js';
import { bundledRunner } from './engine-load.js';
import { MigrationSetCache, readMigrationSet, runnerIgnorePattern, type MigrationFile } from './files.js';
import { migrationsTableSchema } from './placement.js';

export type {
  AppliedMigration,
  ApplyFailure,
  ApplyOptions,
  ApplyResult,
  MigrationError,
} from '../ports/migration-runner.js';

/** The migration being run; `marked` once its INSERT/DELETE on the migrations table went out. */
interface Live {
  name: string;
  sql: string[];
  startedAt: number;
  marked: boolean;
}

/**
 * Attributes node-pg-migrate's queries to migrations. For each migration it logs
 * `### MIGRATION <name> (UP|DOWN) ###`, then sends `BEGIN;`, the migration's steps, the
 * INSERT/DELETE on its table and `COMMIT;`. Queries a JS migration makes itself (`pgm.db.query`)
 * run while its `up` builds the steps, before that log line, so they are held as pending and
 * given to the next migration that starts. Everything before `> Migrating files:` is
 * node-pg-migrate's own setup (lock, migrations table) and is not recorded. A migration counts as
 * applied once the transaction it ran in commits (at once, if it ran outside one).
 */
function createCapture(
  table: string,
  schema: string,
  files: Map<string, MigrationFile>,
  onRunning?: (name: string) => void,
) {
  const lines: string[] = [];
  const done: AppliedMigration[] = [];
  let uncommitted: AppliedMigration[] = [];
  // Every migration that got as far as its bookkeeping this run, committed or not (committedAfterFailure).
  const finished: AppliedMigration[] = [];
  const failures = new Map<unknown, string>();
  const sentUntil = new Map<unknown, { sql: string[]; transactional: boolean }>();
  let [migrating, pending, pendingSince, planned, finishedThisRun] = [false, [] as string[], 0, [] as string[], 0];
  let current: Live | undefined;
  let inTransaction = false;
  // The migration running, as the caller last heard (a time limit names it: MigrationSession.apply's onRunning).
  let told: string | undefined;
  const tell = (): void => {
    const now = current?.name ?? planned[finishedThisRun];
    if (onRunning && now !== undefined && now !== told) onRunning((told = now));
  };
  const bookkeeping = new RegExp(`^(INSERT INTO|DELETE FROM) ${escapeRegExp(`"${schema}"."${table}"`)} `);
  const txControl = new Set(['BEGIN', 'COMMIT', 'ROLLBACK', 'BEGIN;', 'COMMIT;']);

  const finish = (): void => {
    if (current === undefined) return;
    const { name, sql, startedAt } = current;
    const file = files.get(name)?.file ?? name;
    const migration = {
      name,
      file,
      sql,
      durationMs: Math.round(performance.now() - startedAt),
      transactional: inTransaction,
    };
    (inTransaction ? uncommitted : done).push(migration);
    finished.push(migration);
    [finishedThisRun, current, pendingSince] = [finishedThisRun + 1, undefined, performance.now()];
    tell();
  };
  const onLog =
    (level: string) =>
    (msg: string): void => {
      lines.push(`${level}: ${msg}`);
      if (msg === '> Migrating files:') [migrating, pendingSince] = [true, performance.now()];
      const listed = /^> - (.+)$/.exec(msg)?.[1];
      if (listed !== undefined) planned.push(listed);
      const started = /^### MIGRATION (.+) \((?:UP|DOWN)\) ###$/.exec(msg)?.[1];
      if (started !== undefined) {
        if (current?.marked) finish(); // single-transaction mode: no COMMIT between migrations
        current = { name: started, sql: pending, startedAt: pendingSince, marked: false };
        pending = [];
      }
      // Once node-pg-migrate listed what it runs: the first listed is running (its up builds the steps).
      if (migrating && (started !== undefined || listed !== undefined)) tell();
    };
  return {
    logger: { info: onLog('info'), warn: onLog('warn'), error: onLog('error') },
    beginRun(): void {
      [migrating, pending, planned, finishedThisRun, current] = [false, [], [], 0, undefined];
    },
    beforeQuery(text: string): void {
      if (!migrating || txControl.has(text)) return;
      if (current === undefined || current.marked) pending.push(text);
      else if (bookkeeping.test(text)) current.marked = true;
      else current.sql.push(text);
    },
    afterQuery(text: string): void {
      if (text === 'BEGIN' || text === 'BEGIN;') inTransaction = true;
      else if (text === 'ROLLBACK') [inTransaction, uncommitted] = [false, []];
      else if (text === 'COMMIT' || text === 'COMMIT;') {
        if (current?.marked) finish();
        done.push(...uncommitted);
        [inTransaction, uncommitted] = [false, []];
      } else if (current?.marked && !inTransaction && bookkeeping.test(text)) finish();
    },
    queryFailed(text: string, e: unknown): void {
      failures.set(e, text);
      // Taken now: node-pg-migrate's ROLLBACK and unlock follow.
      const sent = current !== undefined && !current.marked ? current.sql : pending;
      sentUntil.set(e, { sql: [...sent], transactional: inTransaction });
    },
    failedQuery: (e: unknown): string | undefined => failures.get(e),
    /** What the running migration had sent when `e` failed (that statement last), and whether in a transaction. */
    sentUntil: (e: unknown): { sql: string[]; transactional: boolean } | undefined => sentUntil.get(e),
    /** The migration that was running when node-pg-migrate stopped. */
    inProgress: (): string | undefined => current?.name ?? planned[finishedThisRun],
    applied: (): AppliedMigration[] => [...done],
    /**
     * After a failure, what the migrations table says was committed, where node-pg-migrate's own
     * BEGIN/COMMIT do not: a migration whose text holds a `COMMIT` of its own (a `.sql` written as a
     * psql script, `COMMIT; BEGIN;` to use an enum value it adds) ends node-pg-migrate's transaction
     * early, so it, and every migration before it in a single transaction, stays applied when a later
     * one fails. `recorded`: the table's names after the rollback.
     */
    committedAfterFailure(recorded: ReadonlySet<string>, direction: 'up' | 'down'): AppliedMigration[] {
      const kept = new Set(done.map((m) => m.name));
      const stayed = finished.filter((m) => !kept.has(m.name) && recorded.has(m.name) === (direction === 'up'));
      return [...done, ...stayed];
    },
    /** Migrations that got as far as their bookkeeping this run and are not in `kept` (rolled back with a failure). */
    rolledBack(kept: readonly AppliedMigration[]): AppliedMigration[] {
      const stayed = new Set(kept.map((m) => m.name));
      return finished.filter((m) => !stayed.has(m.name));
    },
    log: (): string[] => [...lines],
  };
}
type Capture = ReturnType<typeof createCapture>;

async function connect(databaseUrl: string): Promise<pg.Client> {
  const client = newClient({
    connectionString: databaseUrl,
    application_name: 'consort-migrate',
    connectionTimeoutMillis: 10_000,
  });
  try {
    await client.connect();
  } catch (e) {
    await client.end().catch(() => undefined);
    throw new ConsortError(
      'server-unavailable',
      `Cannot connect to the database to apply migrations: ${(e as Error).message}`,
      {
        hint: 'Check that the branch exists and its connection URL is reachable.',
        cause: e,
      },
    );
  }
  return client;
}

/** The client node-pg-migrate is given: the real one, with `query` going through the capture. */
function recordingClient(client: pg.Client, capture: Capture): pg.Client {
  const query = async (textOrConfig: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult> => {
    const text = typeof textOrConfig === 'string' ? textOrConfig : textOrConfig.text;
    capture.beforeQuery(text);
    try {
      const result =
        typeof textOrConfig === 'string' ? await client.query(textOrConfig, values) : await client.query(textOrConfig);
      capture.afterQuery(text);
      return result;
    } catch (e) {
      capture.queryFailed(text, e);
      throw e;
    }
  };
  return new Proxy(client, {
    get(target, prop) {
      if (prop === 'query') return query;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function pgFields(e: unknown): Omit<MigrationError, 'message' | 'line'> {
  if (!(e instanceof pg.DatabaseError)) return {};
  const position = e.position === undefined ? undefined : Number(e.position);
  return {
    code: e.code,
    ...(position !== undefined && Number.isFinite(position) ? { position } : {}),
    ...(e.detail ? { detail: e.detail } : {}),
    ...(e.hint ? { hint: e.hint } : {}),
  };
}

/** Where in the migration file the failing statement's error position falls. */
export function lineInFile(
  m: MigrationFile | undefined,
  statement: string,
  position: number | undefined,
  direction: 'up' | 'down',
): number | undefined {
  if (m === undefined || position === undefined) return undefined;
  const lineInStatement = statement.slice(0, Math.max(position - 1, 0)).split('\n').length;
  // A SQL migration's section is sent verbatim (node-pg-migrate only appends a `;`).
  const sqlOffset = direction === 'up' ? m.upSqlLineOffset : m.downSqlLineOffset;
  if (m.kind === 'sql' && sqlOffset !== undefined) return sqlOffset + lineInStatement;
  // For JS/TS, a literal `pgm.sql('…')` string appears verbatim in the source.
  const found = [statement, statement.replace(/;$/, '')]
    .map((s) => (s.trim() === '' ? -1 : m.content.indexOf(s)))
    .find((i) => i >= 0);
  return found === undefined ? undefined : m.content.slice(0, found).split('\n').length - 1 + lineInStatement;
}

/**
 * The failing statement as the user wrote it: without node-pg-migrate's `-- Up Migration` marker
 * line and the lone `;` it appends to a SQL section. `cut` is how many characters were removed
 * from the front, to keep Postgres's error position pointing at the same character.
 */
export function shownStatement(sql: string): { text: string; cut: number } {
  const marker = /^\s*--\s*(?:up|down) migration[^\n]*\n(?:\s*\n)*/i.exec(sql);
  const cut = marker ? marker[0].length : 0;
  return {
    text: sql
      .slice(cut)
      .replace(/\n\s*;\s*$/, '')
      .trimEnd(),
    cut,
  };
}

/**
 * node-pg-migrate loads the copies in the check's scratch directory, so its errors (a JS syntax
 * error, a stack line) name `…/node_modules/.cache/consort/check-…/head/migrations/x.js`: point
 * them at the project's own `migrations/x.js` instead.
 */
export function projectPaths(message: string, files: ReadonlyMap<string, Pick<MigrationFile, 'file'>>): string {
  let out = message;
  for (const m of files.values()) {
    const base = m.file.split('/').pop() ?? m.file;
    const escaped = escapeRegExp(base);
    out = out.replace(new RegExp(`(?:file://)?[^\\s'"(]*[/\\\\]${escaped}(?![\\w.])`, 'g'), m.file);
  }
  return out;
}

/** Postgres classes that mean the server or connection went away, not that the migration is wrong. */
function isConnectionFailure(e: unknown): boolean {
  if (e instanceof pg.DatabaseError) return /^(08|57P0)/.test(e.code ?? '');
  return /Connection terminated|ECONNRESET|EPIPE|not queryable|Client was closed/i.test((e as Error)?.message ?? '');
}

/** What went wrong, in terms of a migration; undefined when node-pg-migrate failed for a reason that is not one. */
function classify(
  e: unknown,
  capture: Capture,
  files: Map<string, MigrationFile>,
  direction: 'up' | 'down',
): ApplyFailure | undefined {
  const message = projectPaths((e as Error)?.message ?? String(e), files);
  const fileOf = (name: string): string => files.get(name)?.file ?? name;
  const failed = capture.failedQuery(e);
  const current = capture.inProgress();
  if (failed !== undefined && current !== undefined) {
    const fields = pgFields(e);
    const line = lineInFile(files.get(current), failed, fields.position, direction);
    const shown = shownStatement(failed);
    const sent = capture.sentUntil(e);
    const position = fields.position === undefined ? undefined : Math.max(1, fields.position - shown.cut);
    return {
      kind: 'statement',
      name: current,
      file: fileOf(current),
      statement: shown.text,
      error: {
        message,
        ...fields,
        ...(position === undefined ? {} : { position }),
        ...(line === undefined ? {} : { line }),
      },
      ...(sent ? { sent } : {}),
    };
  }
  const order = /^Not run migration (.+) is preceding already run migration (.+)$/.exec(message);
  if (order?.[1] !== undefined) return { kind: 'order', name: order[1], file: fileOf(order[1]), error: { message } };
  const deleted = /^Definitions of migrations (.+) have been deleted\.$/.exec(message)?.[1]?.split(', ')[0];
  if (deleted !== undefined) return { kind: 'load', name: deleted, error: { message } };
  // 9's wording, and 7.x/8.x's.
  if (message.startsWith('Error loading migration files:') || message.startsWith("Can't get migration files:")) {
    const hit = [...files.values()].find((m) => message.includes(m.file.split('/').pop() ?? m.file));
    return { kind: 'load', ...(hit ? { name: hit.name, file: hit.file } : {}), error: { message } };
  }
  const disabled = /^User has disabled (?:up|down) migration on file: (.+)$/.exec(message)?.[1];
  const name = disabled ?? current;
  if (name === undefined) return undefined;
  const downUnavailable = disabled !== undefined || /Impossible to automatically infer down migration/.test(message);
  const line = downUnavailable ? undefined : lineInStack(e, files.get(name));
  return {
    kind: downUnavailable ? 'down-unavailable' : 'script',
    name,
    file: fileOf(name),
    error: { message, ...(line === undefined ? {} : { line }) },
  };
}

/**
 * Where a JavaScript migration's own code threw: the first frame of the error's stack in that
 * file (node-pg-migrate loads a copy of it under another folder, so it is matched by name). Not
 * for TypeScript, whose frames count the compiled lines.
 */
export function lineInStack(e: unknown, m: Pick<MigrationFile, 'file' | 'kind'> | undefined): number | undefined {
  if (m === undefined || !['js', 'cjs', 'mjs'].includes(m.kind)) return undefined;
  const stack = (e as Error | undefined)?.stack;
  if (typeof stack !== 'string') return undefined;
  const base = escapeRegExp(m.file.split('/').pop() ?? m.file);
  const hit = new RegExp(`[/\\\\]${base}:(\\d+):\\d+\\)?$`, 'm').exec(stack);
  return hit ? Number(hit[1]) : undefined;
}

/**
 * Apply a directory's migrations. SQL files are read, never run as code, so the bundled
 * node-pg-migrate applies them here; a JS/TS migration or the project's own node-pg-migrate is
 * the repository's code, so it runs in a child process with the allow-listed basics and the
 * caller's `env` only (isolated.ts): never inside Consort's process, where the App keeps PRIVATE_KEY
 * and WEBHOOK_SECRET and the Action its tokens.
 */
export async function applyMigrations(options: ApplyOptions): Promise<ApplyResult> {
  const fileList = await readMigrationSet(options.dir, {
    relativeTo: options.relativeTo,
    ignorePattern: options.ignorePattern,
  });
  if (needsChild(options.engine, fileList)) {
    const { applyInChild } = await import('./isolated.js');
    return applyInChild(options);
  }
  return applyMigrationsHere(options);
}

/** Whether these migrations (or this engine) are the repository's code, to run in a child process. */
export function needsChild(
  engine: MigrationEngine | undefined,
  files: readonly Pick<MigrationFile, 'kind'>[],
): boolean {
  return (
    engine?.source === 'project' ||
    engine?.source === 'lockfile' ||
    engine?.tsLoader !== undefined ||
    files.some((m) => m.kind !== 'sql' && m.kind !== 'other')
  );
}

/**
 * A session (the MigrationRunner port's `open`): one child process for the lot, started once,
 * its engine and TypeScript loader loaded once; SQL alone still runs here. Requests made with
 * `keep` leave their connection open for the next one on the same URL (here or in the child).
 */
export function openMigrationRunner(
  options: { env?: Readonly<Record<string, string>>; tree?: string } = {},
): MigrationSession {
  let child: import('./isolated.js').MigrationChild | undefined;
  // One child for every caller, even those asking while the module is still being imported.
  let made: Promise<import('./isolated.js').MigrationChild> | undefined;
  const theChild = () =>
    (made ??= import('./isolated.js').then((m) => (child = new m.MigrationChild(options.env, options.tree))));
  let warming: Promise<unknown> = Promise.resolve();
  const kept = new KeptClients();
  // A directory's migrations, read once for the session's many requests on it (reversibility's steps).
  const sets = new MigrationSetCache();
  const setOf = (options: ApplyOptions): Promise<MigrationFile[]> =>
    sets.read(options.dir, { relativeTo: options.relativeTo, ignorePattern: options.ignorePattern });
  // The engine warmed, when it needs the child: what a preload loads the files for.
  let warmed: { engine: MigrationEngine | undefined } | undefined;
  return {
    warm(engine, files) {
      if (!needsChild(engine, files)) return;
      warmed = { engine };
      warming = theChild().then((c) => c.warm(engine));
    },
    async preload(dir, relativeTo) {
      if (warmed) await (await theChild()).preload(warmed.engine, dir, relativeTo);
    },
    ready: () =>
      warming.then(
        () => undefined,
        () => undefined,
      ),
    async apply(options, how = {}) {
      await warming;
      const fileList = await setOf(options);
      if (needsChild(options.engine, fileList)) return (await theChild()).apply(options, how);
      return applyMigrationsHere(options, fileList, how.keep ? kept : undefined, how.onRunning);
    },
    stop() {
      child?.stop();
    },
    async release(databaseUrl) {
      await Promise.all([kept.release(databaseUrl), child?.release(databaseUrl)]);
    },
    async close() {
      await warming.catch(() => undefined);
      await kept.release();
      await child?.close();
    },
  };
}

/**
 * Connections kept between requests, one per URL. A connection is handed back only after a request
 * that ended cleanly, reset with `DISCARD ALL` (settings, roles, advisory locks, temporary tables,
 * prepared statements, LISTENs: what a new connection would not have), so each request still starts
 * from a fresh session's state; one a request left in doubt (a failure, an error) is ended instead.
 */
export class KeptClients {
  private readonly idle = new Map<string, pg.Client>();
  private readonly lost = new WeakSet<pg.Client>();

  /** The URL's kept connection (taken out until `give`), or a new one. */
  async take(databaseUrl: string): Promise<pg.Client> {
    const client = this.idle.get(databaseUrl);
    this.idle.delete(databaseUrl);
    if (client && !this.lost.has(client)) return client;
    const fresh = await connect(databaseUrl);
    const mark = (): void => void this.lost.add(fresh);
    fresh.on('error', mark).on('end', mark);
    return fresh;
  }

  /** Keep it for the URL's next request (after `DISCARD ALL`), or end it when it may not be clean. */
  async give(databaseUrl: string, client: pg.Client, clean: boolean): Promise<void> {
    const reset =
      clean &&
      !this.lost.has(client) &&
      (await client.query('DISCARD ALL').then(
        () => true,
        () => false,
      ));
    const other = this.idle.get(databaseUrl);
    if (reset && other === undefined) {
      this.idle.set(databaseUrl, client);
      return;
    }
    await client.end().catch(() => undefined);
  }

  /** End the URL's kept connection (every one without it). */
  async release(databaseUrl?: string): Promise<void> {
    const ending = [...this.idle].filter(([url]) => databaseUrl === undefined || url === databaseUrl);
    for (const [url] of ending) this.idle.delete(url);
    await Promise.all(ending.map(([, c]) => c.end().catch(() => undefined)));
  }
}

/** Apply in this process: for SQL alone, and inside the child process (apply-child.ts). */
export async function applyMigrationsHere(
  options: ApplyOptions,
  /** The directory's migrations when the caller has read them already (a session, once per directory). */
  read?: readonly MigrationFile[],
  /** Take the connection from here and give it back after (a session's `keep`); default: one of its own. */
  kept?: KeptClients,
  /** Told the name of each migration as it starts (MigrationSession.apply's `onRunning`). */
  onRunning?: (name: string) => void,
): Promise<ApplyResult> {
  if (options.onlyNames !== undefined && options.count !== undefined) {
    throw new ConsortError('invalid-input', 'applyMigrations takes either count or onlyNames, not both.');
  }
  const fileList =
    read ??
    (await readMigrationSet(options.dir, { relativeTo: options.relativeTo, ignorePattern: options.ignorePattern }));
  const files = new Map(fileList.map((m) => [m.name, m]));
  // node-pg-migrate silently runs nothing for a name it does not know.
  const unknown = (options.onlyNames ?? []).filter((n) => !files.has(n));
  if (unknown.length > 0)
    throw new ConsortError('invalid-input', `No migration named ${unknown.join(', ')} in ${options.dir}.`);
  const capture = createCapture(options.migrationsTable, migrationsTableSchema(options), files, onRunning);
  const client = kept ? await kept.take(options.databaseUrl) : await connect(options.databaseUrl);
  const dbClient = recordingClient(client, capture);
  const runs: (string | undefined)[] = options.onlyNames === undefined ? [undefined] : [...options.onlyNames];
  // Handed back for the next request only after one that ended cleanly.
  let clean = false;
  try {
    for (const only of runs) {
      capture.beginRun();
      try {
        await (options.engine?.runner ?? (await bundledRunner()))({
          dbClient,
          dir: options.dir,
          direction: options.direction,
          migrationsTable: options.migrationsTable,
          // node-pg-migrate's own schema options, as the project deploys with them (placement.ts).
          ...(options.schema === undefined ? {} : { schema: [...options.schema] }),
          ...(options.createSchema === undefined ? {} : { createSchema: options.createSchema }),
          ...(options.migrationsSchema === undefined ? {} : { migrationsSchema: options.migrationsSchema }),
          ...(options.createMigrationsSchema === undefined
            ? {}
            : { createMigrationsSchema: options.createMigrationsSchema }),
          ...(options.decamelize ? { decamelize: true } : {}),
          ...(options.count === undefined ? {} : { count: options.count }),
          ...(only === undefined ? {} : { file: only }),
          // Always one: node-pg-migrate 6's runner reads every file without one (only its CLI skips
          // dotfiles), so a `.gitkeep` would be loaded as a migration. The set read above agrees.
          ignorePattern: runnerIgnorePattern(options.ignorePattern),
          // The same guard a deploy runs with: an out-of-order migration becomes an `order` failure here.
          checkOrder: options.checkOrder ?? true,
          singleTransaction: options.singleTransaction ?? false,
          // node-pg-migrate 9's --tsconfig-paths, as the deploy runs it: the tree's file (apply-child.ts).
          ...(options.engine?.tsconfigPaths?.via === 'runner' && options.engine.tsconfigPaths.tsconfig !== undefined
            ? { tsconfigPaths: options.engine.tsconfigPaths.tsconfig }
            : {}),
          logger: capture.logger,
        });
      } catch (e) {
        if (/Another migration is already running/.test((e as Error)?.message ?? '')) {
          throw new ConsortError(
            'branch-busy',
            'Another node-pg-migrate run holds the migration lock on this database.',
            {
              hint: 'Wait for the other migration run to finish, then retry.',
              cause: e,
            },
          );
        }
        if (isConnectionFailure(e)) {
          throw new ConsortError(
            'server-unavailable',
            `Lost the database connection while applying migrations: ${(e as Error).message}`,
            { cause: e },
          );
        }
        const failed = classify(e, capture, files, options.direction);
        if (failed === undefined)
          throw new ConsortError('internal', `node-pg-migrate failed: ${(e as Error)?.message ?? String(e)}`, {
            cause: e,
          });
        await releaseAfterFailure(client);
        const recorded = await recordedNames(client, options);
        const applied =
          recorded === undefined ? capture.applied() : capture.committedAfterFailure(recorded, options.direction);
        const rolledBack = capture.rolledBack(applied);
        return { ok: false, failed, applied, log: capture.log(), ...(rolledBack.length > 0 ? { rolledBack } : {}) };
      }
    }
    clean = true;
    return { ok: true, applied: capture.applied(), log: capture.log() };
  } finally {
    if (kept) await kept.give(options.databaseUrl, client, clean);
    else await client.end().catch(() => undefined);
  }
}

/**
 * After a failed statement node-pg-migrate leaves the session inside the aborted transaction, so
 * its own `pg_advisory_unlock` fails and, with a caller-owned client, the lock would stay held for
 * as long as the session lives. Roll back and drop our session's advisory locks before closing.
 */
async function releaseAfterFailure(client: pg.Client): Promise<void> {
  await client.query('ROLLBACK').catch(() => undefined);
  await client.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
}

/** The names in the migrations table (undefined when it cannot be read: none made yet, or no right to it). */
async function recordedNames(client: pg.Client, options: ApplyOptions): Promise<Set<string> | undefined> {
  const table = `${quoteIdent(migrationsTableSchema(options))}.${quoteIdent(options.migrationsTable)}`;
  return client.query<{ name: string }>(`SELECT name FROM ${table}`).then(
    (r) => new Set(r.rows.map((row) => row.name)),
    () => undefined,
  );
}

/** The MigrationRunner port's adapter: node-pg-migrate, in a child process for the repository's own code. */
export const nodePgMigrate: MigrationRunner = {
  apply: applyMigrations,
  open: openMigrationRunner,
  // Imported on use: the migrations' child process loads this module and never resolves an engine.
  resolveEngine: async (workspace, options) => (await import('./engine.js')).resolveEngine(workspace, options),
};
