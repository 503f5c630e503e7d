/**
 * The tests' composition root for the TDD lane: the adapters a shell would build (a git checkout on
 * this machine, the local process runner, every shipped agent backend), built once.
 */
import { localAgentBackends } from '../../src/agents/backends.js';
import { localWorkspaces } from '../../src/git/local-workspace.js';
import { localGitRepo } from '../../src/git/repo.js';
import { nodePgMigrate } from '../../src/migrations/runner.js';
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
