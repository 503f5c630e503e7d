/**
 * Webhook payloads recorded from GitHub (@octokit/webhooks-examples), adjusted only where a test
 * needs its own numbers: SHAs, the pull request number, the installation, a fork's head repository.
 * The interfaces name just the fields tests change; everything else stays as recorded.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Probot } from 'probot';

const require = createRequire(import.meta.url);
interface Recorded {
  name: string;
  examples: { action?: string; installation?: unknown }[];
}
let cache: Recorded[] | undefined;

function recorded(): Recorded[] {
  cache ??= JSON.parse(
    readFileSync(require.resolve('@octokit/webhooks-examples/api.github.com/index.json'), 'utf8'),
  ) as Recorded[];
  return cache;
}

/** A deep copy of the first recorded example of `event.action` (one sent to an installation, when `installed`). */
export function example<T>(event: string, action: string, installed = false): T {
  const found = recorded()
    .find((e) => e.name === event)
    ?.examples.find((p) => p.action === action && (!installed || p.installation !== undefined));
  if (!found) throw new Error(`no recorded ${event}.${action} example`);
  return structuredClone(found) as T;
}

export const INSTALLATION = 4242;
const installation = { id: INSTALLATION, node_id: 'MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ==' };

interface Common {
  action: string;
  installation?: { id: number; node_id: string };
  repository: { id: number };
}
export interface PullJson extends Common {
  number: number;
  pull_request: {
    number: number;
    head: { sha: string; repo: { full_name: string } | null };
    base: { sha: string };
    merged?: boolean | null;
    merge_commit_sha?: string | null;
    updated_at: string;
  };
}
export interface CommentJson extends Common {
  issue: { number: number; pull_request?: { url: string } };
  comment: { id: number; body: string; created_at: string; updated_at: string; user: { login: string; type: string } };
  sender: { login: string; type: string };
  changes?: { body: { from: string } };
}
export interface MergeGroupJson extends Common {
  merge_group: { head_sha: string; base_sha: string; head_ref: string };
}
export interface CheckRunJson extends Common {
  check_run: { id: number; head_sha: string };
}
export interface CheckSuiteJson extends Common {
  check_suite: { id: number; head_sha: string; pull_requests: unknown[] };
}

export interface PullOptions {
  action: 'opened' | 'synchronize' | 'reopened' | 'closed' | 'labeled' | 'edited';
  number: number;
  head: string;
  base: string;
  repositoryId?: number;
  fork?: boolean;
  merged?: boolean;
  mergeSha?: string;
  /** edited: the base branch it had before (GitHub sends `changes.base` only when the base changed). */
  baseFrom?: string;
  baseRef?: string;
  /** The pull request's `updated_at` (default: now, to the second, as GitHub writes it). */
  updatedAt?: string;
}

export function pullRequestPayload(o: PullOptions): PullJson {
  // No recorded `edited` example: GitHub sends the same pull request object with `changes`.
  const p = example<PullJson>('pull_request', o.action === 'edited' ? 'synchronize' : o.action, true);
  if (o.action === 'edited') {
    p.action = 'edited';
    delete (p as { before?: string }).before;
    delete (p as { after?: string }).after;
    (p as { changes?: unknown }).changes = o.baseFrom
      ? { base: { ref: { from: o.baseFrom }, sha: { from: 'f'.repeat(40) } } }
      : { title: { from: 'An older title' } };
  }
  if (o.baseRef) (p.pull_request.base as { ref?: string }).ref = o.baseRef;
  p.installation = installation;
  if (o.repositoryId !== undefined) p.repository.id = o.repositoryId;
  p.number = o.number;
  p.pull_request.number = o.number;
  p.pull_request.head.sha = o.head;
  p.pull_request.base.sha = o.base;
  // GitHub stamps every event with the pull request's time of change; the recorded examples' times
  // are not in the order a test sends them (the recorded reopened is older than the recorded closed).
  p.pull_request.updated_at = o.updatedAt ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  if (o.fork) p.pull_request.head.repo = { full_name: 'forker/Hello-World' };
  if (o.action === 'closed') {
    p.pull_request.merged = o.merged === true;
    p.pull_request.merge_commit_sha = o.mergeSha ?? o.head;
  }
  return p;
}

