/**
 * Which node-pg-migrate applies the migrations: the project's own installed copy when it has one
 * (so a check applies exactly what its deploy applies: 7.x and 9 render some index options
 * differently); else the exact version its lockfile pins, installed once into a cache; else the
 * one bundled with Consort. The version that ran goes into the report.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { runner as bundledRunner } from 'node-pg-migrate';
import { z } from 'zod';
import { ConsortError } from '../core/errors.js';
import { pinnedDependency } from '../tools/pinned-versions.js';
import { cachedEngine, lockedVersion } from './engine-pin.js';
import { loadProjectRunner, type Runner } from './engine-load.js';
import { migrationsPackage, projectRequire, type MigrationsPackage } from './project-packages.js';

export { loadProjectRunner, type Runner };

export interface MigrationEngine {
  runner: Runner;
  version: string;
  /** `project`: the workspace's node_modules; `lockfile`: the version its lockfile pins, from the cache; `bundled`: Consort's own. */
  source: 'project' | 'lockfile' | 'bundled';
  /** The package directory it was loaded from. */
  dir: string;
  /**
   * `bundled` only: the project installed node-pg-migrate too, and its copy is this one (npm
   * put one copy for both at the top of node_modules). It runs as the bundled one; the report
   * calls it the project's, as that is what the person who installed it asked for.
   */
  sharedWithProject?: true;
  /** The project's copy: its entry file (it is imported only where it runs, in a child process). */
  entry?: string;
  /** The project's TypeScript loader, registered where the migrations run (ts-loader.ts). */
  tsLoader?: {
    name: 'tsx' | 'ts-node';
    /** The package that owns the migrations (its tsconfig.json is ts-node's); the workspace in a single-package repository. */
    workspace: string;
    /** Resolved from here (the cache of a lockfile-pinned loader) rather than the workspace. */
    from?: string;
    /** The repository's root, when `workspace` is a package inside it (its hoisted loader counts too). */
    root?: string;
  };
  /**
   * How the project's deploy resolves TypeScript path aliases in the migrations, when its scripts do
   * (deploy-paths.ts): `register`, its `tsconfig-paths` package, registered where the migrations run
   * as the TypeScript loader is (ts-register.ts), resolved like `tsLoader`; `runner`, node-pg-migrate
   * 9's `tsconfigPaths` option (runner.ts).
   */
  tsconfigPaths?: {
    via: 'register' | 'runner';
    /**
     * The tsconfig they read, relative to the tree's root; undefined: the tree's (TreeSettings.tsconfig).
     * In the migration child, once the tree is known, `runner`'s is that file's absolute path (apply-child.ts).
     */
    tsconfig?: string;
    /** `register`: the package that owns the migrations, where the child resolves tsconfig-paths from (as `tsLoader`). */
    workspace?: string;
    from?: string;
    root?: string;
  };
}

const PackageJson = z.object({ name: z.string(), version: z.string() });

async function packageAt(dir: string): Promise<z.infer<typeof PackageJson> | undefined> {
  const text = await readFile(path.join(dir, 'package.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = PackageJson.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : undefined;
}

/** The package root above a resolved entry file. */
async function packageRoot(entry: string): Promise<string | undefined> {
  for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if ((await packageAt(dir))?.name === 'node-pg-migrate') return dir;
  }
  return undefined;
}

let bundled: MigrationEngine | undefined;

export async function bundledEngine(): Promise<MigrationEngine> {
  if (bundled) return bundled;
  let dir = '';
  try {
    dir = (await packageRoot(createRequire(import.meta.url).resolve('node-pg-migrate'))) ?? '';
  } catch {
    // Inside the bundled Action there is no node_modules: the runner is in dist/index.js itself.
  }
  const version = (dir ? (await packageAt(dir))?.version : undefined) ?? pinnedDependency('node-pg-migrate');
  bundled = { runner: bundledRunner, version, source: 'bundled', dir };
  return bundled;
}

export interface ResolveEngineOptions {
  /**
   * `migrations.dir`, relative to the workspace: the package that owns it (migrationsPackage) is
   * the one whose node-pg-migrate and lockfile count. Default: the workspace's own.
   */
  migrationsDir?: string;
  /** For the npm install of a lockfile's version (registry, proxy, CONSORT_TOOLS_DIR). */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

/** The runner of the package installed at `dir` (its entry file resolved as Node would). */
async function engineAt(dir: string, source: MigrationEngine['source']): Promise<MigrationEngine | undefined> {
  const pkg = await packageAt(dir);
  if (pkg?.name !== 'node-pg-migrate') return undefined;
  const entry = createRequire(path.join(dir, 'package.json')).resolve('node-pg-migrate');
  // The project's code is never imported here (this may be the App's process): the runner loads it
  // where it runs, which for a project's engine is always a child process (isolated.ts).
  const runner = (async (options) => (await loadProjectRunner(entry))(options)) as Runner;
  return { runner, version: pkg.version, source, dir, entry };
}

/** The entry file of the project's installed node-pg-migrate (see projectRequire for which is the project's). */
async function installedEntry(at: MigrationsPackage): Promise<string | undefined> {
  try {
    return (await projectRequire(at, 'node-pg-migrate'))?.resolve('node-pg-migrate');
  } catch {
    return undefined; // installed but unloadable: treated as not installed
  }
}

/**
 * The project's node-pg-migrate: the installed copy of the package that owns the migrations (in a
 * monorepo, `packages/db` for `packages/db/migrations`) when it has one, else the exact version
 * its lockfile pins (installed once into the cache), else the bundled one.
 */
export async function resolveEngine(workspace: string, options: ResolveEngineOptions = {}): Promise<MigrationEngine> {
  const mine = await bundledEngine();
  const owner = await migrationsPackage(workspace, options.migrationsDir);
  const entry = await installedEntry(owner);
  const dir = entry === undefined ? undefined : await packageRoot(entry);
  if (dir !== undefined) {
    if (mine.dir !== '' && path.resolve(dir) === path.resolve(mine.dir)) return { ...mine, sharedWithProject: true };
    return (await engineAt(dir, 'project')) ?? mine;
  }
  const locked = await lockedVersion(owner);
  if (locked === undefined || locked.version === mine.version) return mine;
  const cached = await engineAt(await cachedEngine(locked.version, options), 'lockfile');
  if (!cached)
    throw new ConsortError(
      'tools-unavailable',
      `The node-pg-migrate ${locked.version} installed for ${locked.lockfile} has no runner Consort can call.`,
    );
  return cached;
}

export function describeEngine(e: Pick<MigrationEngine, 'version' | 'source' | 'sharedWithProject'>): string {
  const from = {
    project: "the project's",
    lockfile: "the version the project's lockfile pins",
    bundled: 'bundled with Consort',
  }[e.source];
  const shared = e.sharedWithProject ? "the project's, the same copy Consort uses" : undefined;
  return `node-pg-migrate ${e.version} (${shared ?? from})`;
}
