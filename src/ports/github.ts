/**
 * The GitHub API as the lanes and shells need it — issue comments for now (the App adds check
 * runs and reviews). Adapters: github/octokit.ts (Actions and the App); tests use a local server.
 */

export interface RepoRef {
  owner: string;
  repo: string;
}

export interface IssueRef extends RepoRef {
  /** A pull request is an issue for the comments API. */
  issueNumber: number;
}

export interface IssueComment {
  id: number;
  body: string;
  /** null when the author's account was deleted. */
  user: { login: string; type: string } | null;
  htmlUrl: string;
}

export interface GitHubPort {
  /** Every comment on the issue, oldest first (all pages). */
  listIssueComments(issue: IssueRef): Promise<IssueComment[]>;
  createIssueComment(issue: IssueRef, body: string): Promise<IssueComment>;
  updateIssueComment(repo: RepoRef, commentId: number, body: string): Promise<IssueComment>;
}

/** An HTTP error from the API, with its status, so callers can tell "not allowed" (403) from the rest. */
export class GitHubApiError extends Error {
  constructor(readonly status: number, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GitHubApiError';
  }
}

export function isGitHubApiError(e: unknown, status?: number): e is GitHubApiError {
  return e instanceof GitHubApiError && (status === undefined || e.status === status);
}
