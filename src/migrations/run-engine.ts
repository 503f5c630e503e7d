/**
 * The node-pg-migrate (and TypeScript loader) one run applies a project's migrations with, chosen
 * as the check lane's plan chooses them (resolveEngine, prepareTypeScript), for every other place
 * that applies them: the TDD lane (baseline, sandboxes, proofs), pairing, the `openai` agent's
 * suite tool. Resolved once per run, on first use: resolution may install a lockfile-pinned
 * version into the tools cache. The TypeScript loader is looked for the first time the migrations
 * include TypeScript (an agent may write the first one mid-run), then kept.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { MigrationRunner } from '../ports/migration-runner.js';
import { describeEngine, type MigrationEngine } from './engine.js';
import { ConsortError } from '../core/errors.js';
import { installedIn } from './project-packages.js';
import {
  describeLoader,
  describePathAliases,
  prepareTypeScript,
  type PathAliasLoader,
  type TypeScriptLoader,
} from './ts-loader.js';

const TS_FILE = /\.(?:ts|mts|cts)$/;

export interface RunEngineOptions {
  /** `migrations.dir`, relative to the workspace: the package that owns it decides (migrationsPackage). */
  migrationsDir: string;
  /** For an npm install of a lockfile's version (registry, proxy, CONSORT_TOOLS_DIR). */
  env?: NodeJS.ProcessEnv;
  /** Told once what applies the migrations (and again when a TypeScript loader joins it), and npm installs. */
  log?: (line: string) => void;
  /**
   * A copy of the workspace's node_modules no agent can change (the TDD lane's pristine install):
   * the project's engine and loader are loaded from it, not from the work tree's install, which an
   * agent's turn may patch unseen (node_modules is ignored), whichever package owns the migrations.
   * One installed elsewhere in the work tree (a monorepo package's own node_modules, which has no
   * such copy) is refused (onPristine).
   */
  pristineModules?: string;
}

/** What applied the migrations, as the check report's `nodePgMigrate` says it. */
export interface UsedEngine {
  version: string;
  source: MigrationEngine['source'];
  /** `bundled` only: the project's own install is this very copy (engine.ts), so it is named the project's. */
  sharedWithProject?: true;
  typescript?: TypeScriptLoader;
  pathAliases?: PathAliasLoader;
}

export interface RunEngine {
  /** The engine for the migrations in `dir` (the workspace's, an experiment's worktree, a proof's copy). */
  forDir(dir: string): Promise<MigrationEngine>;
  /** The engine for these migration files (names or paths). */
  forFiles(files: readonly string[]): Promise<MigrationEngine>;
  /** What applies them, once resolved (null before). */
  used(): UsedEngine | null;
}

export function describeUsed(used: UsedEngine): string {
  return `${describeEngine(used)}${used.typescript ? `, ${describeLoader(used.typescript)}` : ''}${used.pathAliases ? `, ${describePathAliases(used.pathAliases)}` : ''}`;
}

const inside = (dir: string, p: string): string | undefined => {
  const rel = path.relative(dir, p);
  return rel === '' || rel.startsWith('..') || path.isAbsolute(rel) ? undefined : rel;
};

/** A package the run would load from the work tree, where an agent may have changed it unseen. */
function unprotected(name: string, dir: string, workspace: string, inCopy: boolean): ConsortError {
  const where = path.relative(workspace, dir) || dir;
  return inCopy
    ? new ConsortError(
        'config',
        `${name} (${where}) is not in the run's pristine copy of node_modules: it was installed after the run took the copy, and an agent may have put it there.`,
        { hint: 'Install the dependencies before the run starts (npm ci), then run it again.' },
      )
    : new ConsortError(
        'config',
        `${name} is installed in ${where}, inside the work tree, where an agent can change it unseen: the TDD lane loads the project's packages only from its pristine copy of the root's node_modules.`,
        {
          hint: `Install ${name} at the repository root instead (hoisted: give the package the same version as the root, or remove its own copy, and run npm install there).`,
        },
      );
}

/**
 * The engine with the project's packages loaded from `modules` (the pristine copy of
 * `workspace/node_modules`) instead of the work tree, which an agent's turn may patch unseen
 * (node_modules is ignored). One found anywhere else in the work tree (a monorepo package's own
 * node_modules, of which there is no copy) or missing from the copy is refused, never loaded.
 */
