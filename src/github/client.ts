/**
 * The Octokit client the Action and the CLI build (the App gets Probot's): @actions/github's
 * getOctokit (its proxy support and user agent) with the official throttling and retry plugins.
 * Those follow GitHub's documented rules: writes are made one at a time at least a second apart, a
 * 403/429 "secondary rate limit" is retried after its `retry-after` (or a minute), a primary limit
 * after `x-ratelimit-reset`, and 5xx answers are retried with backoff — except the POSTs that create a
 * comment, a review or a check run, which the adapter sends with the retry off and repeats only after
 * looking for what GitHub may have made (create-once.ts). The API base URL is passed
 * explicitly — GITHUB_API_URL on GitHub Enterprise Server, or a test's local server — rather than
 * trusting a default computed when the module was loaded.
 *
 * `writePacing: 'none'` keeps writes one at a time but drops the spacing between them, for a GitHub
 * Enterprise Server whose rate limits are off (its default) or a local stand-in for GitHub: through
 * the plugin's own `write` and `notifications` options (its typed ThrottlingOptions), limiters
 * without the 1 s / 3 s `minTime` its defaults have. Rate-limit answers are waited out either way.
 */
import { getOctokit } from '@actions/github';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import Bottleneck from 'bottleneck/light.js';
import type { OctokitClient } from './octokit.js';

/** `github`: GitHub's documented spacing between writes; `none`: writes one at a time, no spacing. */
export const WRITE_PACING = ['github', 'none'] as const;
export type WritePacing = (typeof WRITE_PACING)[number];

export interface ClientSettings {
  token: string;
  /** e.g. https://api.github.com (GITHUB_API_URL). */
  apiUrl: string;
  userAgent?: string;
  /** Told about every wait for a rate limit. */
  onLimit?: (message: string) => void;
  /** Default `github`. */
  writePacing?: WritePacing;
}

/** One write at a time, none held back: the plugin's write and notification limiters without their minTime. */
function unpacedWrites(): { write: Bottleneck.Group; notifications: Bottleneck.Group } {
  return {
    write: new Bottleneck.Group({ id: 'consort-write', maxConcurrent: 1 }),
    notifications: new Bottleneck.Group({ id: 'consort-notifications', maxConcurrent: 1 }),
  };
}

/** How often a request that hit a rate limit is tried again before the run gives up. */
const LIMIT_RETRIES = 3;

export function createOctokitClient(s: ClientSettings): OctokitClient {
  const limit =
    (kind: string) =>
    (retryAfter: number, options: { method?: string; url?: string }, _octokit: unknown, retryCount: number) => {
      const again = retryCount < LIMIT_RETRIES;
      s.onLimit?.(
        `GitHub ${kind} rate limit on ${options.method ?? ''} ${options.url ?? ''}: ${again ? `waiting ${retryAfter} s (retry ${retryCount + 1} of ${LIMIT_RETRIES})` : `giving up after ${LIMIT_RETRIES} retries`}`,
      );
      return again;
    };
  return getOctokit(
    s.token,
    {
      baseUrl: s.apiUrl.replace(/\/+$/, ''),
      ...(s.userAgent ? { userAgent: s.userAgent } : {}),
      throttle: {
        onRateLimit: limit('primary'),
        onSecondaryRateLimit: limit('secondary'),
        ...(s.writePacing === 'none' ? unpacedWrites() : {}),
      },
      // 5xx only: rate limits (403/429) are the throttling plugin's, with the waits GitHub asks for.
      retry: { retries: 3, doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] },
    },
    throttling,
    retry,
  );
}
