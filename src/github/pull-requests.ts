/**
 * The pull-request calls the Action's TDD lane makes — read the pull request, check a person's
 * permission, post a review per turn, set gate statuses, reply and react — on Octokit with the
 * official throttling and retry plugins. Those follow GitHub's documented rules: writes are made
 * one at a time at least a second apart, a 403/429 "secondary rate limit" is retried after its
 * `retry-after` (or a minute), a primary limit after `x-ratelimit-reset`, and 5xx answers are
 * retried with backoff. Responses are parsed with zod down to the fields used.
 */
import { getOctokit } from '@actions/github';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { z } from 'zod';
import { GitHubApiError, type RepoRef } from '../ports/github.js';
import { collaboratorPermission, type Permission } from './permissions.js';

export { type Permission, WRITE_PERMISSIONS } from './permissions.js';

export interface PullRequestInfo {
  number: number;
  state: string;
  title: string;
  body: string;
  head: { ref: string; sha: string; repo: string | null };
  base: { ref: string; sha: string; repo: string };
}

export type StatusState = 'pending' | 'success' | 'failure' | 'error';

export interface PullRequestApi {
  pull(number: number): Promise<PullRequestInfo>;
  permission(user: string): Promise<Permission>;
  /** A review with event COMMENT on `commitId`: one per agent turn. */
  review(number: number, commitId: string, body: string): Promise<{ id: number; url: string }>;
  status(sha: string, status: { context: string; state: StatusState; description: string; targetUrl?: string }): Promise<void>;
  comment(number: number, body: string): Promise<{ id: number; url: string }>;
  react(commentId: number, content: '+1' | 'eyes' | 'confused'): Promise<void>;
}

export interface PullRequestApiSettings {
  token: string;
  apiUrl: string;
  repo: RepoRef;
  userAgent?: string;
  /** Told about every wait for a rate limit. */
  onLimit?: (message: string) => void;
}

const Side = z.object({ ref: z.string(), sha: z.string(), repo: z.object({ full_name: z.string() }).nullable() });
const Pull = z.object({ number: z.number(), state: z.string(), title: z.string(), body: z.string().nullable(), head: Side, base: Side });
const Created = z.object({ id: z.number(), html_url: z.string() });
/** How often a request that hit a rate limit is tried again before the run gives up. */
const LIMIT_RETRIES = 3;

const statusOf = (e: unknown): number => (typeof e === 'object' && e !== null && 'status' in e && typeof e.status === 'number' ? e.status : 0);

async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const status = statusOf(e);
    throw new GitHubApiError(status, `GitHub API ${what} failed${status ? ` (HTTP ${status})` : ''}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

export function createPullRequestApi(s: PullRequestApiSettings): PullRequestApi {
  const limit = (kind: string) => (retryAfter: number, options: { method?: string; url?: string }, _octokit: unknown, retryCount: number) => {
    const again = retryCount < LIMIT_RETRIES;
    s.onLimit?.(`GitHub ${kind} rate limit on ${options.method ?? ''} ${options.url ?? ''}: ${again ? `waiting ${retryAfter} s (retry ${retryCount + 1} of ${LIMIT_RETRIES})` : `giving up after ${LIMIT_RETRIES} retries`}`);
    return again;
  };
  const octokit = getOctokit(s.token, {
    baseUrl: s.apiUrl.replace(/\/+$/, ''),
    ...(s.userAgent ? { userAgent: s.userAgent } : {}),
    throttle: { onRateLimit: limit('primary'), onSecondaryRateLimit: limit('secondary') },
    // 5xx only: rate limits (403/429) are the throttling plugin's, with the waits GitHub asks for.
    retry: { retries: 3, doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] },
  }, throttling, retry);
  const { owner, repo } = s.repo;
  return {
    pull: (number) => call('get pull request', async () => {
      const p = Pull.parse((await octokit.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { owner, repo, pull_number: number })).data);
      return {
        number: p.number, state: p.state, title: p.title, body: p.body ?? '',
        head: { ref: p.head.ref, sha: p.head.sha, repo: p.head.repo?.full_name ?? null },
        base: { ref: p.base.ref, sha: p.base.sha, repo: p.base.repo?.full_name ?? `${owner}/${repo}` },
      };
    }),
    permission: (user) => call('get permission', () => collaboratorPermission(() => octokit.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', { owner, repo, username: user }))),
    review: (number, commitId, body) => call('create review', async () => {
      const r = Created.parse((await octokit.request('POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews', { owner, repo, pull_number: number, commit_id: commitId, body, event: 'COMMENT' })).data);
      return { id: r.id, url: r.html_url };
    }),
    status: (sha, st) => call('create status', async () => {
      await octokit.request('POST /repos/{owner}/{repo}/statuses/{sha}', {
        owner, repo, sha, state: st.state, context: st.context, description: st.description.slice(0, 140), ...(st.targetUrl ? { target_url: st.targetUrl } : {}),
      });
    }),
    comment: (number, body) => call('create comment', async () => {
      const r = Created.parse((await octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', { owner, repo, issue_number: number, body })).data);
      return { id: r.id, url: r.html_url };
    }),
    react: (commentId, content) => call('create reaction', async () => {
      await octokit.request('POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', { owner, repo, comment_id: commentId, content });
    }),
  };
}
