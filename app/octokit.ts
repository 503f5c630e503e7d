/**
 * The Octokit the App gives Probot: Probot's own (auth, @octokit/plugin-retry,
 * @octokit/plugin-throttling), with the retries bounded and every wait logged.
 *
 * - plugin-retry retries a call that got no answer or a 5xx (not 400/401/403/404/410/422/451)
 *   `retries` times, waiting retryCount² × `retryAfterBaseMs` (1 s, 4 s, 9 s by default): about
 *   14 s at most before the call fails, and the job that made it is retried by the queue. Creates
 *   (comments, reviews, check runs) opt out per request: GitHub may have made them before its 5xx,
 *   and the adapter looks for them before posting again (src/github/create-once.ts).
 * - plugin-throttling handles rate limits. Probot's handlers wait and retry forever; these retry
 *   at most `rateLimitRetries` times and only when GitHub's wait is at most `maxRateLimitWaitSeconds`,
 *   so a rate-limited job fails (and is logged, and retried later by the queue) instead of hanging.
 */
import { ProbotOctokit } from 'probot';
import { callFields } from './github-watch.js';
import type { AppLog } from './jobs/deps.js';

export interface OctokitPolicy {
  retries: number;
  retryAfterBaseMs: number;
  rateLimitRetries: number;
  maxRateLimitWaitSeconds: number;
}

export const DEFAULT_OCTOKIT_POLICY: OctokitPolicy = {
  retries: 3,
  retryAfterBaseMs: 1_000,
  rateLimitRetries: 2,
  maxRateLimitWaitSeconds: 120,
};

type Options = ConstructorParameters<typeof ProbotOctokit>[0];
interface RequestOptions {
  method?: string;
  url?: string;
}

/** Whether to wait `retryAfter` seconds and retry a rate-limited request (pure, for tests). */
export function retryRateLimited(policy: OctokitPolicy, retryAfter: number, retryCount: number): boolean {
  return retryCount < policy.rateLimitRetries && retryAfter <= policy.maxRateLimitWaitSeconds;
}

export function consortOctokit(
  log: AppLog,
  policy: OctokitPolicy = DEFAULT_OCTOKIT_POLICY,
  base: typeof ProbotOctokit = ProbotOctokit,
): typeof ProbotOctokit {
  const onLimit =
    (kind: string) =>
    (retryAfter: number, options: RequestOptions, _octokit: unknown, retryCount: number): boolean => {
      const retry = retryRateLimited(policy, retryAfter, retryCount);
      log.warn(`GitHub ${kind} rate limit${retry ? `: retrying in ${retryAfter} s` : ': giving up on this call'}`, {
        ...callFields(),
        request: `${options.method ?? '?'} ${options.url ?? '?'}`,
        retryAfter,
        retryCount,
      });
      return retry;
    };
  // A function, so it is applied to every instance Probot creates (installation clients included).
  return base.defaults((options: Options = {}) => ({
    ...options,
    retry: {
      ...(options as { retry?: object }).retry,
      retries: policy.retries,
      retryAfterBaseValue: policy.retryAfterBaseMs,
    },
    throttle: { ...options.throttle, onRateLimit: onLimit('primary'), onSecondaryRateLimit: onLimit('secondary') },
  }));
}
