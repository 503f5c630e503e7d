/**
 * The pairing service: for a git branch, the database branch it works against. Found through the
 * catalog's `gitBranch`, created on first use from the branch the git branch was created from (or
 * the root), with the working tree's pending migrations applied and, when forked from the root,
 * the configured seed. Switching back to a git branch reuses its database branch as it is (pending
 * migrations are still applied, so a pull that brings migrations reaches the database).
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { migrationEnv } from '../core/child-env.js';
import type { ConsortConfig } from '../config/schema.js';
import { ConsortError, isConsortError } from '../core/errors.js';
import { runSeed } from '../lanes/check/baseline.js';
import { migrationPlacement } from '../migrations/placement.js';
import { nodePgMigrate, type ApplyResult } from '../migrations/runner.js';
import { runEngine, type RunEngine, type UsedEngine } from '../migrations/run-engine.js';
import { localProcessRunner } from '../process/runner.js';
import type { BranchMode, BranchProvider, BranchRecord } from '../ports/branch-provider.js';
import { pairParent, pairTarget, type PairingRules } from './naming.js';

export interface PairRequest {
  provider: BranchProvider;
  config: ConsortConfig;
  /** The working tree (migrations and the seed file are read from it). */
  root: string;
  gitBranch: string;
  /** The git branch `gitBranch` was created from; its database branch becomes the parent. */
  from?: string;
  /** Apply the working tree's pending migrations (default true). */
  migrate?: boolean;
  /** Why the working tree's migrations are not `gitBranch`'s (another branch is checked out): none are applied, and this is said. */
  notThisBranch?: string;
  /** The allow-listed environment a seed command runs with (and an npm install of a lockfile-pinned node-pg-migrate). */
  env: NodeJS.ProcessEnv;
}

export type PairOutcome = 'created' | 'reused' | 'root';

export interface MigrationSummary {
  applied: string[];
  failed: { name: string | null; file: string | null; message: string } | null;
  /** The node-pg-migrate that applied them (the project's, as its deploy): null when none ran. */
  nodePgMigrate: UsedEngine | null;
  /** Why the working tree's migrations were not applied (another git branch is checked out, no folder); null when they were looked at or --no-migrate. */
  skipped: string | null;
}

export interface PairResult {
  gitBranch: string;
  branch: BranchRecord;
  outcome: PairOutcome;
  /** Contains the password where the provider uses one: mask it before showing. */
  url: string;
  mode: BranchMode;
  migrations: MigrationSummary;
  seeded: boolean;
  durationMs: number;
}

export function pairingRules(config: ConsortConfig): PairingRules {
  return { root: config.database.parent, rootGitBranches: config.pairing.rootGitBranches };
}

async function migrationsDir(config: ConsortConfig, root: string): Promise<string | undefined> {
  const dir = path.join(root, config.migrations.dir);
  return access(dir).then(
    () => dir,
    () => undefined,
  );
}

/** The working tree's migrations folder to apply, or why there is none (null: `--no-migrate`, nothing to say). */
async function migrationsToApply(request: PairRequest): Promise<{ dir: string } | { skipped: string | null }> {
  if (request.migrate === false) return { skipped: null };
  if (request.notThisBranch !== undefined) return { skipped: request.notThisBranch };
  const dir = await migrationsDir(request.config, request.root);
  // No folder is nothing to apply, and most likely migrations.dir naming the wrong one: said, not silent.
  return dir !== undefined
    ? { dir }
    : {
        skipped: `there is no migrations folder ${request.config.migrations.dir} (migrations.dir in the Consort configuration)`,
      };
}

function summarize(result: ApplyResult | undefined, engine: RunEngine, skipped: string | null): MigrationSummary {
  const nodePgMigrate = result === undefined ? null : engine.used();
  if (result === undefined) return { applied: [], failed: null, nodePgMigrate, skipped };
  const applied = result.applied.map((m) => m.name);
  if (result.ok) return { applied, failed: null, nodePgMigrate, skipped: null };
  const f = result.failed;
  return {
    applied,
    failed: { name: f.name ?? null, file: f.file ?? null, message: f.error.message },
    nodePgMigrate,
    skipped: null,
  };
}

/** With the project's own node-pg-migrate (and TypeScript loader), as its deploy and `consort check` apply them. */
async function migrate(
  url: string,
  request: PairRequest,
  engine: RunEngine,
  todo: { dir: string } | { skipped: string | null },
): Promise<ApplyResult | undefined> {
  if (!('dir' in todo)) return undefined;
  return nodePgMigrate.apply({
    databaseUrl: url,
    dir: todo.dir,
    relativeTo: request.root,
    direction: 'up',
    ...migrationPlacement(request.config.migrations),
    engine: await engine.forDir(todo.dir),
    env: migrationEnv(request.env, [request.config.suite.env], request.config.suite.passEnv),
  });
}

/** The database branch paired with `gitBranch`, if there is one yet (no side effects). */
export async function findPaired(
  provider: BranchProvider,
  config: ConsortConfig,
  gitBranch: string,
): Promise<BranchRecord | undefined> {
  const branches = await provider.list();
  const target = pairTarget(gitBranch, branches, pairingRules(config));
  return target.kind === 'new' ? undefined : branches.find((b) => b.name === target.name);
}

export async function pair(request: PairRequest): Promise<PairResult> {
  const started = performance.now();
  const { provider, config, gitBranch } = request;
  const rules = pairingRules(config);
  const branches = await provider.list();
  const target = pairTarget(gitBranch, branches, rules);
  let outcome: PairOutcome = target.kind === 'new' ? 'created' : target.kind === 'root' ? 'root' : 'reused';
  let applied: ApplyResult | undefined;
  let seeded = false;
  let branch: BranchRecord;
  // Resolved once for the pairing (a lockfile-pinned version is installed into the tools cache once).
  const engine = runEngine(nodePgMigrate, request.root, { migrationsDir: config.migrations.dir, env: request.env });
  const todo = await migrationsToApply(request);

  if (target.kind === 'new') {
    const parent = pairParent(request.from, branches, rules);
    try {
      branch = await provider.create({
        name: target.name,
        parent,
        gitBranch,
        // Forked and initialised before anyone sees it: a second `pair` racing this one waits, then reuses it.
        prepare: async (url) => {
          applied = await migrate(url, request, engine, todo);
          // The seed is data for an empty root; a branch forked from a paired branch already has it.
          if (parent === rules.root && (applied === undefined || applied.ok))
            seeded = await runSeed(config, request.root, url, request.env, localProcessRunner);
        },
      });
    } catch (e) {
      const raced = isConsortError(e, 'branch-exists') ? await provider.get(target.name) : undefined;
      if (raced?.gitBranch !== gitBranch) throw e;
      [branch, outcome] = [raced, 'reused'];
      applied = await migrate(await provider.connectionUri(branch.name), request, engine, todo);
    }
  } else {
    const found = branches.find((b) => b.name === target.name);
    if (!found) {
      throw new ConsortError('branch-not-found', `The root branch "${target.name}" does not exist.`, {
        hint: 'Check database.parent in the Consort configuration, or create it with `consort branch create`.',
      });
    }
    branch = found;
    applied = await migrate(await provider.connectionUri(branch.name), request, engine, todo);
  }
  const [url, caps] = await Promise.all([provider.connectionUri(branch.name), provider.capabilities()]);
  return {
    gitBranch,
    branch,
    outcome,
    url,
    mode: caps.mode,
    migrations: summarize(applied, engine, 'skipped' in todo ? todo.skipped : null),
    seeded,
    durationMs: Math.round(performance.now() - started),
  };
}