export interface CommentOptions {
  body: string;
  number: number;
  user?: string;
  userType?: 'User' | 'Bot';
  repositoryId?: number;
  action?: 'created' | 'edited';
  /** The body before the edit. */
  from?: string;
  /** When the comment was written (default: a second from now, i.e. after anything recorded so far). */
  at?: string;
  commentId?: number;
  onIssue?: boolean;
  /** Who edited the comment (the webhook's sender; default: its author). */
  editor?: string;
}

export function commentPayload(o: CommentOptions): CommentJson {
  const p = example<CommentJson>('issue_comment', o.action ?? 'created');
  p.installation = installation;
  if (o.repositoryId !== undefined) p.repository.id = o.repositoryId;
  p.issue.number = o.number;
  // Recorded on an issue; a pull request's comment carries issue.pull_request.
  if (!o.onIssue)
    p.issue.pull_request = { url: `https://api.github.com/repos/Codertocat/Hello-World/pulls/${o.number}` };
  p.comment.body = o.body;
  if (o.commentId !== undefined) p.comment.id = o.commentId;
  p.comment.user = { ...p.comment.user, login: o.user ?? 'Codertocat', type: o.userType ?? 'User' };
  p.sender = { ...p.sender, login: o.editor ?? o.user ?? 'Codertocat', type: o.userType ?? 'User' };
  const at = o.at ?? new Date(Date.now() + 1000).toISOString();
  p.comment.created_at = at;
  p.comment.updated_at = at;
  if (o.action === 'edited') p.changes = { body: { from: o.from ?? '' } };
  return p;
}

export function mergeGroupPayload(o: {
  head: string;
  base: string;
  repositoryId?: number;
  action?: 'checks_requested' | 'destroyed';
}): MergeGroupJson {
  const p = example<MergeGroupJson>('merge_group', 'checks_requested');
  p.action = o.action ?? 'checks_requested';
  p.installation = installation;
  if (o.repositoryId !== undefined) p.repository.id = o.repositoryId;
  p.merge_group.head_sha = o.head;
  p.merge_group.base_sha = o.base;
  return p;
}

export function checkRunPayload(o: { checkRunId: number; head: string; repositoryId?: number }): CheckRunJson {
  const p = example<CheckRunJson>('check_run', 'rerequested', true);
  p.installation = installation;
  if (o.repositoryId !== undefined) p.repository.id = o.repositoryId;
  p.check_run.id = o.checkRunId;
  p.check_run.head_sha = o.head;
  return p;
}

export function checkSuitePayload(o: { head: string; repositoryId?: number }): CheckSuiteJson {
  const p = example<CheckSuiteJson>('check_suite', 'rerequested', true);
  p.installation = installation;
  if (o.repositoryId !== undefined) p.repository.id = o.repositoryId;
  p.check_suite.head_sha = o.head;
  return p;
}

export interface InstallationJson {
  action: string;
  installation: { id: number };
  repositories_removed?: { id: number }[];
}

/** `installation.<action>` (all the installation's repositories) or `installation_repositories.removed` (those given). */
export function installationPayload(
  o: { action: 'deleted' | 'created' | 'suspend' } | { action: 'removed'; repositoryIds: number[] },
): InstallationJson {
  if (o.action !== 'removed') {
    const p = example<InstallationJson>('installation', o.action);
    p.installation.id = INSTALLATION;
    return p;
  }
  const p = example<InstallationJson>('installation_repositories', 'removed');
  p.installation.id = INSTALLATION;
  const [recorded] = p.repositories_removed ?? [];
  p.repositories_removed = o.repositoryIds.map((id) => ({ ...recorded, id }));
  return p;
}

export type ReceivedEvent = Parameters<Probot['receive']>[0];

/** Hand a recorded payload to Probot as GitHub would deliver it (`id` is the delivery id). */
export function delivery(
  name:
    | 'pull_request'
    | 'issue_comment'
    | 'merge_group'
    | 'check_run'
    | 'check_suite'
    | 'installation'
    | 'installation_repositories',
  id: string,
  payload: Common | InstallationJson,
): ReceivedEvent {
  return { id, name, payload } as ReceivedEvent;
}
