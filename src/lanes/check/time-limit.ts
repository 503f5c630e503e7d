/**
 * migrations.timeout: how long one request of the pull request's migrations may run on a branch
 * (the PR branch's, the suite's copy's, each of reversibility's steps), counted from its first
 * migration's start: the session's own start-up (by the limit, or a minute if longer), and then
 * loading the migrations and reaching the database (by the limit) are bounded on their own. Past it the statements
 * the request runs are cancelled, as the role that runs them; where none was running (a JavaScript
 * migration waiting on a promise that never settles, or looping) or the cancel did not end the
 * request, the session's child process is ended. The request then fails naming the migration
 * that was running, the limit and the key that raises it, so the run reports, removes its
 * temporary branches and releases its run lock instead of holding them until the CI job is killed.
 * A cancelled run ends its requests the same way (endRequests), without waiting for the limit.
 */
import { parseDuration } from '../../core/duration.js';
import { withClient } from '../../db/sql.js';
import type { MigrationFile } from '../../migrations/files.js';
import { migrationsTableSql } from '../../migrations/placement.js';
import type {
  ApplyFailure,
  ApplyOptions,
  ApplyResult,
  MigrationRunner,
  MigrationSession,
} from '../../ports/migration-runner.js';

/** How long a cancelled request may take to come back before the child goes too. */
const CANCEL_GRACE_MS = 2000;
/**
 * The least the session's own start-up (Node, the engine, a TypeScript loader; Consort's, not the
 * migrations') is given, whatever the limit: on a loaded CI runner it takes seconds.
 */
const STARTUP_FLOOR_MS = 60_000;
/** setTimeout's ceiling (~24.8 days): a longer delay would fire at once. Longer limits are this. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface TimeLimit {
  ms: number;
  /** As the configuration writes it (`30m`): what the failure quotes. */
  text: string;
}

/**
 * `session` with `limit` on each request. `files`: a migration's file by name, for a failure the
 * child could not report (it was ended). A request of this session that the child's end took
 * with it while its own limit had not passed yet (another branch's request ran past it) fails
 * the same way: its migrations were running that long too, side by side.
 */
export function timeLimited(
  session: MigrationSession,
  limit: TimeLimit,
  files: readonly { name: string; file: string }[],
  /** Whose configuration sets the limit, as the failure tells where to raise it. */
  configuration = 'the Consort configuration',
  /** The least the session's start-up is given (STARTUP_FLOOR_MS). */
  startupFloorMs = STARTUP_FLOOR_MS,
): MigrationSession {
  const fileOf = (name: string) => files.find((f) => f.name === name)?.file ?? name;
  // Bumped each time the limit ends the child: a request that saw it happen was ended by it.
  let stops = 0;
  const apply: MigrationSession['apply'] = async (options, how = {}) => {
    let running: string | undefined;
    let expired = false;
    const stopsBefore = stops;
    let disarm: (() => void) | undefined;
    const onRunning = (name: string): void => {
      // Loading the migrations and reaching the database are not their run either: the limit
      // starts again with the first migration (bounding what came before it on its own).
      if (running === undefined && !expired) restart();
      running = name;
      how.onRunning?.(name);
    };
    const stopChild = (): void => {
      if (!session.stop) return;
      stops++;
      session.stop();
    };
    let passed: () => void = () => undefined;
    const limitPassed = new Promise<void>((resolve) => (passed = resolve));
    const expire = (): void => {
      expired = true;
      passed();
      disarm = endRequests([options.databaseUrl], stopChild);
    };
    const restart = (ms = limit.ms): void => {
      clearTimeout(timer);
      timer = setTimeout(expire, Math.min(ms, MAX_TIMER_MS));
    };
    // The session's own start-up (Node, the engine, a TypeScript loader: seconds on a loaded CI
    // runner) is not the migrations' time: bounded on its own (the limit, or a minute if that is
    // longer), and the limit starts again once it is done.
    let timer = setTimeout(
      expire,
      Math.min(session.ready ? Math.max(limit.ms, startupFloorMs) : limit.ms, MAX_TIMER_MS),
    );
    try {
      if (session.ready) {
        await Promise.race([session.ready(), limitPassed]);
        if (expired) {
          const within = `${Math.round(Math.max(limit.ms, startupFloorMs) / 1000)} s`;
          const message = `the migrations' process did not start within ${within} (Node with the engine and its TypeScript loader, before any migration) and was ended. Run the check again; if it keeps happening, the machine is overloaded or an installed package hangs while loading`;
          return { ok: false, applied: [], log: [], failed: { kind: 'load', error: { message } } };
        }
        restart();
      }
      const r = await session.apply(options, { ...how, onRunning });
      // One that finished as the limit passed stands: only a request the limit ended is reported so.
      if (r.ok || !expired) return r;
      return { ...r, failed: timedOut(limit, options, r.failed.name ?? running, fileOf, configuration, r.failed) };
    } catch (e) {
      if (!expired && stops === stopsBefore) throw e;
      const name = running ?? (await recordedNext(options, files).catch(() => undefined));
      const failed = timedOut(limit, options, name, fileOf, configuration, undefined, !expired);
      return { ok: false, applied: [], log: [], failed };
    } finally {
      clearTimeout(timer);
      disarm?.();
    }
  };
  return Object.assign(Object.create(session) as MigrationSession, { apply });
}

