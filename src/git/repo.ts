/**
 * The little of git the check lane needs: resolve refs, find a sensible default base, and read a
 * directory's files as they are at a commit (without touching the working tree).
 */
import { posix } from 'node:path';
import { ConsortError } from '../core/errors.js';
import type { GitRepo } from '../ports/git.js';
import { linkTargets, listTree, readBlobs, writeCommitTree } from './commit-tree.js';
import { git as exec } from './exec.js';
import { isLink, refusal, resolveInTree, type Resolved, type TreeEntry } from './tree-links.js';

async function gitBytes(root: string, args: string[], input?: string): Promise<Buffer> {
  const r = await exec(root, args, input !== undefined ? { input } : {});
  if (r.code !== 0)
    throw new ConsortError('invalid-input', `git ${args[0]} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
  return r.bytes;
}

async function git(root: string, args: string[], input?: string): Promise<string> {
  return (await gitBytes(root, args, input)).toString('utf8');
}

export async function isGitRepo(root: string): Promise<boolean> {
  return git(root, ['rev-parse', '--is-inside-work-tree']).then(
    (o) => o.trim() === 'true',
    () => false,
  );
}

export async function resolveCommit(root: string, ref: string): Promise<string> {
  try {
    return (await git(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).trim();
  } catch {
    throw new ConsortError('invalid-input', `Unknown git ref "${ref}".`, {
      hint: 'Pass a branch, tag or commit that exists (git fetch it first in a shallow CI checkout).',
    });
  }
}

/** Whether git ignores `dir` (a build's output named in .gitignore): its files are in no commit. */
export async function isIgnored(root: string, dir: string): Promise<boolean> {
  const r = await exec(root, ['check-ignore', '-q', '--', dir]);
  return r.code === 0;
}

/** Files under `dir` that git does not track yet (new and not added), relative to `root`. */
export async function untrackedFiles(root: string, dir: string): Promise<Set<string>> {
  const out = await git(root, ['ls-files', '--others', '--exclude-standard', '--full-name', '--', dir]).catch(() => '');
  const prefix = (await git(root, ['rev-parse', '--show-prefix']).catch(() => '')).trim();
  return new Set(
    out
      .split('\n')
      .filter(Boolean)
      .map((f) => (prefix && f.startsWith(prefix) ? f.slice(prefix.length) : f)),
  );
}

/** The branch checked out at `root`, or null when HEAD is detached (or not a repository). */
export async function currentBranch(root: string): Promise<string | null> {
  return git(root, ['symbolic-ref', '--quiet', '--short', 'HEAD']).then(
    (o) => o.trim() || null,
    () => null,
  );
}

/** The merge-base of HEAD with the default branch: what a PR would be compared against. */
export async function defaultBase(root: string): Promise<{ ref: string; sha: string }> {
  for (const candidate of ['origin/HEAD', 'origin/main', 'main', 'origin/master', 'master']) {
    const sha = await git(root, ['rev-parse', '--verify', '--quiet', `${candidate}^{commit}`]).then(
      (o) => o.trim(),
      () => '',
    );
    if (!sha) continue;
    const base = (await git(root, ['merge-base', 'HEAD', sha])).trim();
    return { ref: candidate, sha: base };
  }
  throw new ConsortError('invalid-input', 'Cannot tell which commit to compare against.', {
    hint: 'Pass --base <ref> (for example --base origin/main).',
  });
}

/**
 * The files directly in `dir` at `commit` (or the file `dir` names), with their content
 * (binary-safe enough for migrations). Not its subdirectories' files: node-pg-migrate reads one
 * directory, and a project may keep files its migrations read in a folder inside it
 * (`migrations/sql/<name>.up.sql`); listed, they would be migrations of one side only. A link
 * (`dir` itself, or a file in it) reads as the file or folder it leads to in the commit, as a
 * checkout would; one that leads outside, nowhere, loops, or (a file in `dir`) to a folder is a
 * ConsortError naming the link and its target (src/git/tree-links.ts).
 */
export async function filesAt(root: string, commit: string, dir: string): Promise<{ file: string; content: string }[]> {
  // As git lists paths: `./migrations/`, `db\\migrations` and `migrations` are one folder.
  const clean = posix.normalize(dir.replace(/\\/g, '/')).replace(/\/+$/, '') || '.';
  let tree = await listTree(root, commit, clean === '.' ? undefined : clean);
  const near = (p: string) => p === clean || posix.dirname(p) === clean;
  // The whole tree only where a link may be on the way: one listed, or a folder of `dir` missing.
  const ancestors = clean === '.' ? [] : clean.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
  if ([...tree.values()].some((e) => near(e.path) && isLink(e)) || ancestors.some((a) => !tree.has(a)))
    tree = await listTree(root, commit);
  const targets = await linkTargets(root, tree.values());
  const refused = (r: Extract<Resolved, { kind: 'refused' }>): never => {
    throw new ConsortError('config', `${refusal(r)} (commit ${commit.slice(0, 12)}).`, { hint: LINK_HINT });
  };
  const top = clean === '.' ? ({ kind: 'folder', path: '' } as const) : resolveInTree(tree, targets, clean);
  let found: { file: string; entry: TreeEntry }[];
  if (top.kind === 'missing') return [];
  if (top.kind === 'refused') return refused(top);
  if (top.kind === 'file') found = [{ file: clean, entry: top.entry }];
  else {
    found = [];
    const inside = (p: string) => (top.path === '' ? !p.includes('/') : posix.dirname(p) === top.path);
    for (const e of tree.values()) {
      if (e.type !== 'blob' || !inside(e.path)) continue;
      const file = clean === '.' ? posix.basename(e.path) : `${clean}/${posix.basename(e.path)}`;
      if (!isLink(e)) {
        found.push({ file, entry: e });
        continue;
      }
      const r = resolveInTree(tree, targets, e.path);
      if (r.kind === 'refused') refused(r);
      if (r.kind !== 'file')
        refused({ kind: 'refused', link: e.path, target: targets.get(e.path) ?? '', why: 'is a folder, not a file' });
      else found.push({ file, entry: r.entry });
    }
  }
  const blobs = await readBlobs(
    root,
    found.map((f) => f.entry.id),
  );
  return found.map((f, i) => ({ file: f.file, content: blobs[i]!.toString('utf8') }));
}

/**
 * Whether `dir` is a folder at `commit` (through links inside the commit, as filesAt reads it), a
 * file, or not there at all: filesAt gives no files for a missing folder and an empty one alike.
 */
export async function pathKindAt(root: string, commit: string, dir: string): Promise<'folder' | 'file' | 'missing'> {
  const clean = posix.normalize(dir.replace(/\\/g, '/')).replace(/\/+$/, '') || '.';
  if (clean === '.') return 'folder';
  const tree = await listTree(root, commit);
  const found = resolveInTree(tree, await linkTargets(root, tree.values()), clean);
  return found.kind === 'folder' || found.kind === 'file' ? found.kind : 'missing';
}

/** What to do about a link filesAt refused. */
const LINK_HINT = 'Make it a regular file of the repository, or a link to a file inside it (relative to its folder).';

export async function headCommit(root: string): Promise<string | null> {
  return git(root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']).then(
    (o) => o.trim() || null,
    () => null,
  );
}

export async function hasCommit(root: string, sha: string): Promise<boolean> {
  return git(root, ['cat-file', '-e', `${sha}^{commit}`]).then(
    () => true,
    () => false,
  );
}

/**
 * The parents a commit names. Read from the commit object itself, so they are known even in a
 * shallow clone that lacks the parent commits.
 */
export async function commitParents(root: string, sha: string): Promise<string[]> {
  const text = await git(root, ['cat-file', 'commit', sha]);
  const header = text.slice(0, text.indexOf('\n\n'));
  return header
    .split('\n')
    .filter((l) => l.startsWith('parent '))
    .map((l) => l.slice('parent '.length).trim());
}

/** Make `sha` available in a shallow or partial clone (one commit deep, no tags). */
export async function fetchCommit(root: string, sha: string, remote = 'origin'): Promise<void> {
  await git(root, ['fetch', '--no-tags', '--depth=1', remote, sha]);
}

/** The best common ancestor of two commits, or null when there is none (or history is missing). */
export async function mergeBase(root: string, a: string, b: string): Promise<string | null> {
  return git(root, ['merge-base', a, b]).then(
    (o) => o.trim() || null,
    () => null,
  );
}

/**
 * The tree of `sha` written into `dest` from its objects, byte for byte (src/git/commit-tree.ts:
 * no `.gitattributes` applies, a link is written only when it leads inside the commit).
 */
export function extractCommit(repo: string, sha: string, dest: string): Promise<{ leftOut: string[] }> {
  return writeCommitTree(repo, sha, dest);
}

/** The GitRepo port (src/ports/git.ts) over these functions. */
export const localGitRepo: GitRepo = {
  isGitRepo,
  isIgnored,
  resolveCommit,
  headCommit,
  currentBranch,
  defaultBase,
  untrackedFiles,
  filesAt,
  pathKindAt,
  hasCommit,
  commitParents,
  fetchCommit,
  mergeBase,
  extractCommit,
};

/**
 * The paths `pathspecs` match whose content differs between two commits (added, removed or
 * changed), as git compares their trees: names only, no diff driver or text conversion runs.
 */
export async function changedBetween(root: string, from: string, to: string, pathspecs: string[]): Promise<string[]> {
  const out = await git(root, [
    'diff',
    '--name-only',
    '-z',
    '--no-renames',
    '--no-ext-diff',
    '--no-textconv',
    from,
    to,
    '--',
    ...pathspecs,
  ]);
  return out.split('\0').filter(Boolean);
}
