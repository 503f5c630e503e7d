/**
 * A local stand-in for GitHub (the GitHubPort), for tests about the queue and the store rather
 * than about HTTP: it records every call, serves tarballs it was given and fails on anything else.
 */
import { folderEntriesOf } from './repo.js';
import type {
  CheckConclusion,
  CheckOutput,
  CheckResult,
  CommitStatus,
  Created,
  FolderEntry,
  GitHubPort,
  IssueComment,
  Permission,
  PullRequest,
  RepoRef as Repo,
} from '../../../src/ports/github.js';
import { GitHubApiError } from '../../../src/ports/github.js';

export interface FakeCall {
  method: keyof GitHubPort;
  args: unknown[];
}

/** Check run ids are unique across GitHub (the store relies on it), so across stand-ins too. */
let lastId = 1_000_000;

export class FakeGitHub implements GitHubPort {
  readonly calls: FakeCall[] = [];
  readonly checkRuns = new Map<
    number,
    {
      name?: string;
      headSha: string;
      externalId?: string;
      conclusion?: CheckConclusion;
      output: CheckOutput;
      detailsUrl?: string;
    }
  >();
  readonly tarballs = new Map<string, Buffer>();
  readonly permissions = new Map<string, Permission>();
  readonly comments: IssueComment[] = [];
  /** Pull requests GitHub would answer for (`pull`); any other number is not found. */
  readonly pulls = new Map<number, PullRequest>();

  private record(method: keyof GitHubPort, ...args: unknown[]): void {
    this.calls.push({ method, args });
  }

  async createCheckRun(
    repo: Repo,
    run: { name: string; headSha: string; externalId: string; output: CheckOutput },
  ): Promise<number> {
    this.record('createCheckRun', repo, run);
    const id = ++lastId;
    this.checkRuns.set(id, { name: run.name, headSha: run.headSha, externalId: run.externalId, output: run.output });
    return id;
  }

  async findCheckRun(repo: Repo, run: { name: string; headSha: string; externalId: string }): Promise<number | null> {
    this.record('findCheckRun', repo, run);
    const found = [...this.checkRuns.entries()].find(
      ([, c]) => c.name === run.name && c.headSha === run.headSha && c.externalId === run.externalId,
    );
    return found ? found[0] : null;
  }

  async completeCheckRun(repo: Repo, id: number, result: CheckResult): Promise<void> {
    this.record('completeCheckRun', repo, id, result);
    const run = this.checkRuns.get(id);
    if (!run) throw new Error(`no check run ${id}`);
    if (run.conclusion !== undefined)
      throw new Error(`check run ${id} concluded twice (${run.conclusion}, then ${result.conclusion})`);
    this.checkRuns.set(id, {
      ...run,
      conclusion: result.conclusion,
      output: result.output,
      ...(result.detailsUrl ? { detailsUrl: result.detailsUrl } : {}),
    });
  }

  async tarball(repo: Repo, sha: string): Promise<Buffer> {
    this.record('tarball', repo, sha);
    const t = this.tarballs.get(sha);
    if (!t) throw new Error(`no tarball for ${sha}`);
    return t;
  }

  async folderEntries(repo: Repo, sha: string, dir: string): Promise<FolderEntry[] | null> {
    this.record('folderEntries', repo, sha, dir);
    return folderEntriesOf(sha, dir);
  }

  async mergeBase(repo: Repo, base: string, head: string): Promise<string> {
    this.record('mergeBase', repo, base, head);
    return base;
  }

  async listComments(repo: Repo, issue: number): Promise<IssueComment[]> {
    this.record('listComments', repo, issue);
    return [...this.comments];
  }

  async createComment(repo: Repo, issue: number, body: string): Promise<Created> {
    this.record('createComment', repo, issue, body);
    const id = ++lastId;
    const url = `https://github.com/${repo.owner}/${repo.repo}/pull/${issue}#issuecomment-${id}`;
    this.comments.push({ id, body, user: { login: 'consort[bot]', type: 'Bot' }, htmlUrl: url });
    return { id, url };
  }

  async updateComment(repo: Repo, commentId: number, body: string): Promise<void> {
    this.record('updateComment', repo, commentId, body);
    const c = this.comments.find((x) => x.id === commentId);
    if (c) c.body = body;
  }

  async deleteComment(repo: Repo, commentId: number): Promise<void> {
    this.record('deleteComment', repo, commentId);
    const at = this.comments.findIndex((x) => x.id === commentId);
    if (at >= 0) this.comments.splice(at, 1);
  }

  async react(repo: Repo, commentId: number, content: '+1' | 'eyes' | 'confused'): Promise<void> {
    this.record('react', repo, commentId, content);
  }

  async permission(repo: Repo, user: string): Promise<Permission> {
    this.record('permission', repo, user);
    return this.permissions.get(user) ?? 'none';
  }

  async setStatus(repo: Repo, sha: string, status: CommitStatus): Promise<void> {
    this.record('setStatus', repo, sha, status);
  }

  async teamMember(org: string, teamSlug: string, user: string): Promise<boolean> {
    this.record('teamMember', org, teamSlug, user);
    return false;
  }

  async pull(repo: Repo, number: number): Promise<PullRequest> {
    this.record('pull', repo, number);
    const found = this.pulls.get(number);
    if (!found) throw new GitHubApiError(404, `GitHub API get pull request failed (HTTP 404): Not Found`);
    return found;
  }

  async review(repo: Repo, pull: number, commitId: string, body: string): Promise<Created> {
    this.record('review', repo, pull, commitId, body);
    throw new Error('the App posts no reviews');
  }

  concluded(): { id: number; conclusion: CheckConclusion; summary: string }[] {
    return [...this.checkRuns.entries()]
      .filter(([, r]) => r.conclusion !== undefined)
      .map(([id, r]) => ({ id, conclusion: r.conclusion!, summary: r.output.summary }));
  }
}
