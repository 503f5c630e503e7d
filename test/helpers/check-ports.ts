/** The check lane's ports for tests: the real git, process runner and clock, and a log that keeps nothing unless asked. */
import { localGitRepo } from '../../src/git/repo.js';
import type { CheckPorts } from '../../src/lanes/check/run.js';
import { squawkLinter } from '../../src/lint/squawk.js';
import { nodePgMigrate } from '../../src/migrations/runner.js';
import { pgSchemaReader } from '../../src/schema/reader.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { systemClock } from '../../src/runtime/clock.js';
import { silentLog } from '../../src/runtime/log.js';

export const testPorts: Omit<CheckPorts, 'provider'> = {
  git: localGitRepo,
  processes: localProcessRunner,
  clock: systemClock,
  log: silentLog,
  linter: squawkLinter,
  schemas: pgSchemaReader,
  migrations: nodePgMigrate,
};
