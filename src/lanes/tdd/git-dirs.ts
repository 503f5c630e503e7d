/** The repository's git directories: the common one, and the workspace's `.git` when that is another. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Workspace } from '../../ports/workspace.js';

export function gitDirsOf(ws: Pick<Workspace, 'gitDir' | 'top'>): string[] {
  const dotGit = path.join(ws.top, '.git');
  const git = path.resolve(dotGit) === path.resolve(ws.gitDir) ? [ws.gitDir] : [ws.gitDir, dotGit];
  return git.filter((p) => existsSync(p));
}
