/**
 * One sticky PR comment per kind of report, found again on every push by a hidden marker and
 * edited in place. Planned purely (which comment is ours, create or update), then applied
 * through the GitHubPort: the one implementation the Action and the App both use, each with its
 * own marker, so on a repository that runs both the two comments never overwrite each other.
 */
import type { GitHubPort, IssueComment, RepoRef } from '../ports/github.js';
import { withoutPostMarker } from './post-marker.js';

export const CHECK_COMMENT_MARKER = '<!-- consort:check -->';

/**
 * The check comment's marker for one of several jobs that check the same pull request (a
 * monorepo's projects, a matrix): `<!-- consort:check <key> -->`, which the plain marker is no
 * prefix of, so each job finds and keeps its own comment. The key holds no `-` pair or `>`, which
 * could end the HTML comment.
 */
export function checkCommentMarker(key?: string): string {
  if (key === undefined) return CHECK_COMMENT_MARKER;
  const safe = key.replace(/-{2,}/g, '-').replace(/[^A-Za-z0-9._/@:+=-]/g, '_');
  return `<!-- consort:check ${safe} -->`;
}

export type StickyPlan = (
  | { action: 'create'; body: string }
  | { action: 'update'; commentId: number; body: string }
  | { action: 'unchanged'; commentId: number }
) & {
  /** Later comments of ours (two runs that both found none and both created one): deleted. */
  duplicates: number[];
};

export interface StickyOptions {
  marker: string;
  /**
   * The login the token posts as, when known (an App's bot). Without it, only comments by bot
   * accounts count as ours (GITHUB_TOKEN posts as github-actions[bot]): a person quoting the
   * marker must never have their comment overwritten.
   */
  selfLogin?: string;
}

/** The marker on its own first line: invisible in the rendered comment, stable across edits. */
export function withMarker(marker: string, markdown: string): string {
  return `${marker}\n${markdown.startsWith(marker) ? markdown.slice(marker.length).replace(/^\n/, '') : markdown}`;
}

export function isOurs(comment: IssueComment, options: StickyOptions): boolean {
  if (!comment.body.startsWith(options.marker) || comment.user === null) return false;
  return options.selfLogin !== undefined ? comment.user.login === options.selfLogin : comment.user.type === 'Bot';
}

/**
 * The oldest comment of ours is the sticky one. Later ones (two runs of a pull request that both
 * found none and both posted, or a create GitHub answered with an error after making it, which the
 * client retried) would go on showing an old report under the current one: they are deleted.
 */
export function planSticky(comments: readonly IssueComment[], markdown: string, options: StickyOptions): StickyPlan {
  const body = withMarker(options.marker, markdown);
  const [ours, ...later] = comments.filter((c) => isOurs(c, options));
  // Only those posted by the same account as the sticky one (without selfLogin, any bot counts as ours).
  const duplicates = later.filter((c) => c.user?.login === ours?.user?.login).map((c) => c.id);
  if (!ours) return { action: 'create', body, duplicates };
  // The comment as created ends with its post marker (post-marker.ts), which an edit drops.
  return withoutPostMarker(ours.body) === body
    ? { action: 'unchanged', commentId: ours.id, duplicates }
    : { action: 'update', commentId: ours.id, body, duplicates };
}

export interface StickyResult {
  action: StickyPlan['action'];
  commentId: number;
  url: string | null;
}

export async function upsertStickyComment(
  github: GitHubPort,
  repo: RepoRef,
  issue: number,
  markdown: string,
  options: StickyOptions,
): Promise<StickyResult> {
  const comments = await github.listComments(repo, issue);
  const plan = planSticky(comments, markdown, options);
  // Best effort: a duplicate left now (already gone, a token that may not delete) goes on a later run.
  await Promise.all(plan.duplicates.map((id) => github.deleteComment(repo, id).catch(() => undefined)));
  switch (plan.action) {
    case 'create': {
      const c = await github.createComment(repo, issue, plan.body);
      return { action: 'create', commentId: c.id, url: c.url };
    }
    case 'update': {
      await github.updateComment(repo, plan.commentId, plan.body);
      return {
        action: 'update',
        commentId: plan.commentId,
        url: comments.find((c) => c.id === plan.commentId)?.htmlUrl || null,
      };
    }
    case 'unchanged':
      return { action: 'unchanged', commentId: plan.commentId, url: null };
  }
}
