/**
 * The two sides a check compares, built from git: a commit's migrations (read with `git ls-tree`,
 * without touching the working tree) and the working tree's. Shared by `consort check` and the
 * Action, which differ only in how they pick the commits.
 */
import path from 'node:path';
import type { ConsortConfig } from '../../config/schema.js';
import { filesAt } from '../../git/repo.js';
import { readMigrationSet } from '../../migrations/files.js';
import type { CheckSide } from './run.js';

export const EMPTY_SIDE: CheckSide = { ref: '(empty)', sha: null, migrations: [] };

/** The migrations directory as it is at `sha`. */
export async function commitSide(root: string, ref: string, sha: string, config: ConsortConfig): Promise<CheckSide> {
  return { ref, sha, migrations: await filesAt(root, sha, config.migrations.dir) };
}

/** The migrations directory as it is on disk (what CI checked out, or uncommitted local work). */
export async function workingTreeSide(root: string, ref: string, sha: string | null, config: ConsortConfig): Promise<CheckSide> {
  const files = await readMigrationSet(path.join(root, config.migrations.dir), { relativeTo: root });
  return { ref, sha, migrations: files.map((f) => ({ file: f.file, content: f.content })) };
}
