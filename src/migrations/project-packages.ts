/**
 * Which installed packages are the project's: those in the workspace's node_modules, or in one
 * above it up to the repository root (a monorepo's hoisted install) — never above that. A
 * node_modules elsewhere on the machine (a stray /tmp/node_modules above the App's checkout) is
 * not the project's, though Node's own resolution would walk up into it.
 */
import { access } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * Where a check writes the migrations it runs when the project has a node_modules: under it, so
 * their imports of packages resolve as in the project (lanes/check/workdir.ts). Loaders that skip
 * everything in node_modules (ts-node) are told these files are the project's.
 */
export const SCRATCH_IN_MODULES = ['.cache', 'consort'] as const;

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

/** The workspace and its ancestors up to the repository root; the workspace alone outside a repository. */
async function projectDirs(workspace: string): Promise<string[]> {
  const dirs: string[] = [];
  for (let d = path.resolve(workspace); ; d = path.dirname(d)) {
    dirs.push(d);
    if (await exists(path.join(d, '.git'))) return dirs;
    if (path.dirname(d) === d) return dirs.slice(0, 1);
  }
}

/**
 * A `require` that resolves from the directory holding the project's `name`, or undefined when
 * the project has none installed.
 */
export async function projectRequire(workspace: string, name: string): Promise<NodeJS.Require | undefined> {
  for (const d of await projectDirs(workspace)) {
    if (await exists(path.join(d, 'node_modules', ...name.split('/'), 'package.json')))
      return createRequire(path.join(d, 'package.json'));
  }
  return undefined;
}
