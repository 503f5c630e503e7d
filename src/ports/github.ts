/**
 * The GitHub API as every lane and shell needs it — comments (and the sticky one), reactions,
 * permissions, pull requests, reviews, commit statuses, check runs, tarballs and compares — as one
 * port. Calls name their repository, so one port serves the Action (one repository) and the App
 * (every installation's). The adapter is src/github/octokit.ts over any Octokit client with typed
 * routes; each shell builds its client in its composition root; tests use local servers or a fake.
 */

export interface RepoRef {
  owner: string;
  repo: string;
}

/** What the permission endpoint says a person may do; `none` for someone it does not know. */
export type Permission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';
/** The permissions that may give `/consort` commands and approve gates. */
export const WRITE_PERMISSIONS: readonly Permission[] = ['admin', 'maintain', 'write'];

export interface IssueComment {
  id: number;
  body: string;
  /** null when the author's account was deleted. */
  user: { login: string; type: string } | null;
  htmlUrl: string;
  /**
   * When it was written and last edited (ISO 8601, as GitHub's REST API gives them; equal when it
   * was never edited). REST does not say who edited a comment: the Action counts no edited command.
   */
  createdAt?: string;
  updatedAt?: string;
}

export interface Created {
  id: number;
  url: string;
}

export type Reaction = '+1' | 'eyes' | 'confused';

export interface PullRequest {
  number: number;
  state: string;
  title: string;
  body: string;
  /** The pull request's author (who may be kept from approving their own gates). */
  author: string;
  /** `repo` is `owner/name`; null when the head repository was deleted. */
  head: { ref: string; sha: string; repo: string | null };
  base: { ref: string; sha: string; repo: string };
}

export type StatusState = 'pending' | 'success' | 'failure' | 'error';

export interface CommitStatus {
  context: string;
  state: StatusState;
  /** Cut to GitHub's 140 characters by the adapter. */
  description: string;
  targetUrl?: string;
}

export type CheckConclusion =
  'success' | 'failure' | 'neutral' | 'cancelled' | 'timed_out' | 'action_required' | 'skipped';

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

export interface CheckOutput {
  title: string;
  summary: string;
  text?: string;
  annotations?: Annotation[];
}

/** A check run's end. GitHub asks for a `details_url` with `action_required` (where to act), so the type does too. */
export type CheckResult =
  | { conclusion: Exclude<CheckConclusion, 'action_required'>; output: CheckOutput; detailsUrl?: string }
  | { conclusion: 'action_required'; output: CheckOutput; detailsUrl: string };

export interface GitHubPort {
  /** Every comment on the issue or pull request, oldest first (all pages). */
  listComments(repo: RepoRef, issue: number): Promise<IssueComment[]>;
  createComment(repo: RepoRef, issue: number, body: string): Promise<Created>;
  updateComment(repo: RepoRef, commentId: number, body: string): Promise<void>;
  /** Delete a comment (one of the token's own: a duplicate sticky comment). */
  deleteComment(repo: RepoRef, commentId: number): Promise<void>;
  react(repo: RepoRef, commentId: number, content: Reaction): Promise<void>;
  permission(repo: RepoRef, user: string): Promise<Permission>;
  /** Whether `user` is an active member of the team `org/teamSlug` (needs a token that may read the organization's teams). */
  teamMember(org: string, teamSlug: string, user: string): Promise<boolean>;
  pull(repo: RepoRef, number: number): Promise<PullRequest>;
  /** A review with event COMMENT on `commitId` (one per agent turn). */
  review(repo: RepoRef, pull: number, commitId: string, body: string): Promise<Created>;
  setStatus(repo: RepoRef, sha: string, status: CommitStatus): Promise<void>;
  createCheckRun(
    repo: RepoRef,
    run: { name: string; headSha: string; externalId: string; output: CheckOutput },
  ): Promise<number>;
  /**
   * The id of a check run on `headSha` with this name and external_id, or null: one that an earlier
   * attempt made before it failed (a create GitHub carried out, an id not saved), found before a
   * second is made.
   */
  findCheckRun(repo: RepoRef, run: { name: string; headSha: string; externalId: string }): Promise<number | null>;
  completeCheckRun(repo: RepoRef, id: number, result: CheckResult): Promise<void>;
  /** The repository at a commit, as a gzipped tarball. */
  tarball(repo: RepoRef, sha: string): Promise<Buffer>;
  /**
   * The entries of the folder `dir` (repository-relative, `/`-separated; '' for the top) of the
   * commit `sha`, read from git's objects (the Git Trees API): what the commit holds, which a tarball
   * (git archive, honouring the commit's own `.gitattributes`) may not. null: no such folder.
   */
  folderEntries(repo: RepoRef, sha: string, dir: string): Promise<FolderEntry[] | null>;
  mergeBase(repo: RepoRef, base: string, head: string): Promise<string>;
}

/** One entry of a folder in git's objects: a file (`blob`, with its mode), a folder (`tree`) or a submodule (`commit`). */
export interface FolderEntry {
  name: string;
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  /** The object's id: for a blob, git's hash of its bytes (`blob <size>\0<bytes>`). */
  sha: string;
}

/** An HTTP error from the API, with its status, so callers can tell "not allowed" (403) from the rest. */
export class GitHubApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GitHubApiError';
  }
}

export function isGitHubApiError(e: unknown, status?: number): e is GitHubApiError {
  return e instanceof GitHubApiError && (status === undefined || e.status === status);
}