/** What bounds one request applied with applyBounded. */
export interface Bounds {
  /** migrations.timeout as configured (`30m`), from configuration nothing under test controls; absent: no limit. */
  timeout?: string;
  /** Whose configuration sets it, as a failure tells where to raise it (timeLimited's `configuration`). */
  configuration?: string;
  /** The run's cancel: it ends the request at once (endRequests), and none starts after it. */
  signal?: AbortSignal;
  /** The failure's message when the run was cancelled before the migrations started. */
  cancelled: string;
}

/**
 * One request of migrations (`files`: the directory's, in the engine's order) under `bounds`, in a
 * session of its own (where the runner can open one; else unbounded, as before sessions existed):
 * the check lane's baseline, the TDD lane's baseline, sandboxes and proofs' branches all apply so.
 */
export async function applyBounded(
  migrations: Pick<MigrationRunner, 'apply'> & Partial<Pick<MigrationRunner, 'open'>>,
  options: ApplyOptions,
  files: readonly Pick<MigrationFile, 'name' | 'file' | 'kind'>[],
  bounds: Bounds,
): Promise<ApplyResult> {
  const { timeout, signal } = bounds;
  if ((timeout === undefined && !signal) || !migrations.open) return migrations.apply(options);
  const cancelled = (): ApplyResult => ({
    ok: false,
    applied: [],
    log: [],
    failed: { kind: 'load', error: { message: bounds.cancelled } },
  });
  if (signal?.aborted) return cancelled();
  // The child sees the folder it applies from, and no proof's tree but that one (a TDD proof's).
  const opened = migrations.open({
    ...(options.env ? { env: options.env } : {}),
    tree: options.relativeTo ?? options.dir,
  });
  // A cancel that came before the request reached the migrations' process found nothing to end: no
  // request starts after it (the stopped child would otherwise be started afresh for it).
  const session = Object.assign(Object.create(opened) as MigrationSession, {
    apply: (o: ApplyOptions, how?: Parameters<MigrationSession['apply']>[1]) =>
      signal?.aborted ? Promise.resolve(cancelled()) : opened.apply(o, how),
  });
  // Started before the limit counts (timeLimited waits for it): loading Node and the engine is not the migrations' time.
  session.warm(options.engine, files);
  let disarm: (() => void) | undefined;
  const cancel = () => (disarm = endRequests([options.databaseUrl], () => session.stop?.()));
  try {
    const limited =
      timeout === undefined
        ? session
        : timeLimited(session, { ms: parseDuration(timeout), text: timeout }, files, bounds.configuration);
    if (signal?.aborted) cancel();
    else signal?.addEventListener('abort', cancel, { once: true });
    const result = await limited.apply(options);
    // A cancel that came while the request was on its way to the migrations' process (its child
    // warming up) ended that child, and the request started a fresh one and ran whole: the run was
    // cancelled all the same, so the caller rolls back what it applied, as after any cancel.
    if (signal?.aborted && result.ok)
      return {
        ok: false,
        applied: result.applied,
        log: result.log,
        failed: { kind: 'load', error: { message: 'the run was cancelled while the migrations were applied' } },
      };
    return result;
  } finally {
    signal?.removeEventListener('abort', cancel);
    disarm?.();
    await session.close().catch(() => undefined);
  }
}

/** `f` is a request migrations.timeout ended (timeLimited's failure). */
export function ranPastLimit(f: ApplyFailure): boolean {
  return /^(still running (down )?after|stopped with the migrations' process, ended when|no migration started within) .*migrations\.timeout \(/.test(
    f.error.message,
  );
}

