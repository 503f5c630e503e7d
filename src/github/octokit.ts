/**
 * The GitHubPort on Octokit, built with @actions/github's getOctokit (its proxy support and user
 * agent). The API base URL is passed explicitly — GITHUB_API_URL on GitHub Enterprise Server, or
 * a test's local server — rather than trusting a default computed when the module was loaded.
 */
import { getOctokit } from '@actions/github';
import { GitHubApiError, type GitHubPort, type IssueComment } from '../ports/github.js';

export interface OctokitSettings {
  token: string;
  /** e.g. https://api.github.com (GITHUB_API_URL). */
  apiUrl: string;
  userAgent?: string;
}

interface RawComment {
  id: number;
  body?: string | null;
  user: { login: string; type?: string } | null;
  html_url: string;
}

const toComment = (c: RawComment): IssueComment => ({
  id: c.id, body: c.body ?? '', user: c.user ? { login: c.user.login, type: c.user.type ?? 'User' } : null, htmlUrl: c.html_url,
});

/** Octokit's RequestError carries the status; the message never includes the token. */
async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const status = typeof e === 'object' && e !== null && 'status' in e && typeof e.status === 'number' ? e.status : 0;
    const detail = e instanceof Error ? e.message : String(e);
    throw new GitHubApiError(status, `GitHub API ${what} failed${status ? ` (HTTP ${status})` : ''}: ${detail}`, { cause: e });
  }
}

export function createOctokitGitHub(settings: OctokitSettings): GitHubPort {
  const octokit = getOctokit(settings.token, { baseUrl: settings.apiUrl.replace(/\/+$/, ''), ...(settings.userAgent ? { userAgent: settings.userAgent } : {}) });
  return {
    listIssueComments: ({ owner, repo, issueNumber }) =>
      call('list issue comments', async () =>
        (await octokit.paginate(octokit.rest.issues.listComments, { owner, repo, issue_number: issueNumber, per_page: 100 })).map(toComment)),
    createIssueComment: ({ owner, repo, issueNumber }, body) =>
      call('create issue comment', async () => toComment((await octokit.rest.issues.createComment({ owner, repo, issue_number: issueNumber, body })).data)),
    updateIssueComment: ({ owner, repo }, commentId, body) =>
      call('update issue comment', async () => toComment((await octokit.rest.issues.updateComment({ owner, repo, comment_id: commentId, body })).data)),
  };
}
