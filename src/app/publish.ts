/**
 * What the App writes on a pull request besides check runs: the sticky comment (one per pull
 * request, updated in place) and a commit status per gate (`consort/gate/<name>`) that branch
 * protection can require. The statuses' wording is a pure function of the gate.
 */
import { planSticky } from '../github/sticky-comment.js';
import type { GitHubApi, Repo } from './github.js';
import type { Gate } from './store/gates.js';

export const gateContext = (name: string): string => `consort/gate/${name}`;

export interface StatusText {
  state: 'pending' | 'success' | 'failure';
  description: string;
}

/** The status of a gate on the commit `headSha`: only an approval made on that very commit counts. */
export function gateStatus(gate: Gate, headSha: string): StatusText {
  const by = gate.decidedBy === null ? '' : ` by @${gate.decidedBy}`;
  const at = gate.decidedHeadSha === null ? '' : ` at ${gate.decidedHeadSha.slice(0, 7)}`;
  switch (gate.state) {
    case 'approved':
      return gate.decidedHeadSha === headSha
        ? { state: 'success', description: `Approved${by}` }
        : { state: 'pending', description: `Approval${by}${at} is stale: approve again with /consort approve ${gate.name}` };
    case 'rejected':
      return { state: 'failure', description: `Rejected${by}: ${gate.reason ?? ''}`.trim() };
    case 'stale':
      return { state: 'pending', description: `Approval${by}${at} is stale: approve again with /consort approve ${gate.name}` };
    case 'pending':
      return { state: 'pending', description: `Waiting for /consort approve ${gate.name}` };
  }
}

export async function publishGateStatuses(gh: GitHubApi, repo: Repo, gates: readonly Gate[], headSha: string): Promise<void> {
  for (const gate of gates) await gh.setStatus(repo, headSha, { context: gateContext(gate.name), ...gateStatus(gate, headSha) });
}

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
