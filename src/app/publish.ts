/**
 * What the App writes on a pull request besides check runs: the sticky comment (one per pull
 * request, updated in place) and replies to commands. Gate statuses are the TDD lane's (the Action
 * publishes them from the records on the branch).
 */
import { planSticky } from '../github/sticky-comment.js';
import type { GitHubApi, Repo } from './github.js';

/**
 * Create or update the comment that starts with `marker`, with the sticky-comment plan the Action
 * uses too (src/github/sticky-comment.ts): only comments written by a bot count as ours, so a
 * person quoting the marker can neither hijack nor hide the App's comment. The App has its own
 * marker, so on a repository that also runs the Action the two comments never overwrite each other.
 */
export async function upsertStickyComment(gh: GitHubApi, repo: Repo, issue: number, marker: string, body: string): Promise<{ id: number; created: boolean }> {
  const comments = (await gh.listComments(repo, issue)).map((c) => ({ id: c.id, body: c.body, user: { login: c.author, type: c.authorType }, htmlUrl: '' }));
  const plan = planSticky(comments, body, { marker });
  switch (plan.action) {
    case 'create':
      return { id: await gh.createComment(repo, issue, plan.body), created: true };
    case 'update':
      await gh.updateComment(repo, plan.commentId, plan.body);
      return { id: plan.commentId, created: false };
    case 'unchanged':
      return { id: plan.commentId, created: false };
  }
}

/** A reply to a command: addressed to its author, quoting what they asked. */
export function replyText(author: string, asked: string, answer: string): string {
  const quoted = asked.split('\n').slice(0, 3).map((l) => `> ${l}`).join('\n');
  return `${quoted}\n\n@${author} ${answer}`;
}
