/**
 * The adapters every shell on this machine hands the lanes — git, child processes, the clock,
 * node-pg-migrate, Squawk and the catalog reader — built in one place, so the CLI, the Action and
 * the App cannot drift apart. Each composition root adds what is its own: the log, the branch
 * provider, GitHub.
 */
import { localGitRepo } from '../git/repo.js';
import { squawkLinter } from '../lint/squawk.js';
import { nodePgMigrate } from '../migrations/runner.js';
import type { Clock } from '../ports/clock.js';
import type { GitRepo } from '../ports/git.js';
import type { Linter } from '../ports/linter.js';
import type { MigrationRunner } from '../ports/migration-runner.js';
import type { ProcessRunner } from '../ports/process.js';
import type { SchemaReader } from '../ports/schema-reader.js';
import { localProcessRunner } from '../process/runner.js';
import { pgSchemaReader } from '../schema/reader.js';
import { systemClock } from './clock.js';

export interface LocalAdapters {
  git: GitRepo;
  processes: ProcessRunner;
  clock: Clock;
  linter: Linter;
  schemas: SchemaReader;
  migrations: MigrationRunner;
}

export const localAdapters: LocalAdapters = {
  git: localGitRepo,
  processes: localProcessRunner,
  clock: systemClock,
  linter: squawkLinter,
  schemas: pgSchemaReader,
  migrations: nodePgMigrate,
};
