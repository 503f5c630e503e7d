/**
 * The CLI's composition root for the lanes: the one place its adapters are built — git, the
 * process runner, the clock, the migration runner and linter, the schema reader, and a log whose lines go to stderr (stdout is the command's result).
 * Loaded when a command runs (a dynamic import), never for --help: it loads the adapters.
 */
import type { AgentBackends } from '../ports/agent-backend.js';
import type { Clock } from '../ports/clock.js';
import type { GitRepo } from '../ports/git.js';
import type { Linter } from '../ports/linter.js';
import type { Log } from '../ports/log.js';
import type { MigrationRunner } from '../ports/migration-runner.js';
import type { ProcessRunner } from '../ports/process.js';
import type { SchemaReader } from '../ports/schema-reader.js';
import type { Workspace } from '../ports/workspace.js';
import { localAdapters } from '../runtime/local-adapters.js';
import { lineLog } from '../runtime/log.js';
import type { CliContext } from './context.js';

export interface CliPorts {
  git: GitRepo;
  processes: ProcessRunner;
  clock: Clock;
  log: Log;
  linter: Linter;
  schemas: SchemaReader;
  migrations: MigrationRunner;
}

export function cliPorts(c: Pick<CliContext, 'io' | 'env'>): CliPorts {
  const err = (line: string) => c.io.err(line);
  return {
    ...localAdapters,
    // CONSORT_DEBUG=1 shows the lanes' debug lines too.
    log: lineLog(err, c.env.CONSORT_DEBUG === '1' ? { debug: err } : {}),
  };
}

export interface TddAdapters {
  /** The checkout the command runs in. */
  workspace: Workspace;
  processes: ProcessRunner;
  agents: AgentBackends;
  git: GitRepo;
  migrations: MigrationRunner;
  schemas: SchemaReader;
}

/** The TDD lane's adapters on this machine (loaded lazily, as the lane is, to keep start-up small). */
export async function tddAdapters(c: CliContext): Promise<TddAdapters> {
  const [{ localWorkspaces }, { localAgentBackends }] = await Promise.all([
    import('../git/local-workspace.js'),
    import('../agents/backends.js'),
  ]);
  return {
    workspace: await localWorkspaces.open(c.root),
    processes: localAdapters.processes,
    agents: localAgentBackends,
    git: localAdapters.git,
    migrations: localAdapters.migrations,
    schemas: localAdapters.schemas,
  };
}
