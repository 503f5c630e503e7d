/**
 * Waiting for a long-running operation: ask again with a growing interval until it reports done,
 * or stop at the deadline with an error that says what was being waited for and what to do.
 */
import { ConsortError } from '../../core/errors.js';
import { formatDuration } from '../../core/duration.js';
import { DEFAULT_POLL, systemClock, type Clock, type PollPolicy } from './retry.js';

export type PollState<T> = { done: true; value: T } | { done: false; detail?: string };

export interface PollOptions {
  /** What is being waited for, as a noun phrase ("creating branch pr-12"). */
  what: string;
  policy?: Partial<PollPolicy>;
  clock?: Clock;
  /** What to do when it times out. */
  hint?: string;
}

export async function pollUntil<T>(check: () => Promise<PollState<T>>, options: PollOptions): Promise<T> {
  const policy = { ...DEFAULT_POLL, ...options.policy };
  const clock = options.clock ?? systemClock;
  const started = clock.now();
  let delay = policy.initialDelayMs;
  let detail: string | undefined;
  for (;;) {
    const state = await check();
    if (state.done) return state.value;
    detail = state.detail ?? detail;
    const remaining = started + policy.timeoutMs - clock.now();
    if (remaining <= 0) {
      throw new ConsortError(
        'timeout',
        `Timed out after ${formatDuration(policy.timeoutMs)} ${options.what}${detail ? ` (last state: ${detail})` : ''}.`,
        {
          hint:
            options.hint ??
            'The service may be slow or stuck: check its console, then retry; `consort branch gc` removes anything left half-made.',
        },
      );
    }
    await clock.sleep(Math.min(delay, remaining));
    delay = Math.min(policy.maxDelayMs, Math.round(delay * 1.5));
  }
}
