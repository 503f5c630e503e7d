/**
 * The tests' composition root for the TDD lane: the adapters a shell would build (a git checkout on
 * this machine, the local process runner, every shipped agent backend), built once.
 */
import { localAgentBackends } from '../../src/agents/backends.js';
import { loadConfig } from '../../src/config/load.js';
import { createFeature } from '../../src/lanes/tdd/feature.js';
import { runBuildLane } from '../../src/lanes/tdd/index.js';
import type { ConsortConfig } from '../../src/config/schema.js';
import { createBranches, type BranchKit, type Branches } from '../../src/lanes/tdd/database.js';
import type { BranchProvider } from '../../src/ports/branch-provider.js';
import type { MigrationRunner } from '../../src/ports/migration-runner.js';
import { localWorkspaces } from '../../src/git/local-workspace.js';
import { localGitRepo } from '../../src/git/repo.js';
import { nodePgMigrate } from '../../src/migrations/runner.js';
import type { SchemaReader } from '../../src/ports/schema-reader.js';
import type { Workspace } from '../../src/ports/workspace.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { pgSchemaReader } from '../../src/schema/reader.js';

/** The checkout at `dir`, as the lane takes it. */
export const workspaceAt = (dir: string): Promise<Workspace> => localWorkspaces.open(dir);

/** What runBuildLane takes besides the workspace: the process runner, the agent backends, git, the migration runner and the schema reader. */
export const tddAdapters = {
  processes: localProcessRunner,
  agents: localAgentBackends,
  git: localGitRepo,
  migrations: nodePgMigrate,
  schemas: pgSchemaReader,
};

/** The TDD lane's branches (createBranches) on `provider` for the checkout at `dir`, with this machine's adapters. */
export async function laneBranches(o: {
  provider: BranchProvider;
  dir: string;
  config: ConsortConfig;
  baseCommit: string;
  /** Default: the catalog reader (tddAdapters.schemas). */
  schemas?: SchemaReader;
  /** Default: node-pg-migrate (tddAdapters.migrations); its engine resolution unless given one. */
  migrations?: Pick<MigrationRunner, 'apply'> & Partial<Pick<MigrationRunner, 'resolveEngine'>>;
  /** The rest of the kit, over these defaults (env: the test's own). */
  kit?: Partial<BranchKit>;
}): Promise<Branches> {
  return createBranches({
    provider: o.provider,
    config: o.config,
    ws: await workspaceAt(o.dir),
    git: tddAdapters.git,
    migrations: { resolveEngine: tddAdapters.migrations.resolveEngine, ...(o.migrations ?? tddAdapters.migrations) },
    schemas: o.schemas ?? tddAdapters.schemas,
    env: process.env,
    processes: tddAdapters.processes,
    baseCommit: o.baseCommit,
    ...o.kit,
  });
}

/**
 * A new feature `slug` in the checkout at `dir`, run by the lane with headless (proxy) gates on
 * `provider`: what the scripted cheating agents' tests drive. Returns the run's end, its log lines
 * and the feature's name.
 */
export async function runNewFeature(
  dir: string,
  provider: BranchProvider,
  slug: string,
  options: { experiments?: number } = {},
): Promise<{ r: Awaited<ReturnType<typeof runBuildLane>>; lines: string[]; feature: string }> {
  const { config } = await loadConfig(dir);
  const { feature } = await createFeature(await workspaceAt(dir), slug, 'Phone numbers.');
  const lines: string[] = [];
  const r = await runBuildLane({
    workspace: await workspaceAt(dir),
    ...tddAdapters,
    config,
    feature,
    provider,
    env: process.env,
    gateMode: 'proxy',
    ...(options.experiments ? { experiments: options.experiments } : {}),
    log: (l) => lines.push(l),
  });
  return { r, lines, feature };
}
