/**
 * Cancelling a check: the shells abort the signal they pass in (SIGINT/SIGTERM, the App's newer
 * run), the lane aborts its own when a newer run of the pull request claims the run lock. The lane
 * stops at the next stage boundary (the suite's process group is killed at once, the statements
 * its migration requests are running are ended, and the migrations' child too where they do not
 * come back: time-limit.ts, endRequests), removes its temporary branches and concludes
 * `cancelled` with the reason.
 */
export class CheckCancelled extends Error {
  constructor(readonly reason: string) {
    super(`cancelled: ${reason}`);
    this.name = 'CheckCancelled';
  }
}

/** The reason an abort was given, in words. */
export function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (r instanceof CheckCancelled) return r.reason;
  if (r instanceof Error) return r.name === 'AbortError' ? 'aborted' : r.message;
  return r === undefined ? 'aborted' : String(r);
}

export function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new CheckCancelled(abortReason(signal));
}

/**
 * Abort `controller` on SIGINT and SIGTERM while `fn` runs (a second signal exits at once, as a
 * shell user expects). Used by `consort check`, `consort run` and the Action's check mode.
 */
export async function onTermination<T>(
  controller: AbortController,
  fn: () => Promise<T>,
  log: (line: string) => void = () => undefined,
  /** The line logged on the first signal (default: the check's). */
  saying: (sig: NodeJS.Signals) => string = (sig) =>
    `${sig}: cancelling the check (temporary branches are removed first; ${sig} again to exit at once)`,
): Promise<T> {
  const handlers: (readonly [NodeJS.Signals, () => void])[] = (['SIGINT', 'SIGTERM'] as const).map((sig) => {
    const handler = (): void => {
      if (controller.signal.aborted) {
        // The second signal: Node's default (exit at once), by re-raising it without our handlers.
        for (const [s, h] of handlers) process.off(s, h);
        process.kill(process.pid, sig);
        return;
      }
      log(saying(sig));
      controller.abort(new CheckCancelled(sig));
    };
    process.on(sig, handler);
    return [sig, handler] as const;
  });
  try {
    return await fn();
  } finally {
    for (const [sig, handler] of handlers) process.off(sig, handler);
  }
}
