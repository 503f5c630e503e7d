/**
 * The look-ups of create-once.ts for the adapter (octokit.ts): after a create that failed with a
 * 5xx or no answer, what that attempt may have made — a comment by its post marker among the
 * issue's latest, a review by its commit and post marker (post-marker.ts: never by the body, which
 * someone else's post or a second post of ours may share), a check run by its commit, name and
 * external_id, a check run's completion by its status, conclusion and title, a batch of annotations
 * by the run's count of them. Also the issue's comments, all pages.
 */
import { z } from 'zod';
import type { Created, RepoRef } from '../ports/github.js';
import type { OctokitClient } from './octokit.js';
import { hasPostMarker } from './post-marker.js';

const User = z.object({ login: z.string(), type: z.string().optional() }).nullable();
export const Comments = z.array(
  z.object({
    id: z.number(),
    body: z.string().nullish(),
    user: User,
    html_url: z.string().optional(),
    created_at: z.string().optional(),
    updated_at: z.string().optional(),
  }),
);
export const Reviews = z.array(
  z.object({
    id: z.number(),
    body: z.string(),
    commit_id: z.string().nullable(),
    html_url: z.string(),
    submitted_at: z.string().optional(),
  }),
);
export const CheckRuns = z.object({
  check_runs: z.array(z.object({ id: z.number(), head_sha: z.string(), external_id: z.string().nullable() })),
});
export const CheckRun = z.object({
  status: z.string(),
  conclusion: z.string().nullable(),
  // annotations_count: GitHub always sends it; a stand-in that does not is asked for completion only.
  output: z.object({ title: z.string().nullable(), annotations_count: z.number().optional() }),
});

/** One page of comments is 100; past 50 pages (5,000 comments) the rest are not read. */
const MAX_COMMENT_PAGES = 50;
/** Pages of reviews (100 each) read when looking for one a failed create made. */
const MAX_REVIEW_PAGES = 30;
/** Pages of a commit's check runs of one name (100 each) read when looking for one a failed create made. */
const MAX_CHECK_RUN_PAGES = 10;
/**
 * How long before a failed create's answer (GitHub's `date`, else this machine's clock) what it
 * made may be dated: the request's own time (GitHub gives up on a request after 10 s) and clocks
 * that disagree. Only the issue's comments updated since then are read.
 */
const CREATED_WITHIN_MS = 120_000;

/** Only owner and repo go into a request: callers may pass a richer record. */
const at = (repo: RepoRef): RepoRef => ({ owner: repo.owner, repo: repo.repo });

export function lookUps(octokit: OctokitClient) {
  /** The issue's comments, oldest first, all pages (or those updated since `since`). */
  const comments = async (repo: RepoRef, issue: number, since?: Date) => {
    const all: z.infer<typeof Comments> = [];
    for (let page = 1; page <= MAX_COMMENT_PAGES; page++) {
      const { data } = await octokit.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        ...at(repo),
        issue_number: issue,
        per_page: 100,
        page,
        ...(since ? { since: since.toISOString() } : {}),
      });
      const batch = Comments.parse(data);
      all.push(...batch);
      if (batch.length < 100) break;
    }
    return all;
  };

  const checkRun = async (repo: RepoRef, id: number) =>
    CheckRun.parse(
      (
        await octokit.request('GET /repos/{owner}/{repo}/check-runs/{check_run_id}', {
          ...at(repo),
          check_run_id: id,
        })
      ).data,
    );

  return {
    comments,

    /** The comment carrying `marker` (post-marker.ts) written since shortly before `since`, or null. */
    async comment(repo: RepoRef, issue: number, marker: string, since: Date): Promise<Created | null> {
      const from = new Date(since.getTime() - CREATED_WITHIN_MS);
      const made = (await comments(repo, issue, from)).find((c) => hasPostMarker(c.body, marker));
      return made ? { id: made.id, url: made.html_url ?? '' } : null;
    },

    /** The review on `commitId` carrying `marker` (post-marker.ts), or null. */
    async review(repo: RepoRef, pull: number, commitId: string, marker: string): Promise<Created | null> {
      for (let page = 1; page <= MAX_REVIEW_PAGES; page++) {
        const { data } = await octokit.request('GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews', {
          ...at(repo),
          pull_number: pull,
          per_page: 100,
          page,
        });
        const batch = Reviews.parse(data);
        const made = batch.find((r) => r.commit_id === commitId && hasPostMarker(r.body, marker));
        if (made) return { id: made.id, url: made.html_url };
        if (batch.length < 100) break;
      }
      return null;
    },

    /** A check run on `headSha` with this name and external_id (the first GitHub lists), or null. */
    async checkRun(repo: RepoRef, run: { name: string; headSha: string; externalId: string }): Promise<number | null> {
      for (let page = 1; page <= MAX_CHECK_RUN_PAGES; page++) {
        const { data } = await octokit.request('GET /repos/{owner}/{repo}/commits/{ref}/check-runs', {
          ...at(repo),
          ref: run.headSha,
          check_name: run.name,
          filter: 'all',
          per_page: 100,
          page,
        });
        const batch = CheckRuns.parse(data).check_runs;
        const made = batch.find((c) => c.external_id === run.externalId && c.head_sha === run.headSha);
        if (made) return made.id;
        if (batch.length < 100) break;
      }
      return null;
    },

    /** Whether the check run `id` is completed with this conclusion and output title. */
    async completedAs(repo: RepoRef, id: number, conclusion: string, title: string): Promise<boolean> {
      const run = await checkRun(repo, id);
      return run.status === 'completed' && run.conclusion === conclusion && run.output.title === title;
    },

    /** How many annotations the check run `id` has (GitHub appends each update's). */
    async annotationsCount(repo: RepoRef, id: number): Promise<number> {
      const count = (await checkRun(repo, id)).output.annotations_count;
      if (count === undefined) throw new Error(`check run ${id} came back without output.annotations_count`);
      return count;
    },
  };
}
