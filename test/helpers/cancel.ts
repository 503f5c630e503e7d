/**
 * A run's cancel, fired the moment a marked statement is seen running on the server: the tests of
 * "a cancel ends it at once" abort exactly while the slow part (a migration's `pg_sleep`) is under
 * way, not before it started or after it ended.
 */
import type { ConsortConfig } from '../../src/config/schema.js';
import { runBuildLane } from '../../src/lanes/tdd/index.js';
import type { Workspace } from '../../src/ports/workspace.js';
import { query, type TestProvider } from './servers.js';
import { tddAdapters } from './tdd.js';

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

/**
 * The TDD lane on `t`'s provider, cancelled once a statement holding `marker` runs: its result, and
 * how long ago (ms) the cancel fired when it returned.
 */
export async function laneCancelledWhileRunning(
  t: Pick<TestProvider, 'provider' | 'adminUrl'>,
  lane: { workspace: Workspace; config: ConsortConfig; feature: string },
  marker: string,
): Promise<{ result: Awaited<ReturnType<typeof runBuildLane>>; sinceCancel: number | undefined }> {
  const cancel = cancelWhenRunning(t.adminUrl, marker);
  const result = await runBuildLane({
    ...lane,
    ...tddAdapters,
    provider: t.provider,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' },
    signal: cancel.signal,
  }).finally(() => cancel.stop());
  const at = cancel.abortedAt();
  return { result, sinceCancel: at === undefined ? undefined : performance.now() - at };
}
