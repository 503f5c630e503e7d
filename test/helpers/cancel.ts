/**
 * A run's cancel, fired the moment a marked statement is seen running on the server: the tests of
 * "a cancel ends it at once" abort exactly while the slow part (a migration's `pg_sleep`) is under
 * way, not before it started or after it ended.
 */
import { query } from './servers.js';

/** How many backends other than ours are running a statement holding `marker`. */
export async function runningStatements(adminUrl: string, marker: string): Promise<number> {
  const [row] = await query<{ n: number }>(
    adminUrl,
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE strpos(query, $1) > 0 AND state = 'active' AND pid <> pg_backend_pid()`,
    [marker],
  );
  return row?.n ?? 0;
}

export interface CancelWhenRunning {
  signal: AbortSignal;
  /** When the abort fired (performance.now()), undefined while it has not. */
  abortedAt(): number | undefined;
  /** Stop watching (call once the run returned). */
  stop(): void;
}

/** Aborts (with `SIGINT`, as the CLI's cancel says) once a statement holding `marker` runs; polls every 200 ms. */
export function cancelWhenRunning(adminUrl: string, marker: string): CancelWhenRunning {
  const controller = new AbortController();
  let abortedAt: number | undefined;
  const watch = setInterval(() => {
    void runningStatements(adminUrl, marker).then(
      (n) => {
        if (n === 0 || controller.signal.aborted) return;
        abortedAt = performance.now();
        controller.abort(new Error('SIGINT'));
      },
      () => undefined,
    );
  }, 200);
  return { signal: controller.signal, abortedAt: () => abortedAt, stop: () => clearInterval(watch) };
}
