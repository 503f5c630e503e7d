/**
 * The agent never changes what judges it: git's own control files. An agent with a shell can
 * write under `.git/` — a hook that runs inside the conductor's next commit or push, an
 * `include.path`, `core.fsmonitor` or a clean filter in `config` that changes what git reports,
 * an `info/exclude` that hides a file from the scope check. The conductor reads these files before
 * every turn and compares them after it: any difference is put back at once and reported as the
 * turn's change (the scope check refuses it, so the turn is refused and reverted).
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FileChange } from '../conductor/events.js';
import type { GitWorkspace } from './workspace.js';

/** What is guarded, relative to the common git directory. Objects and refs are git's to judge (commits are read by hash). */
const GUARDED = ['config', 'hooks', 'info', 'commondir', 'modules'];

export type GitSnapshot = Map<string, Buffer>;

async function walk(root: string, rel: string, into: GitSnapshot): Promise<void> {
  const full = path.join(root, rel);
  const entries = await readdir(full, { withFileTypes: true }).catch(() => null);
  if (entries === null) {
    const content = await readFile(full).catch(() => null);
    if (content !== null) into.set(rel, content);
    return;
  }
  for (const entry of entries) await walk(root, path.posix.join(rel, entry.name), into);
}

export async function snapshotGit(ws: GitWorkspace): Promise<GitSnapshot> {
  const snapshot: GitSnapshot = new Map();
  for (const rel of GUARDED) await walk(ws.gitDir, rel, snapshot);
  return snapshot;
}

/** Puts `.git` back as the snapshot had it; returns what had changed, as `.git/<path>` changes. */
export async function restoreGit(ws: GitWorkspace, before: GitSnapshot): Promise<FileChange[]> {
  const now = await snapshotGit(ws);
  const changes: FileChange[] = [];
  for (const [rel, content] of now) {
    const was = before.get(rel);
    if (was === undefined) {
      changes.push({ path: `.git/${rel}`, status: 'added' });
      await rm(path.join(ws.gitDir, rel), { force: true });
    } else if (!was.equals(content)) {
      changes.push({ path: `.git/${rel}`, status: 'modified' });
      await writeFile(path.join(ws.gitDir, rel), was);
    }
  }
  for (const [rel, content] of before) {
    if (now.has(rel)) continue;
    changes.push({ path: `.git/${rel}`, status: 'deleted' });
    await mkdir(path.dirname(path.join(ws.gitDir, rel)), { recursive: true });
    await writeFile(path.join(ws.gitDir, rel), content);
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : 1));
}
