/**
 * The GitHubPort on any Octokit client — the Action's (src/github/client.ts: @actions/github with
 * the throttling and retry plugins) or Probot's (the App). Routes are checked against
 * `@octokit/types`' Endpoints, so a misspelt route or a missing parameter is a type error;
 * responses are parsed with zod down to the fields used. Every failure becomes a GitHubApiError
 * carrying the HTTP status (the message never includes the token). A comment, a review or a check
 * run is created once (create-once.ts): after a 5xx or no answer, what GitHub may have made is
 * looked for (look-ups.ts) before posting again — a comment or review by the post marker it carries
 * (post-marker.ts). So is a batch of a check run's annotations, which GitHub appends: by the run's count.
 */
import type { Endpoints, RequestParameters } from '@octokit/types';
import { z } from 'zod';
import { boundBody } from './body-limit.js';
import { annotationBatches, boundOutput } from './check-limits.js';
import { createOnce, NO_RETRY } from './create-once.js';
import { CheckRun, CheckRuns, Comments, lookUps, Reviews } from './look-ups.js';
import { collaboratorPermission } from './permissions.js';
import { markedBody } from './post-marker.js';
import { GitHubApiError, type CheckOutput, type GitHubPort, type RepoRef } from '../ports/github.js';

export type Route = keyof Endpoints;

/** The part of an Octokit client the adapter needs: `request` with a typed route. */
export interface OctokitClient {
  request<R extends Route>(
    route: R,
    parameters: Endpoints[R]['parameters'] & RequestParameters,
  ): Promise<{ status: number; data: unknown }>;
}

/** `html_url` is read when GitHub sends it (it always does; some stand-ins do not). */
const Created = z.object({ id: z.number(), html_url: z.string().optional() });
const Id = z.object({ id: z.number() });
const Compare = z.object({ merge_base_commit: z.object({ sha: z.string() }) });
const GitCommit = z.object({ tree: z.object({ sha: z.string() }) });
const GitTree = z.object({
  tree: z.array(
    z.object({ path: z.string(), mode: z.string(), type: z.enum(['blob', 'tree', 'commit']), sha: z.string() }),
  ),
  truncated: z.boolean(),
});
const User = z.object({ login: z.string(), type: z.string().optional() }).nullable();
const Membership = z.object({ state: z.string() });
const Side = z.object({ ref: z.string(), sha: z.string(), repo: z.object({ full_name: z.string() }).nullable() });
const Pull = z.object({
  number: z.number(),
  state: z.string(),
  title: z.string(),
  body: z.string().nullable(),
  user: User.optional(),
  head: Side,
  base: Side,
});

const statusOf = (e: unknown): number =>
  typeof e === 'object' && e !== null && 'status' in e && typeof e.status === 'number' ? e.status : 0;

