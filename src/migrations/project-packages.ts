/**
 * Which installed packages are the project's: those in the node_modules of the package that owns
 * the migrations, or in one above it up to the repository root (a monorepo's hoisted install) —
 * never above that. A node_modules elsewhere on the machine (a stray /tmp/node_modules above the
 * App's checkout) is not the project's, though Node's own resolution would walk up into it.
 */
import { access, lstat, readdir, realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { resolvedInside } from '../core/read-regular.js';

/**
 * Where a check writes the migrations it runs when the project has a node_modules: under it, so
 * their imports of packages resolve as in the project (lanes/check/workdir.ts). Loaders that skip
 * everything in node_modules (ts-node) are told these files are the project's.
 */
export const SCRATCH_IN_MODULES = ['.cache', 'consort'] as const;

/** The package whose dependencies apply a project's migrations. */
export interface MigrationsPackage {
  /** The workspace: the repository's root (or a checkout of it). */
  root: string;
  /**
   * The package that owns the migrations directory: the nearest directory with a package.json above
   * it, never above `root`; `root` itself when there is none (or the directory is outside it). A
   * package.json inside the migrations directory is a marker (`{"type":"commonjs"}`), not its owner.
   */
  dir: string;
}

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

/**
 * The one place that decides which package owns a project's migrations (`migrationsDir`, relative
 * to `root`, as `migrations.dir` says): in a monorepo, `packages/db/migrations` belongs to
 * `packages/db`, whose node-pg-migrate, lockfile and TypeScript loader are the ones its deploy runs.
 */
export async function migrationsPackage(root: string, migrationsDir = '.'): Promise<MigrationsPackage> {
  const top = path.resolve(root);
  const start = path.resolve(top, migrationsDir);
  const rel = path.relative(top, start);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return { root: top, dir: top };
  // From the parent: a marker package.json in the folder itself would make the folder "the package",
  // and the owner's migrate script, TypeScript loader and tsconfig would be lost.
  for (let d = path.dirname(start); d !== top; d = path.dirname(d)) {
    if (await exists(path.join(d, 'package.json'))) return { root: top, dir: d };
  }
  return { root: top, dir: top };
}

/** A workspace, or the package of one, as a MigrationsPackage (a bare directory is its own root). */
export const asPackage = (at: string | MigrationsPackage): MigrationsPackage =>
  typeof at === 'string' ? { root: path.resolve(at), dir: path.resolve(at) } : at;

/**
 * The package's directory and its ancestors up to the root, then the root's up to the repository
 * (the directory holding `.git`); the root alone outside a repository.
 */
async function projectDirs(at: MigrationsPackage): Promise<string[]> {
  const dirs: string[] = [];
  const root = path.resolve(at.root);
  for (let d = path.resolve(at.dir); d !== root && d !== path.dirname(d); d = path.dirname(d)) dirs.push(d);
  for (let d = root; ; d = path.dirname(d)) {
    dirs.push(d);
    if (await exists(path.join(d, '.git'))) return dirs;
    if (path.dirname(d) === d) return dirs.slice(0, dirs.indexOf(root) + 1);
  }
}

/**
 * A `require` that resolves from the directory holding the project's `name`, or undefined when
 * the project has none installed. `at`: the workspace, or the package that owns the migrations.
 */
export async function projectRequire(
  at: string | MigrationsPackage,
  name: string,
): Promise<NodeJS.Require | undefined> {
  const d = await installedIn(at, name);
  return d === undefined ? undefined : createRequire(path.join(d, 'package.json'));
}

/** The directory whose node_modules holds the project's `name` (projectRequire resolves from it), or undefined. */
export async function installedIn(at: string | MigrationsPackage, name: string): Promise<string | undefined> {
  for (const d of await projectDirs(asPackage(at))) {
    if (await exists(path.join(d, 'node_modules', ...name.split('/'), 'package.json'))) return d;
  }
  return undefined;
}

/**
 * The workspace's own packages as its install links them (`node_modules/@acme/shared` →
 * `packages/shared`: npm, yarn and pnpm workspaces), by name, each with its folder relative to the
 * repository: read from the node_modules of the package that owns the migrations and of each
 * folder above it up to the root, the nearest first. Only links that lead into the repository and
 * not into a node_modules folder (an installed package, not one of the workspace's).
 */
export async function workspacePackages(owner: MigrationsPackage): Promise<Map<string, string>> {
  const root = path.resolve(owner.root);
  const found = new Map<string, string>();
  const linksIn = async (modules: string, scope = '') => {
    const entries = await readdir(path.join(modules, scope), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const name = scope === '' ? e.name : `${scope}/${e.name}`;
      if (scope === '' && e.name.startsWith('@') && e.isDirectory()) await linksIn(modules, e.name);
      if (!e.isSymbolicLink() || found.has(name)) continue;
      const real = resolvedInside(root, path.join(modules, name));
      if (real === null) continue;
      const rel = path.relative(await realpath(root), real);
      if (rel.split(path.sep).includes('node_modules')) continue;
      found.set(name, rel.split(path.sep).join('/'));
    }
  };
  for (let d = path.resolve(owner.dir); ; d = path.dirname(d)) {
    const modules = path.join(d, 'node_modules');
    const st = await lstat(modules).catch(() => undefined);
    if (st?.isDirectory() && !st.isSymbolicLink()) await linksIn(modules);
    if (d === root || d === path.dirname(d)) break;
  }
  return found;
}
