/**
 * The Workspace port's adapter (src/ports/workspace.ts): a git checkout on this machine, through
 * the operations in workspace.ts and the `.git` guard in guard.ts. Shells build it once
 * (`localWorkspaces`) and pass it to the TDD lane.
 */
import path from 'node:path';
import type { Workspace, Workspaces } from '../ports/workspace.js';
import { ConsortError } from '../core/errors.js';
import { isolationKind } from '../process/isolate.js';
import { pinGlobalConfig } from './pinned-config.js';
import { type GitSnapshot, restoreGit, settledSnapshot, snapshotGit } from './guard.js';
import { type PreparedWorktree, prepareWorktree, settleWorktree } from './prepared-worktree.js';
import * as git from './workspace.js';

/** The port over an opened GitWorkspace. */
export function bindWorkspace(ws: git.GitWorkspace): Workspace {
  /**
   * Set by a guard's restore when the index is byte for byte what it was before the agent's turn;
   * the next changesSince then skips asking git for index flags (one git process fewer per turn).
   */
  let indexUntouched = false;
  /** The last guard's snapshot (the next one reuses its list of git's global files when they are unchanged). */
  let last: GitSnapshot | undefined;
  /** The snapshot the last guard's restore put back (cleared when a guard starts from it). */
  let settled: GitSnapshot | undefined;
  /** Worktrees made ahead of their proof, by folder (prepared-worktree.ts). */
  const prepared = new Map<string, PreparedWorktree>();
  /**
   * Off once a prepared worktree did not settle: a checkout filter or end-of-line setting makes
   * every tree differ from its blobs, and an attack is no reason to keep trying either.
   */
  let prepareOff = false;
  /** The prepared worktree at `dir`, taken out of the map and shown again (null when none). */
  const take = (dir: string): PreparedWorktree | null => {
    const tree = prepared.get(path.resolve(dir));
    if (tree === undefined) return null;
    prepared.delete(path.resolve(dir));
    tree.show();
    return tree;
  };
  return {
    dir: ws.dir,
    top: ws.top,
    gitDir: ws.gitDir,
    head: () => git.workspaceHead(ws),
    changesSince: (base) => {
      const untouched = indexUntouched;
      indexUntouched = false;
      return git.changesSince(ws, base, { indexUntouched: untouched });
    },
    restore: (base, added) => git.restore(ws, base, added),
    setAsideSince: (base, message) => git.setAsideSince(ws, base, message),
    commitPaths: (paths, message) => git.commitPaths(ws, paths, message),
    amendPaths: (paths) => git.amendPaths(ws, paths),
    dirtyOutside: (allowed) => git.dirtyOutside(ws, allowed),
    listFiles: () => git.listFiles(ws),
    hashFiles: (paths) => git.hashFiles(ws, paths),
    codeTreeHash: () => git.codeTreeHash(ws),
    fileAt: (commit, p) => git.fileAt(ws, commit, p),
    filesUnder: (commit, dir) => git.filesUnder(ws, commit, dir),
    diffAdded: (base) => git.diffAdded(ws, base),
    stagedPatch: (base, paths) => git.stagedPatch(ws, base, paths),
    applyAndCommit: (patchFile, message) => git.applyAndCommit(ws, patchFile, message),
    async prepareWorktree(dir, commit) {
      // Only where the agent's turn sees the git directory read-only (bubblewrap): elsewhere it can
      // rewrite the worktree's registration (`commondir`), `config` or `info/attributes` while git
      // checks the worktree out, and the conductor's git would run its filter, outside any sandbox,
      // before any check (the guard puts `.git` back only after the turn).
      if (prepareOff || isolationKind() !== 'bwrap' || prepared.has(path.resolve(dir))) return;
      let tree: PreparedWorktree;
      try {
        tree = prepareWorktree(ws, dir, commit);
      } catch {
        return; // the folder exists already (or cannot be made): the proof makes its worktree as before
      }
      prepared.set(path.resolve(dir), tree);
      await tree.made;
    },
    async addWorktree(dir, commit) {
      const ahead = take(dir);
      if (ahead === null || !(await settleWorktree(ws, ahead, commit))) {
        if (ahead !== null) prepareOff = true;
        // No prepared tree, or one that is not exactly `commit`: made afresh (a leftover is replaced).
        await git.addWorktree(ws, dir, commit);
      }
      // A worktree of this repository: its top is `dir`, the rest as here (no git started to ask).
      return bindWorkspace({ ...ws, dir: path.join(dir, ws.prefix), top: path.resolve(dir) });
    },
    async removeWorktree(dir, options) {
      // A prepared worktree never taken: removed once git has finished making it.
      await take(dir)?.made;
      await git.removeWorktree(ws, dir, options);
    },
    settle: () => git.settleRemovals(ws),
    // A pin changes which of git's global files there are (its copies are among them): a snapshot
    // taken before it, or under a pin since released, would find the copies of another pin "deleted"
    // and put them back — a second run on this workspace stopped on that at its first guard.
    async pinGitConfig() {
      last = settled = undefined;
      const unpin = await pinGlobalConfig(ws.top);
      return async () => {
        await unpin();
        last = settled = undefined;
      };
    },
    async guardGit(purpose = 'turn') {
      if (purpose === 'turn') indexUntouched = false;
      // After a guard put git's files back, they are what that guard read: nothing is read again
      // (only the object store, which the conductor's commits grow). A change made since, by anyone,
      // is put back by this guard too.
      const [before, index, head] = await Promise.all([
        settled ? settledSnapshot(ws, settled) : snapshotGit(ws, last),
        git.indexBytes(ws),
        purpose === 'suite' ? git.workspaceHead(ws) : null,
      ]);
      last = before;
      settled = undefined;
      return {
        restore: async () => {
          const changes = await restoreGit(ws, before);
          settled = before;
          const after = await git.indexBytes(ws);
          const indexSame = index !== null && after !== null && index.equals(after);
          if (purpose === 'turn') {
            indexUntouched = changes.length === 0 && indexSame;
            return changes;
          }
          // A suite has no business with the work tree's index (a flag set there hides a file from
          // the next turn's scope check) or HEAD (the next turn would start from another commit).
          if (index !== null && !indexSame) {
            await git.writeIndexBytes(ws, index);
            changes.push({ path: '.git/index', status: 'modified' });
          }
          // Nor with the HEAD file: pointed at another branch of the same commit, HEAD still names
          // that commit, but the conductor's next commits would go to the suite's branch.
          if (before.head !== null && (await git.restoreHeadFile(ws, before.head)))
            changes.push({ path: '.git/HEAD', status: 'modified' });
          if ((await git.workspaceHead(ws)) !== head)
            throw new ConsortError(
              'internal',
              `The suite moved the workspace's HEAD away from ${head!.slice(0, 7)} while the conductor proved it.`,
              {
                hint: 'Look at what the suite and the code under test do with git in their working directory; reset the branch to the commit above and run again.',
              },
            );
          return changes.sort((a, b) => (a.path < b.path ? -1 : 1));
        },
      };
    },
  };
}

export const localWorkspaces: Workspaces = {
  open: async (dir) => bindWorkspace(await git.openWorkspace(dir)),
};
