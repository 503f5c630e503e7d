/**
 * A repository as the lanes read it: refs, commits and the files of a commit (listed, or extracted
 * into a folder), never the working tree's (that is the TDD lane's Workspace, src/ports/workspace.ts). `root` is any folder of the
 * repository. The adapter is src/git/repo.ts (localGitRepo), which starts git through
 * src/git/exec.ts with hooks, fsmonitor and system config off.
 */

export interface GitRepo {
  isGitRepo(root: string): Promise<boolean>;
  /** The commit a ref names; a ConsortError for an unknown ref. */
  resolveCommit(root: string, ref: string): Promise<string>;
  /** HEAD's commit, or null in a repository without commits (or outside one). */
  headCommit(root: string): Promise<string | null>;
  /** The branch checked out, or null when HEAD is detached (or not a repository). */
  currentBranch(root: string): Promise<string | null>;
  /** The merge-base of HEAD with the default branch: what a PR would be compared against. */
  defaultBase(root: string): Promise<{ ref: string; sha: string }>;
  /** Whether git ignores `dir` (.gitignore and the like): what is in it is in no commit. */
  isIgnored(root: string, dir: string): Promise<boolean>;
  /** Files under `dir` that git does not track yet, relative to `root`. */
  untrackedFiles(root: string, dir: string): Promise<Set<string>>;
  /** The files directly in `dir` at `commit` (not its subdirectories': node-pg-migrate reads one directory), with their content. */
  filesAt(root: string, commit: string, dir: string): Promise<{ file: string; content: string }[]>;
  /** Whether `dir` is a folder, a file or nothing at `commit` (filesAt reads a missing folder as empty). */
  pathKindAt(root: string, commit: string, dir: string): Promise<'folder' | 'file' | 'missing'>;
  hasCommit(root: string, sha: string): Promise<boolean>;
  /** The parents a commit names (known even in a shallow clone). */
  commitParents(root: string, sha: string): Promise<string[]>;
  /** Make `sha` available in a shallow or partial clone. */
  fetchCommit(root: string, sha: string, remote?: string): Promise<void>;
  /** The best common ancestor, or null when there is none. */
  mergeBase(root: string, a: string, b: string): Promise<string | null>;
  /**
   * The whole tree of `commit`, written into the existing folder `dest` (the files only: no .git)
   * byte for byte as its objects hold it; `leftOut`: the links not written (they lead outside the
   * commit, nowhere, or loop), each with its target and why.
   */
  extractCommit(root: string, commit: string, dest: string): Promise<{ leftOut: string[] }>;
}
