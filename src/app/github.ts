/**
 * The GitHub calls the App's jobs make, as a port, and its adapter over any Octokit-shaped client
 * (`request(route, params)`). Responses are parsed once here with zod, down to the fields used.
 */
import { z } from 'zod';
import { collaboratorPermission, type Permission } from '../github/permissions.js';
import { boundOutput, CHECK_LIMITS } from './check-limits.js';
import { callFields, withCall, type CallContext } from './github-watch.js';
import type { AppLog } from './jobs/deps.js';

export { type Permission, WRITE_PERMISSIONS } from '../github/permissions.js';
import type { RepoRef } from './store/runs.js';

export type Repo = Pick<RepoRef, 'owner' | 'repo'>;

export type CheckConclusion = 'success' | 'failure' | 'neutral' | 'cancelled' | 'timed_out' | 'action_required' | 'skipped';

export interface Annotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: 'notice' | 'warning' | 'failure';
  message: string;
  title?: string;
  raw_details?: string;
  start_column?: number;
  end_column?: number;
}

/** A check run's end. GitHub asks for a `details_url` with `action_required` (where to act), so the type does too. */
export type CheckResult =
  | { conclusion: Exclude<CheckConclusion, 'action_required'>; output: CheckOutput; detailsUrl?: string }
  | { conclusion: 'action_required'; output: CheckOutput; detailsUrl: string };

export interface CheckOutput {
  title: string;
  summary: string;
  text?: string;
  annotations?: Annotation[];
}


export interface IssueComment {
  id: number;
  body: string;
  author: string;
  authorType: string;
}

export interface GitHubApi {
  createCheckRun(repo: Repo, run: { name: string; headSha: string; externalId: string; output: CheckOutput }): Promise<number>;
  completeCheckRun(repo: Repo, id: number, result: CheckResult): Promise<void>;
  /** The repository at a commit, as a gzipped tarball. */
  tarball(repo: Repo, sha: string): Promise<Buffer>;
  mergeBase(repo: Repo, base: string, head: string): Promise<string>;
  listComments(repo: Repo, issue: number): Promise<IssueComment[]>;
  createComment(repo: Repo, issue: number, body: string): Promise<number>;
  updateComment(repo: Repo, commentId: number, body: string): Promise<void>;
  react(repo: Repo, commentId: number, content: '+1' | 'eyes' | 'confused'): Promise<void>;
  permission(repo: Repo, user: string): Promise<Permission>;
  setStatus(repo: Repo, sha: string, status: { context: string; state: 'pending' | 'success' | 'failure' | 'error'; description: string }): Promise<void>;
}

/** The part of an Octokit client the adapter needs (Probot's, or any other). */
export interface OctokitLike {
  request(route: string, parameters?: Record<string, unknown>): Promise<{ status: number; data: unknown }>;
}

const Id = z.object({ id: z.number() });
const Compare = z.object({ merge_base_commit: z.object({ sha: z.string() }) });
const Comments = z.array(z.object({ id: z.number(), body: z.string().nullish(), user: z.object({ login: z.string(), type: z.string() }).nullable() }));

/** GitHub limits one check-run request to 50 annotations (check-limits.ts holds every limit). */
export const MAX_ANNOTATIONS = CHECK_LIMITS.annotationsPerRequest;

/** Only owner and repo go into a request: callers may pass a richer record. */
const at = (repo: Repo): Repo => ({ owner: repo.owner, repo: repo.repo });

export interface Observe {
  log: AppLog;
  /** The delivery and run the calls are made for: every log line about them names both. */
  context?: CallContext;
}

/**
 * Each call with its route and context visible to every attempt (github-watch.ts logs those),
 * and the call that finally fails logged here: at error when GitHub could not be reached or
 * answered 5xx, at warn for a 4xx (the caller may expect it, e.g. a 404 permission lookup).
 */
export function observed(octokit: OctokitLike, observe: Observe): OctokitLike {
  return {
    request: (route, parameters) => withCall(observe.context, route, async () => {
      try {
        return await octokit.request(route, parameters);
      } catch (e) {
        const status = typeof e === 'object' && e !== null && 'status' in e && typeof e.status === 'number' ? e.status : null;
        const fields = { ...callFields(), status, error: e instanceof Error ? e.message : String(e) };
        if (status !== null && status < 500) observe.log.warn(`GitHub refused ${route}`, fields);
        else observe.log.error(`GitHub call failed: ${route}`, fields);
        throw e;
      }
    }),
  };
}

export function octokitGitHub(client: OctokitLike, observe?: Observe): GitHubApi {
  const octokit = observe ? observed(client, observe) : client;
  return {
    async createCheckRun(repo, run) {
      const { data } = await octokit.request('POST /repos/{owner}/{repo}/check-runs', {
        ...at(repo), name: run.name, head_sha: run.headSha, external_id: run.externalId, status: 'in_progress',
        started_at: new Date().toISOString(), output: boundOutput(run.output),
      });
      return Id.parse(data).id;
    },
    async completeCheckRun(repo, id, result) {
      await octokit.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', {
        ...at(repo), check_run_id: id, status: 'completed', conclusion: result.conclusion, completed_at: new Date().toISOString(), output: boundOutput(result.output),
        ...(result.detailsUrl ? { details_url: result.detailsUrl } : {}),
      });
    },
    async tarball(repo, sha) {
      const { data } = await octokit.request('GET /repos/{owner}/{repo}/tarball/{ref}', { ...at(repo), ref: sha });
      if (data instanceof ArrayBuffer) return Buffer.from(data);
      if (Buffer.isBuffer(data)) return data;
      throw new Error(`the tarball of ${repo.owner}/${repo.repo}@${sha} came back as ${typeof data}`);
    },
    async mergeBase(repo, base, head) {
      const { data } = await octokit.request('GET /repos/{owner}/{repo}/compare/{basehead}', { ...at(repo), basehead: `${base}...${head}`, per_page: 1 });
      return Compare.parse(data).merge_base_commit.sha;
    },
    async listComments(repo, issue) {
      const all: IssueComment[] = [];
      for (let page = 1; page <= 50; page++) {
        const { data } = await octokit.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', { ...at(repo), issue_number: issue, per_page: 100, page });
        const batch = Comments.parse(data);
        all.push(...batch.map((c) => ({ id: c.id, body: c.body ?? '', author: c.user?.login ?? '', authorType: c.user?.type ?? '' })));
        if (batch.length < 100) break;
      }
      return all;
    },
    async createComment(repo, issue, body) {
      const { data } = await octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', { ...at(repo), issue_number: issue, body });
      return Id.parse(data).id;
    },
    async updateComment(repo, commentId, body) {
      await octokit.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', { ...at(repo), comment_id: commentId, body });
    },
    async react(repo, commentId, content) {
      await octokit.request('POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', { ...at(repo), comment_id: commentId, content });
    },
    permission: (repo, user) => collaboratorPermission(() => octokit.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', { ...at(repo), username: user })),
    async setStatus(repo, sha, status) {
      await octokit.request('POST /repos/{owner}/{repo}/statuses/{sha}', { ...at(repo), sha, state: status.state, context: status.context, description: status.description.slice(0, 140) });
    },
  };
}

