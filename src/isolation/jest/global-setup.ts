/**
 * jest `globalSetup: 'consort-db/jest/global-setup'`: prepare the migrated, seeded template, warm
 * its pool and keep it filled during the run; hand the workers the run's spec (an environment
 * variable: workers start after the global setup and inherit it).
 */
import { RUN_SPEC_ENV, startTestDatabases, type StartedRun } from '../run.js';
import { SHARED_ENV } from '../spec.js';
import { jestOptions, RUN_HANDLE } from './options.js';
import { hintingErrors } from '../runner-error.js';

interface JestConfigs {
  globalConfig: { maxWorkers?: number; rootDir?: string };
  projectConfig: { testEnvironmentOptions?: Record<string, unknown>; rootDir?: string };
}

export default async function globalSetup(
  globalConfig: JestConfigs['globalConfig'],
  projectConfig: JestConfigs['projectConfig'],
): Promise<void> {
  const started = await hintingErrors(async () => {
    const options = jestOptions(projectConfig?.testEnvironmentOptions);
    return startTestDatabases({
      ...options,
      ...(options.root === undefined && projectConfig?.rootDir ? { root: projectConfig.rootDir } : {}),
      ...(typeof globalConfig?.maxWorkers === 'number' ? { workers: globalConfig.maxWorkers } : {}),
      log: (m) => process.stderr.write(`${m}\n`),
    });
  });
  (globalThis as Record<symbol, StartedRun | undefined>)[RUN_HANDLE] = started;
  if (started.spec) process.env[RUN_SPEC_ENV] = JSON.stringify(started.spec);
  else process.env[SHARED_ENV] = started.envName;
}
