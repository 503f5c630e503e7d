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
import { migrationsPackage } from './project-packages.js';
import { describeLoader, prepareTypeScript, type TypeScriptLoader } from './ts-loader.js';

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
   * agent's turn may patch unseen (node_modules is ignored). Only when the workspace owns the
   * migrations (a monorepo package's own node_modules has no such copy).
   */
  pristineModules?: string;
}

/** What applied the migrations, as the check report's `nodePgMigrate` says it. */
export interface UsedEngine {
  version: string;
  source: MigrationEngine['source'];
  typescript?: TypeScriptLoader;
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
  return `${describeEngine(used)}${used.typescript ? `, ${describeLoader(used.typescript)}` : ''}`;
}

const inside = (dir: string, p: string): string | undefined => {
  const rel = path.relative(dir, p);
  return rel === '' || rel.startsWith('..') || path.isAbsolute(rel) ? undefined : rel;
};

/** The engine with the project's packages loaded from `modules` instead of `workspace/node_modules`, where it holds them. */
export function onPristine(engine: MigrationEngine, workspace: string, modules: string): MigrationEngine {
  const installed = path.join(workspace, 'node_modules');
  let out = engine;
  const dir = inside(installed, engine.dir);
  const entry = engine.entry === undefined ? undefined : inside(installed, engine.entry);
  if (engine.source === 'project' && dir !== undefined && entry !== undefined && existsSync(path.join(modules, entry)))
    out = { ...out, dir: path.join(modules, dir), entry: path.join(modules, entry) };
  const loader = engine.tsLoader;
  if (loader && loader.from === undefined && existsSync(path.join(modules, loader.name, 'package.json')))
    out = { ...out, tsLoader: { ...loader, from: path.dirname(modules) } };
  return out;
}

export function runEngine(
  runner: Pick<MigrationRunner, 'resolveEngine'>,
  workspace: string,
  options: RunEngineOptions,
): RunEngine {
  const { migrationsDir, env, log } = options;
  let used: UsedEngine | null = null;
  let pristine: Promise<string | undefined> | undefined;
  /** The pristine copy, when the workspace itself owns the migrations. */
  const modules = () =>
    (pristine ??=
      options.pristineModules === undefined
        ? Promise.resolve(undefined)
        : migrationsPackage(workspace, migrationsDir).then((p) =>
            p.dir === path.resolve(workspace) ? options.pristineModules : undefined,
          ));
  const place = async (e: MigrationEngine): Promise<MigrationEngine> => {
    const m = await modules();
    return m === undefined ? e : onPristine(e, workspace, m);
  };
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
      say({ version: e.version, source: e.source });
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
      say({ version: placed.version, source: placed.source, ...(ts.loader ? { typescript: ts.loader } : {}) });
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
