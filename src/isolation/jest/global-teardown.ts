/** jest `globalTeardown: 'consort-db/jest/global-teardown'`: return what the run's files did not, stop refilling. */
import { RUN_SPEC_ENV, type StartedRun } from '../run.js';
import { RUN_HANDLE } from './options.js';
import { SHARED_ENV } from '../spec.js';

export default async function globalTeardown(): Promise<void> {
  const handles = globalThis as Record<symbol, StartedRun | undefined>;
  const started = handles[RUN_HANDLE];
  handles[RUN_HANDLE] = undefined;
  delete process.env[RUN_SPEC_ENV];
  delete process.env[SHARED_ENV];
  await started?.stop();
}
