/**
 * How long GitHub asked to be left alone, read from a failed call: GitHub's documented rules for a
 * 403 or 429 answer (REST "Rate limits for the REST API", "Exceeding the rate limit"):
 *
 * - a `retry-after` header: that many seconds;
 * - else `x-ratelimit-remaining: 0`: until `x-ratelimit-reset` (epoch seconds), plus a second;
 * - else a secondary rate limit named in the message: at least a minute.
 *
 * GitHub warns that requests made while limited may get an integration banned, so whoever retries a
 * failed call waits at least this long. The error may be the Octokit RequestError itself or wrap
 * it as its `cause` (GitHubApiError); any other error gives null.
 */
const SECONDARY = /secondary rate limit|abuse detection/i;

interface Answer {
  status: number;
  message: string;
  headers: Record<string, unknown>;
}

function answerOf(e: unknown): Answer | null {
  for (let at: unknown = e, depth = 0; typeof at === 'object' && at !== null && depth < 5; depth++) {
    const o = at as { status?: unknown; message?: unknown; response?: { headers?: unknown }; cause?: unknown };
    if ((o.status === 403 || o.status === 429) && typeof o.response?.headers === 'object' && o.response.headers)
      return {
        status: o.status,
        message: typeof o.message === 'string' ? o.message : '',
        headers: o.response.headers as Record<string, unknown>,
      };
    at = o.cause;
  }
  return null;
}

/** Seconds to wait before asking GitHub again, or null when `e` is not a rate limit. */
export function rateLimitWait(e: unknown, now: number = Date.now()): number | null {
  const a = answerOf(e);
  if (a === null) return null;
  const header = (name: string): string | undefined => {
    const v = a.headers[name];
    return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
  };
  const retryAfter = Number(header('retry-after'));
  if (header('retry-after') !== undefined && Number.isFinite(retryAfter) && retryAfter >= 0)
    return Math.ceil(retryAfter);
  const reset = Number(header('x-ratelimit-reset'));
  if (header('x-ratelimit-remaining') === '0' && Number.isFinite(reset))
    return Math.max(1, Math.ceil(reset - now / 1000) + 1);
  if (SECONDARY.test(a.message)) return 60;
  return null;
}
