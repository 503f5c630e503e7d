/**
 * A create that GitHub may have carried out before it failed. A POST that makes a comment, a review
 * or a check run can be answered 502/504 (or not at all) after GitHub made the object: its
 * frontend timed out on a request the API finished. Sent again blindly — @octokit/plugin-retry
 * repeats any request that got a 5xx — it makes a second comment, review or check run. So these
 * POSTs go out with the retry plugin off for them (`NO_RETRY`, a per-request option the plugin
 * reads; the throttling plugin still waits out rate limits, which GitHub answers without acting),
 * and on a 5xx or no answer `createOnce` first looks for what the failed attempt made (`find`) and
 * posts again only when nothing is there, with the plugin's backoff (1 s, 4 s, 9 s) before each look.
 */
import type { RequestParameters } from '@octokit/types';

/** Request options that keep @octokit/plugin-retry from repeating this one request. */
export const NO_RETRY = { request: { retries: 0 } } as const satisfies RequestParameters;

export interface CreateOnce<T> {
  /** The POST (made with NO_RETRY). */
  post: () => Promise<T>;
  /**
   * What a failed attempt may have made, or null. `since` is when that attempt failed on GitHub's
   * clock when its answer said (the `date` header), else on this machine's.
   */
  find: (since: Date) => Promise<T | null>;
  /** Posts after the first (default 3, as the retry plugin). */
  retries?: number;
  /** The backoff's unit: retry n waits n² × this (default 1,000 ms, as the retry plugin). */
  retryAfterBaseMs?: number;
}

const statusOf = (e: unknown): number | undefined =>
  typeof e === 'object' && e !== null && 'status' in e && typeof e.status === 'number' ? e.status : undefined;

/**
 * Whether GitHub may have acted on a request that failed: a 5xx, or no answer at all (Octokit
 * reports a failed fetch as a 500 too). A 4xx — rate limits included — was refused unmade.
 */
export function mayHaveActed(e: unknown): boolean {
  const status = statusOf(e);
  return status === undefined || status === 0 || status >= 500;
}

/** GitHub's clock at the failed answer (its `date` header), else this machine's. */
export function failedAt(e: unknown, now: () => number = Date.now): Date {
  const headers =
    typeof e === 'object' && e !== null && 'response' in e
      ? (e as { response?: { headers?: Record<string, unknown> } }).response?.headers
      : undefined;
  const date = typeof headers?.date === 'string' ? Date.parse(headers.date) : NaN;
  return new Date(Number.isFinite(date) ? date : now());
}

export async function createOnce<T>(o: CreateOnce<T>): Promise<T> {
  const retries = o.retries ?? 3;
  const base = o.retryAfterBaseMs ?? 1_000;
  for (let attempt = 0; ; attempt++) {
    try {
      return await o.post();
    } catch (e) {
      if (!mayHaveActed(e) || attempt >= retries) throw e;
      const since = failedAt(e);
      await new Promise((resolve) => setTimeout(resolve, (attempt + 1) ** 2 * base));
      // A look that fails too leaves the first error to the caller: posting blind could duplicate.
      const made = await o.find(since).catch(() => {
        throw e;
      });
      if (made !== null) return made;
    }
  }
}