export async function onPristine(
  engine: MigrationEngine,
  workspace: string,
  modules: string,
): Promise<MigrationEngine> {
  const installed = path.join(workspace, 'node_modules');
  let out = engine;
  // Placed already (the loader's pass places the engine again): nothing to move.
  if (engine.source === 'project' && inside(modules, engine.dir) === undefined) {
    const dir = inside(installed, engine.dir);
    const entry = engine.entry === undefined ? undefined : inside(installed, engine.entry);
    if (dir === undefined || entry === undefined || !existsSync(path.join(modules, entry)))
      throw unprotected('node-pg-migrate', engine.dir, workspace, dir !== undefined);
    out = { ...out, dir: path.join(modules, dir), entry: path.join(modules, entry) };
  }
  // Where the migration child would resolve each from (projectRequire): the package's own first.
  const fromCopy = async (name: string, loader: { workspace: string; root?: string }): Promise<boolean> => {
    const at = await installedIn({ dir: loader.workspace, root: loader.root ?? loader.workspace }, name);
    const own = at !== undefined && path.resolve(at) === path.resolve(workspace);
    if (at !== undefined && (!own || !existsSync(path.join(modules, name, 'package.json'))))
      throw unprotected(name, path.join(at, 'node_modules', name), workspace, own);
    return own;
  };
  const loader = engine.tsLoader;
  if (loader && loader.from === undefined && (await fromCopy(loader.name, loader)))
    out = { ...out, tsLoader: { ...loader, from: path.dirname(modules) } };
  const paths = engine.tsconfigPaths;
  if (
    paths?.via === 'register' &&
    paths.workspace !== undefined &&
    paths.from === undefined &&
    (await fromCopy('tsconfig-paths', { ...paths, workspace: paths.workspace }))
  )
    out = { ...out, tsconfigPaths: { ...paths, from: path.dirname(modules) } };
  return out;
}

export function runEngine(
  runner: Pick<MigrationRunner, 'resolveEngine'>,
  workspace: string,
  options: RunEngineOptions,
): RunEngine {
  const { migrationsDir, env, log } = options;
  let used: UsedEngine | null = null;
  // Whoever owns the migrations: a monorepo package's engine hoisted to the root is in the copy too.
  const place = async (e: MigrationEngine): Promise<MigrationEngine> =>
    options.pristineModules === undefined ? e : onPristine(e, workspace, options.pristineModules);
  const say = (next: UsedEngine): void => {
    used = next;
    log?.(`migrations are applied with ${describeUsed(next)}`);
  };
  // A failure is not kept: the next apply tries again, and reports it again.
  let engine: Promise<MigrationEngine> | undefined;
  const base = (): Promise<MigrationEngine> =>
    (engine ??= (async () => {
      const e = await place(
        await runner.resolveEngine(workspace, { migrationsDir, ...(env ? { env } : {}), ...(log ? { log } : {}) }),
      );
      say({ version: e.version, source: e.source, ...(e.sharedWithProject ? { sharedWithProject: true } : {}) });
      return e;
    })().catch((error: unknown) => {
      engine = undefined;
      throw error;
    }));
  let typed: Promise<MigrationEngine> | undefined;
  const withLoader = (files: readonly string[]): Promise<MigrationEngine> =>
    (typed ??= (async () => {
      const e = await base();
      const ts = await prepareTypeScript(e, workspace, files, {
        migrationsDir,
        ...(env ? { env } : {}),
        ...(log ? { log } : {}),
      });
      ts.dispose(); // the loader is registered where the migrations run, never here
      const placed = await place(ts.engine);
      say({
        version: placed.version,
        source: placed.source,
        ...(placed.sharedWithProject ? { sharedWithProject: true } : {}),
        ...(ts.loader ? { typescript: ts.loader } : {}),
        ...(ts.paths ? { pathAliases: ts.paths } : {}),
      });
      return placed;
    })().catch((error: unknown) => {
      typed = undefined;
      throw error;
    }));
  const forFiles = (files: readonly string[]): Promise<MigrationEngine> =>
    files.some((f) => TS_FILE.test(f)) ? withLoader(files) : (typed ?? base());
  return {
    forFiles,
    async forDir(dir) {
      return forFiles(await readdir(dir).catch(() => [] as string[]));
    },
    used: () => used,
  };
}
