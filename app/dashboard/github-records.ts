/**
 * What the dashboard asks of GitHub, as a port and its adapter over any Octokit-shaped client:
 * a commit's whole tree (one call; the blobs under `.consort/features/` and the code tree's hash
 * come from it), blobs by sha (fetched only when their sha is new), a person's permission, and the
 * writes made with the person's own token — a commit on a pull request's branch, which GitHub
 * accepts only from someone who may push there and only as a fast-forward of the head they saw, and
 * a comment on the pull request, which GitHub attributes to that person.
 */
import { z } from 'zod';
import { collaboratorPermission } from '../../src/github/permissions.js';
import type { Permission, RepoRef as Repo } from '../../src/ports/github.js';
import type { OctokitClient as OctokitLike } from '../../src/github/octokit.js';
import type { Endpoints } from '@octokit/types';
import type { Counts } from '../../src/dashboard/diff-stat.js';

export interface TreeEntry {
  path: string;
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  /** Bytes (blobs only). */
  size?: number;
}

export interface RecordsApi {
  /** Every entry of the commit's tree, recursively; `truncated` when GitHub did not list them all. */
  tree(repo: Repo, commitSha: string): Promise<{ entries: TreeEntry[]; truncated: boolean }>;
  blob(repo: Repo, sha: string): Promise<string>;
  permission(repo: Repo, user: string): Promise<Permission>;
  /**
   * Lines added/removed per file from `base` to `head`. GitHub lists at most 300 files: past that,
   * each of `paths` it left out has unknown (null) counts rather than none.
   */
  compare(repo: Repo, base: string, head: string, paths?: readonly string[]): Promise<Counts>;
}

export interface CommitApi {
  /** Where the branch points now. */
  branchHead(repo: Repo, branch: string): Promise<string>;
  /**
   * A commit on `branch` with `files` written (paths from the repository root), parent `parent`;
   * the branch moves only if it still points at `parent` (no force). Returns the new commit's sha.
   */
  commitFiles(
    repo: Repo,
    o: { branch: string; parent: string; message: string; files: { path: string; content: string }[] },
  ): Promise<string>;
  /** A comment on issue or pull request `issue`, by the token's person. */
  comment(repo: Repo, issue: number, body: string): Promise<{ id: number }>;
}

const Tree = z.object({
  sha: z.string(),
  truncated: z.boolean().optional(),
  tree: z.array(
    z.object({
      path: z.string(),
      mode: z.string(),
      type: z.enum(['blob', 'tree', 'commit']),
      sha: z.string(),
      size: z.number().optional(),
    }),
  ),
});
const Compare = z.object({
  files: z.array(z.object({ filename: z.string(), additions: z.number(), deletions: z.number() })).optional(),
});
const Blob = z.object({ content: z.string(), encoding: z.string() });
const Sha = z.object({ sha: z.string() });
const CommentId = z.object({ id: z.number() });
const Ref = z.object({ object: z.object({ sha: z.string() }) });
const Commit = z.object({ sha: z.string(), tree: z.object({ sha: z.string() }) });

/** The parser of each route's answer, for test/github/openapi.test.ts to hold their fields to GitHub's description. */
export const ANSWER_PARSERS = {
  'GET /repos/{owner}/{repo}/git/trees/{tree_sha}': Tree,
  'GET /repos/{owner}/{repo}/git/blobs/{file_sha}': Blob,
  'GET /repos/{owner}/{repo}/compare/{basehead}': Compare,
  'GET /repos/{owner}/{repo}/git/ref/{ref}': Ref,
  'GET /repos/{owner}/{repo}/git/commits/{commit_sha}': Commit,
  'POST /repos/{owner}/{repo}/git/trees': Sha,
  'POST /repos/{owner}/{repo}/git/commits': Sha,
  'POST /repos/{owner}/{repo}/issues/{issue_number}/comments': CommentId,
} satisfies Partial<Record<keyof Endpoints, z.ZodType>>;

const at = (repo: Repo): Repo => ({ owner: repo.owner, repo: repo.repo });

/** The most files GitHub's compare lists ("up to 300 changed files for the entire comparison"). */
export const COMPARE_FILES_MAX = 300;

export function githubRecords(octokit: OctokitLike): RecordsApi {
  return {
    async tree(repo, commitSha) {
      const { data } = await octokit.request('GET /repos/{owner}/{repo}/git/trees/{tree_sha}', {
        ...at(repo),
        tree_sha: commitSha,
        recursive: '1',
      });
      const tree = Tree.parse(data);
      return { entries: tree.tree, truncated: tree.truncated === true };
    },
    async blob(repo, sha) {
      const { data } = await octokit.request('GET /repos/{owner}/{repo}/git/blobs/{file_sha}', {
        ...at(repo),
        file_sha: sha,
      });
      const blob = Blob.parse(data);
      return blob.encoding === 'base64' ? Buffer.from(blob.content, 'base64').toString('utf8') : blob.content;
    },
    async compare(repo, base, head, paths = []) {
      const { data } = await octokit.request('GET /repos/{owner}/{repo}/compare/{basehead}', {
        ...at(repo),
        basehead: `${base}...${head}`,
        per_page: 100,
      });
      const files = Compare.parse(data).files ?? [];
      const counts: Counts = new Map(files.map((f) => [f.filename, { added: f.additions, removed: f.deletions }]));
      if (files.length >= COMPARE_FILES_MAX)
        for (const p of paths) if (!counts.has(p)) counts.set(p, { added: null, removed: null });
      return counts;
    },
    permission: (repo, user) =>
      collaboratorPermission(() =>
        octokit.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', {
          ...at(repo),
          username: user,
        }),
      ),
  };
}

export function githubCommits(octokit: OctokitLike): CommitApi {
  return {
    async branchHead(repo, branch) {
      const { data } = await octokit.request('GET /repos/{owner}/{repo}/git/ref/{ref}', {
        ...at(repo),
        ref: `heads/${branch}`,
      });
      return Ref.parse(data).object.sha;
    },
    async commitFiles(repo, o) {
      const { data: parent } = await octokit.request('GET /repos/{owner}/{repo}/git/commits/{commit_sha}', {
        ...at(repo),
        commit_sha: o.parent,
      });
      const { data: tree } = await octokit.request('POST /repos/{owner}/{repo}/git/trees', {
        ...at(repo),
        base_tree: Commit.parse(parent).tree.sha,
        tree: o.files.map((f) => ({
          path: f.path,
          mode: '100644' as const,
          type: 'blob' as const,
          content: f.content,
        })),
      });
      const { data: commit } = await octokit.request('POST /repos/{owner}/{repo}/git/commits', {
        ...at(repo),
        message: o.message,
        tree: Sha.parse(tree).sha,
        parents: [o.parent],
      });
      const sha = Sha.parse(commit).sha;
      await octokit.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', {
        ...at(repo),
        ref: `heads/${o.branch}`,
        sha,
        force: false,
      });
      return sha;
    },
    async comment(repo, issue, body) {
      const { data } = await octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        ...at(repo),
        issue_number: issue,
        body,
      });
      return { id: CommentId.parse(data).id };
    },
  };
}

/**
 * The code tree's hash as the merge gate computes it from a checkout (`git ls-tree -r HEAD`
 * outside `.consort/`, see codeTreeHash): one line per blob or submodule, `<mode> <type> <sha>\t<path>`.
 */
export function codeTreeLines(entries: readonly TreeEntry[]): string[] {
  return entries
    .filter((e) => e.type !== 'tree' && !e.path.startsWith('.consort/'))
    .map((e) => `${e.mode} ${e.type} ${e.sha}\t${e.path}`);
}
