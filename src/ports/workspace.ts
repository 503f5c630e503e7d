/**
 * The TDD lane's work tree: the checkout an agent works in, and the git operations the lane's scope
 * check, commits, proofs and gates rest on. The workspace may be a folder inside the repository;
 * paths are relative to it (`../` for anything outside). The adapter is src/git/local-workspace.ts
 * (localWorkspaces), over src/git/workspace.ts and the `.git` guard in src/git/guard.ts; the shells
 * build it once and hand it to the lane (src/lanes/tdd never imports src/git/). What the lane reads
 * of a commit without the work tree (its migrations) goes through the GitRepo port (./git.ts).
 */
import type { FileChange } from '../conductor/events.js';

/** `.git`'s control files as a turn found them (src/git/guard.ts). */
export interface GitGuard {
  /** Puts `.git` back as it was; returns what had changed, as `.git/<path>` changes. */
  restore(): Promise<FileChange[]>;
}

export interface Workspace {
  /** The workspace folder (absolute). */
  readonly dir: string;
  /** The repository's top-level folder (sibling folders for worktrees are named after it). */
  readonly top: string;
  /** The repository's common git directory (for lock files and patches nobody commits). */
  readonly gitDir: string;

  /** HEAD's commit; a ConsortError in a repository without commits. */
  head(): Promise<string>;
  /**
   * Everything that differs from `base` in the working tree, repository-wide (ignored files
   * excepted). Commits made since `base` (an agent's own) are undone first, their changes kept;
   * index flags that hide a file from git are cleared first.
   */
  changesSince(base: string): Promise<FileChange[]>;
  /** Back to `base` exactly: tracked files reset, the listed new files removed. */
  restore(base: string, added: readonly string[]): Promise<void>;
  /**
   * Back to `base`, keeping what happened since (an interrupted turn) as a git stash entry named
   * `message`; the entry's commit, or null when nothing differed.
   */
  setAsideSince(base: string, message: string): Promise<string | null>;
  /** Stage the paths and commit them; the new commit, or null when there was nothing to commit. */
  commitPaths(paths: readonly string[], message: string): Promise<string | null>;
  /** Stage the paths into the last commit (same message); the rewritten commit. Only for a commit not yet pushed. */
  amendPaths(paths: readonly string[]): Promise<string>;
  /** Dirty paths outside the given folders. */
  dirtyOutside(allowed: readonly string[]): Promise<string[]>;
  /** Files git knows of or would add (tracked and untracked, not ignored). */
  listFiles(): Promise<string[]>;
  /** sha256 of each file's normalized content in the work tree; null when it does not exist. */
  hashFiles(paths: readonly string[]): Promise<Record<string, string | null>>;
  /** Identity of the committed code: the tree at HEAD, outside `.consort/`. */
  codeTreeHash(): Promise<string>;
  /** A file's content at a commit, or null when it is not there. */
  fileAt(commit: string, path: string): Promise<string | null>;
  /** The paths of the files under `dir` at a commit. */
  filesUnder(commit: string, dir: string): Promise<string[]>;
  /** Lines added since `base` (committed, up to HEAD), with their file and new line number. */
  diffAdded(base: string): Promise<{ file: string; line: number; text: string }[]>;
  /** The change since `base` to the given paths, staged: a binary-safe patch and its size in lines. */
  stagedPatch(base: string, paths: readonly string[]): Promise<{ patch: string; changedLines: number }>;
  /** Apply a patch made by `stagedPatch` and commit it (idempotent by message). */
  applyAndCommit(patchFile: string, message: string): Promise<string | null>;
  /**
   * A detached worktree of `commit` at `dir` (one left over by a crashed run is replaced), opened at
   * this workspace's place inside it.
   */
  addWorktree(dir: string, commit: string): Promise<Workspace>;
  /**
   * Begin the worktree a later `addWorktree(dir, …)` will need, at `commit` (the proof's likely
   * parent), in the background and hidden from isolated commands until then: that call moves it to
   * its own commit (only the files that differ are written) and checks every file against that
   * commit, or makes it afresh. `removeWorktree(dir)` removes one never taken. Settles (never
   * rejects) once git has made it, or could not; callers need not wait. Optional: a workspace
   * without it makes every worktree when asked.
   */
  prepareWorktree?(dir: string, commit: string): Promise<void>;
  /**
   * Remove a worktree made by `addWorktree` or `prepareWorktree`. With `folderLater` it returns
   * once git no longer knows the worktree, and its folder is removed in the background: `settle`
   * waits for that.
   */
  removeWorktree(dir: string, options?: { folderLater?: boolean }): Promise<void>;
  /** Waits for the worktree folders still being removed (a run's end); throws if one could not be. */
  settle?(): Promise<void>;
  /**
   * Read `.git`'s control files (config, hooks, info, …), git's global files and the object store
   * before untrusted code runs: an agent's turn, or a proof's suite (which runs code an agent
   * wrote). A suite's guard also puts back the work tree's index, and its restore throws when HEAD moved.
   */
  guardGit(purpose?: 'turn' | 'suite'): Promise<GitGuard>;
  /**
   * Read git's global configuration once and let every git call of this process use that copy, not
   * the home folder's files, until the returned release (a TDD run: untrusted code can write there).
   */
  pinGitConfig?(): Promise<() => Promise<void>>;
}

/** Opens the workspace at a folder of a repository (a ConsortError outside one). */
export interface Workspaces {
  open(dir: string): Promise<Workspace>;
}