function timedOut(
  limit: TimeLimit,
  options: ApplyOptions,
  name: string | undefined,
  fileOf: (name: string) => string,
  configuration: string,
  failed?: ApplyFailure,
  /** Ended with the process another branch's request held past the limit, before its own passed. */
  alongside = false,
): ApplyFailure {
  const how =
    failed?.kind === 'statement'
      ? 'its statement was cancelled'
      : 'it ran no statement to cancel, so the process running it was ended';
  const what = alongside
    ? `stopped with the migrations' process, ended when a request of it on another branch ran past migrations.timeout (${limit.text})`
    : name === undefined && failed === undefined
      ? `no migration started within migrations.timeout (${limit.text}): loading them or reaching the database took that long, so the process loading them was ended`
      : `still running ${options.direction === 'down' ? 'down ' : ''}after migrations.timeout (${limit.text}); ${how}`;
  const message = `${what}. If it needs longer (a large backfill), ${raiseLimit(configuration)}`;
  const code = failed && 'error' in failed && failed.error.code ? { code: failed.error.code } : {};
  if (failed?.kind === 'statement')
    return { ...failed, ...(name ? { name, file: fileOf(name) } : {}), error: { message, ...code } };
  return name === undefined
    ? { kind: 'load', error: { message } }
    : { kind: 'script', name, file: failed?.file ?? fileOf(name), error: { message } };
}

/** How to raise migrations.timeout where `configuration` sets it: the end of every failure the limit causes. */
export function raiseLimit(configuration: string): string {
  return `raise migrations.timeout in ${configuration} (e.g. \`timeout: 1h\` under \`migrations:\`)`;
}

/**
 * Which migration a request the child's end took was at, from what the branch records, when the
 * child could not say (a migration looping from its start holds the child's event loop, so the
 * word it sent is never written): up, the first of `files` (in node-pg-migrate's order) or of
 * `onlyNames` not recorded; down, the last recorded (of `onlyNames`).
 */
async function recordedNext(options: ApplyOptions, files: readonly { name: string }[]): Promise<string | undefined> {
  const recorded = await withClient(options.databaseUrl, async (db) =>
    (await db.query<{ name: string }>(`SELECT name FROM ${migrationsTableSql(options)} ORDER BY run_on, id`)).rows.map(
      (r) => r.name,
    ),
  );
  const done = new Set(recorded);
  const names = options.onlyNames ?? files.map((f) => f.name);
  if (options.direction === 'up') return names.find((n) => !done.has(n));
  return options.onlyNames ? options.onlyNames.find((n) => done.has(n)) : recorded[recorded.length - 1];
}

/**
 * End migration requests that must stop now (past migrations.timeout, or the run cancelled): the
 * statements running on the databases `urls` reach are cancelled, as the role that runs them, and
 * `stop` (which ends the migrations' child) runs once they had CANCEL_GRACE_MS to come back — at
 * once where none was running a statement (a JavaScript migration's own code is what holds them:
 * a promise that never settles, a loop). Returns what calls `stop` off (the requests came back).
 */
export function endRequests(urls: readonly string[], stop: () => void): () => void {
  let off = false;
  let grace: NodeJS.Timeout | undefined;
  void Promise.allSettled(urls.map((url) => cancelMigrationStatements(url))).then((settled) => {
    if (off) return;
    const cancelled = settled.some((s) => s.status === 'fulfilled' && s.value > 0);
    grace = setTimeout(stop, cancelled ? CANCEL_GRACE_MS : 0);
  });
  return () => {
    off = true;
    clearTimeout(grace);
  };
}

/**
 * End the statements the run's migration requests are running on the database `url` reaches, as
 * the role they run as (which may always cancel its own): they fail with 57014 at once. Resolves
 * to how many were running a statement (one idle in a transaction has none to cancel: a JavaScript
 * migration's own code is what it waits on).
 */
export async function cancelMigrationStatements(url: string): Promise<number> {
  return withClient(url, async (db) => {
    const { rows } = await db.query<{ cancelled: boolean; active: boolean }>(
      `SELECT pg_cancel_backend(pid) AS cancelled, state = 'active' AS active FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'consort-migrate'
          AND usename = current_user AND state <> 'idle' AND pid <> pg_backend_pid()`,
    );
    return rows.filter((r) => r.cancelled && r.active).length;
  });
}

/**
 * End the statement the session `pid` is running on the database `url` reaches (the baseline's
 * seed file), as the role that runs it: it fails with 57014 at once. False: it was running none.
 */
export async function cancelSession(url: string, pid: number): Promise<boolean> {
  return withClient(url, async (db) => {
    const { rows } = await db.query<{ cancelled: boolean }>(
      `SELECT pg_cancel_backend(pid) AS cancelled FROM pg_stat_activity WHERE pid = $1 AND state = 'active'`,
      [pid],
    );
    return rows[0]?.cancelled === true;
  });
}
