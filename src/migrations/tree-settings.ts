/**
 * Where a tree's migrations load, as the project's deploy loads them in a checkout of that tree:
 * the working directory is the package that owns the migrations (where its migrate script runs),
 * and the TypeScript loader reads the tsconfig.json nearest to it — never one above the tree.
 *
 * Not the migration process's own working directory, which is wherever Consort was started: in the
 * PR lane the pull request's checkout, in the TDD lane the work tree an agent writes. Until
 * 2026-12-05 tsx read the tsconfig there, so a `paths` alias a migration imports by (`lib/*` →
 * `src/*`) loaded the pull request's file into the baseline's migrations (run as the admin), and
 * the work tree's into a proof's; a migration reading a file by a relative path read it there too.
 * Used in the migration process (apply-child.ts): reads files only.
 */
import path from 'node:path';
import { resolvedInside } from '../core/read-regular.js';
import { migrationsPackage } from './project-packages.js';

export interface TreeSettings {
  /** The tree the migrations are applied from (the check's extracted side, a proof's worktree). */
  tree: string;
  /** The package that owns the migrations in that tree: the deploy's working directory. */
  cwd: string;
  /** The tsconfig.json nearest to `cwd`, up to the tree's root (a regular file inside it); undefined when there is none. */
  tsconfig: string | undefined;
}

/** The settings for the migrations in `dir` (absolute) of the tree at `tree` (absolute). */
export async function treeSettings(tree: string, dir: string): Promise<TreeSettings> {
  const top = path.resolve(tree);
  const owner = await migrationsPackage(top, path.relative(top, path.resolve(dir)));
  for (let d = owner.dir; ; d = path.dirname(d)) {
    const found = resolvedInside(top, path.join(d, 'tsconfig.json'));
    if (found !== null) return { tree: top, cwd: owner.dir, tsconfig: found };
    if (d === top || d === path.dirname(d)) break;
  }
  return { tree: top, cwd: owner.dir, tsconfig: undefined };
}
