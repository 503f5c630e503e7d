/**
 * Timing for talking to a cloud API: exponential backoff with full jitter, `Retry-After`
 * honoured, bounded attempts and one overall deadline. Every duration and the clock itself are
 * injectable, so tests exercise the real loop in milliseconds.
 */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};

export interface RetryPolicy {
  /** Attempts in all (the first try included). */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Overall deadline for one logical request, waits included. */
  timeoutMs: number;
  /** Deadline for one HTTP exchange. */
  requestTimeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 8,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  timeoutMs: 120_000,
  requestTimeoutMs: 30_000,
};

export interface PollPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  /** Give up waiting for a long-running operation after this long. */
  timeoutMs: number;
}

export const DEFAULT_POLL: PollPolicy = { initialDelayMs: 500, maxDelayMs: 5_000, timeoutMs: 10 * 60_000 };

/** Full jitter: a random wait in [0, min(max, base·2^attempt)], so retrying clients spread out. */
export function backoffDelay(
  attempt: number,
  policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(random() * ceiling);
}

/** `Retry-After` as delta-seconds or an HTTP date, in milliseconds from `now`; undefined if absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now: number): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The wait before the next attempt: the server's `Retry-After` when it gave one (never less),
 * otherwise backoff with jitter; undefined when that wait would cross the deadline.
 */
export function nextDelay(
  attempt: number,
  policy: RetryPolicy,
  retryAfter: number | undefined,
  remainingMs: number,
  random: () => number = Math.random,
): number | undefined {
  if (attempt + 1 >= policy.attempts) return undefined;
  const delay = Math.max(retryAfter ?? 0, backoffDelay(attempt, policy, random));
  return delay < remainingMs ? delay : undefined;
}