async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof GitHubApiError) throw e;
    const status = statusOf(e);
    throw new GitHubApiError(
      status,
      `GitHub API ${what} failed${status ? ` (HTTP ${status})` : ''}: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
}

/** Only owner and repo go into a request: callers may pass a richer record. */
const at = (repo: RepoRef): RepoRef => ({ owner: repo.owner, repo: repo.repo });

export interface AdapterOptions {
  /**
   * The backoff's unit between the attempts of a create that failed with a 5xx or no answer: retry
   * n waits n² × this before looking for what the failed attempt made (create-once.ts). Default 1 s.
   */
  retryAfterBaseMs?: number;
  /** Posts of such a create after the first (default 3). */
  retries?: number;
}

export function octokitGitHub(octokit: OctokitClient, options: AdapterOptions = {}): GitHubPort {
  const look = lookUps(octokit);
  const once = <T>(post: () => Promise<T>, find: (since: Date) => Promise<T | null>) =>
    createOnce({
      post,
      find,
      ...(options.retryAfterBaseMs !== undefined ? { retryAfterBaseMs: options.retryAfterBaseMs } : {}),
      ...(options.retries !== undefined ? { retries: options.retries } : {}),
    });
  /**
   * Add batches of annotations to run `id`, which has `count` of them now (read when not given),
   * its status left as it is. GitHub appends each batch to the run's annotations: one it applied
   * before answering 5xx, sent again, would show each of them twice. So a batch is sent with the
   * retry off and, after a 5xx or no answer, again only if the run's count says it was not applied.
   */
  const addAnnotations = async (repo: RepoRef, id: number, batches: CheckOutput[], count?: number) => {
    if (batches.length === 0) return;
    let has = count ?? (await look.annotationsCount(repo, id));
    for (const output of batches) {
      const after = has + (output.annotations?.length ?? 0);
      has = await once(
        async () => {
          await octokit.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', {
            ...at(repo),
            check_run_id: id,
            output,
            ...NO_RETRY,
          });
          return after;
        },
        async () => ((await look.annotationsCount(repo, id)) >= after ? after : null),
      );
    }
  };
  return {
    listComments: (repo, issue) =>
      call('list issue comments', async () =>
        (await look.comments(repo, issue)).map((c) => ({
          id: c.id,
          body: c.body ?? '',
          user: c.user ? { login: c.user.login, type: c.user.type ?? 'User' } : null,
          htmlUrl: c.html_url ?? '',
          ...(c.created_at ? { createdAt: c.created_at } : {}),
          ...(c.updated_at ? { updatedAt: c.updated_at } : {}),
        })),
      ),
    createComment: (repo, issue, body) =>
      call('create issue comment', () => {
        const { body: text, marker } = markedBody(body);
        return once(
          async () => {
            const r = Created.parse(
              (
                await octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
                  ...at(repo),
                  issue_number: issue,
                  body: text,
                  ...NO_RETRY,
                })
              ).data,
            );
            return { id: r.id, url: r.html_url ?? '' };
          },
          async (since) => (marker === null ? null : look.comment(repo, issue, marker, since)),
        );
      }),
    updateComment: (repo, commentId, body) =>
      call('update issue comment', async () => {
        await octokit.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', {
          ...at(repo),
          comment_id: commentId,
          body: boundBody(body),
        });
      }),
    deleteComment: (repo, commentId) =>
      call('delete issue comment', async () => {
        await octokit.request('DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}', {
          ...at(repo),
          comment_id: commentId,
        });
      }),
    react: (repo, commentId, content) =>
      call('create reaction', async () => {
        await octokit.request('POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', {
          ...at(repo),
          comment_id: commentId,
          content,
        });
      }),
    permission: (repo, user) =>
      call('get permission', () =>
        collaboratorPermission(() =>
          octokit.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', {
            ...at(repo),
            username: user,
          }),
        ),
      ),
    teamMember: (org, teamSlug, user) =>
      call('get team membership', async () => {
        try {
          const { data } = await octokit.request('GET /orgs/{org}/teams/{team_slug}/memberships/{username}', {
            org,
            team_slug: teamSlug,
            username: user,
          });
          return Membership.parse(data).state === 'active';
        } catch (e) {
          if (statusOf(e) === 404) return false;
          throw e;
        }
      }),
    pull: (repo, number) =>
      call('get pull request', async () => {
        const p = Pull.parse(
          (await octokit.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { ...at(repo), pull_number: number }))
            .data,
        );
        return {
          number: p.number,
          state: p.state,
          title: p.title,
          body: p.body ?? '',
          author: p.user?.login ?? '',
          head: { ref: p.head.ref, sha: p.head.sha, repo: p.head.repo?.full_name ?? null },
          base: { ref: p.base.ref, sha: p.base.sha, repo: p.base.repo?.full_name ?? `${repo.owner}/${repo.repo}` },
        };
      }),
    review: (repo, pull, commitId, body) =>
      call('create review', () => {
        const { body: text, marker } = markedBody(body);
        return once(
          async () => {
            const r = Created.parse(
              (
                await octokit.request('POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews', {
                  ...at(repo),
                  pull_number: pull,
                  commit_id: commitId,
                  body: text,
                  event: 'COMMENT',
                  ...NO_RETRY,
                })
              ).data,
            );
            return { id: r.id, url: r.html_url ?? '' };
          },
          async () => (marker === null ? null : look.review(repo, pull, commitId, marker)),
        );
      }),
    setStatus: (repo, sha, s) =>
      call('create status', async () => {
        await octokit.request('POST /repos/{owner}/{repo}/statuses/{sha}', {
          ...at(repo),
          sha,
          state: s.state,
          context: s.context,
          description: s.description.slice(0, 140),
          ...(s.targetUrl ? { target_url: s.targetUrl } : {}),
        });
      }),
    createCheckRun: (repo, run) =>
      call('create check run', async () => {
        const [first, ...more] = annotationBatches(boundOutput(run.output));
        // What the run holds when this create made it; unknown when a look-up found it.
        let count: number | undefined;
        const id = await once(
          async () => {
            const { data } = await octokit.request('POST /repos/{owner}/{repo}/check-runs', {
              ...at(repo),
              name: run.name,
              head_sha: run.headSha,
              external_id: run.externalId,
              status: 'in_progress',
              started_at: new Date().toISOString(),
              output: first!,
              ...NO_RETRY,
            });
            count = first!.annotations?.length ?? 0;
            return Id.parse(data).id;
          },
          // The run is known by its commit, name and external_id (the caller's id for this run).
          () => look.checkRun(repo, run),
        );
        await addAnnotations(repo, id, more, count);
        return id;
      }),
    findCheckRun: (repo, run) => call('list check runs', () => look.checkRun(repo, run)),
    completeCheckRun: (repo, id, result) =>
      call('complete check run', async () => {
        // More than 50 annotations: the run is updated with all but the last 50 first, then completed.
        const batches = annotationBatches(boundOutput(result.output));
        await addAnnotations(repo, id, batches.slice(0, -1));
        const last = batches.at(-1)!;
        const complete = () =>
          octokit.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', {
            ...at(repo),
            check_run_id: id,
            status: 'completed',
            conclusion: result.conclusion,
            completed_at: new Date().toISOString(),
            output: last,
            ...(result.detailsUrl ? { details_url: result.detailsUrl } : {}),
            ...(last.annotations?.length ? NO_RETRY : {}),
          });
        if (!last.annotations?.length) return void (await complete());
        // GitHub appends an update's annotations to the run's: a completion it made before answering
        // 5xx, sent again, would show each of them twice. It is sent again only if the run is not
        // completed as asked.
        await once(
          async () => (await complete(), true),
          async () => ((await look.completedAs(repo, id, result.conclusion, last.title)) ? true : null),
        );
      }),
    tarball: (repo, sha) =>
      call('download tarball', async () => {
        const { data } = await octokit.request('GET /repos/{owner}/{repo}/tarball/{ref}', { ...at(repo), ref: sha });
        if (data instanceof ArrayBuffer) return Buffer.from(data);
        if (Buffer.isBuffer(data)) return data;
        throw new Error(`the tarball of ${repo.owner}/${repo.repo}@${sha} came back as ${typeof data}`);
      }),
    folderEntries: (repo, sha, dir) =>
      call('read the commit tree', async () => {
        const commit = GitCommit.parse(
          (
            await octokit.request('GET /repos/{owner}/{repo}/git/commits/{commit_sha}', {
              ...at(repo),
              commit_sha: sha,
            })
          ).data,
        );
        const tree = async (treeSha: string) =>
          GitTree.parse(
            (
              await octokit.request('GET /repos/{owner}/{repo}/git/trees/{tree_sha}', {
                ...at(repo),
                tree_sha: treeSha,
              })
            ).data,
          );
        let at_ = commit.tree.sha;
        for (const name of dir.split('/').filter(Boolean)) {
          const next = (await tree(at_)).tree.find((e) => e.path === name && e.type === 'tree');
          if (!next) return null;
          at_ = next.sha;
        }
        const listed = await tree(at_);
        // One folder's own entries: far below the API's limit; a truncated answer would hide some.
        if (listed.truncated) throw new Error(`the tree of ${dir || 'the top'} at ${sha} came back truncated`);
        return listed.tree.map((e) => ({ name: e.path, mode: e.mode, type: e.type, sha: e.sha }));
      }),
    mergeBase: (repo, base, head) =>
      call('compare', async () => {
        const { data } = await octokit.request('GET /repos/{owner}/{repo}/compare/{basehead}', {
          ...at(repo),
          basehead: `${base}...${head}`,
          per_page: 1,
        });
        return Compare.parse(data).merge_base_commit.sha;
      }),
  };
}

/** The answers' parsers, down to the fields read (test/github/openapi.test.ts holds them to GitHub's description). */
export const answerParsers = {
  Comments,
  Created,
  Membership,
  Pull,
  Id,
  GitCommit,
  GitTree,
  Compare,
  Reviews,
  CheckRuns,
  CheckRun,
};
