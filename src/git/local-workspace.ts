/**
 * The Workspace port's adapter (src/ports/workspace.ts): a git checkout on this machine, through
 * the operations in workspace.ts and the `.git` guard in guard.ts. Shells build it once
 * (`localWorkspaces`) and pass it to the TDD lane.
 */
import path from 'node:path';
import type { Workspace, Workspaces } from '../ports/workspace.js';
import { restoreGit, snapshotGit } from './guard.js';
import * as git from './workspace.js';

/** The port over an opened GitWorkspace. */
export function bindWorkspace(ws: git.GitWorkspace): Workspace {
  /**
   * Set by a guard's restore when the index is byte for byte what it was before the agent's turn;
   * the next changesSince then skips asking git for index flags (one git process fewer per turn).
   */
  let indexUntouched = false;
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
    discardSince: (base) => git.discardSince(ws, base),
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
    async addWorktree(dir, commit) {
      await git.addWorktree(ws, dir, commit);
      // A worktree of this repository: its top is `dir`, the rest as here (no git started to ask).
      return bindWorkspace({ ...ws, dir: path.join(dir, ws.prefix), top: path.resolve(dir) });
    },
    removeWorktree: (dir) => git.removeWorktree(ws, dir),
    async guardGit() {
      indexUntouched = false;
      const [before, index] = await Promise.all([snapshotGit(ws), git.indexBytes(ws)]);
      return {
        restore: async () => {
          const changes = await restoreGit(ws, before);
          const after = await git.indexBytes(ws);
          indexUntouched = changes.length === 0 && index !== null && after !== null && index.equals(after);
          return changes;
        },
      };
    },
  };
}

export const localWorkspaces: Workspaces = {
  open: async (dir) => bindWorkspace(await git.openWorkspace(dir)),
};
