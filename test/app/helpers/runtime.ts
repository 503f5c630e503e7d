/** App runtimes for tests: the real store, queue and jobs, with short leases and fast polling. */
import { localAdapters } from '../../../src/runtime/local-adapters.js';
import type { GitHubPort } from '../../../src/ports/github.js';
import { jobSettings, silentLog, type AppLog, type JobSettings, type Lane } from '../../../app/jobs/deps.js';
import type { RepoProviders } from '../../../app/providers.js';
import { startRuntime, type AppRuntime } from '../../../app/runtime.js';
import { suiteEnvironment } from '../../../app/settings.js';
import type { BranchProvider } from '../../../src/ports/branch-provider.js';

export interface TestRuntimeOptions {
  storeUrl: string;
  github(installationId: number): Promise<GitHubPort>;
  providers: RepoProviders;
  lane?: Lane;
  jobs?: Partial<JobSettings>;
  workers?: boolean;
  /** Where the App logs; nowhere unless given. */
  log?: AppLog;
}

export function startTestRuntime(o: TestRuntimeOptions): Promise<AppRuntime> {
  return startRuntime({
    storeUrl: o.storeUrl,
    github: o.github,
    providers: o.providers,
    log: o.log ?? silentLog,
    ...(o.lane ? { lane: o.lane } : {}),
    lanePorts: localAdapters,
    ...(o.workers === false ? { workers: false } : {}),
    // The sweep is run by hand in tests; its cron is set to once a year.
    queue: {
      quickConcurrency: 2,
      runConcurrency: 2,
      runExpireSeconds: 600,
      sweepCron: '0 0 1 1 *',
      pollingSeconds: 0.5,
    },
    jobs: jobSettings({
      leaseSeconds: 5,
      heartbeatMs: 150,
      busyPollMs: 100,
      suiteEnv: suiteEnvironment(process.env),
      toolVersion: 'test',
      ...o.jobs,
    }),
  });
}

/** Branch providers for tests whose lane is a stand-in: nothing exists, nothing may be created. */
export function noBranches(): RepoProviders {
  const refuse = async (): Promise<never> => {
    throw new Error('this test makes no branches');
  };
  const provider: BranchProvider = {
    name: 'local',
    capabilities: async () => ({ provider: 'local', mode: 'copy', modeReason: 'stand-in', serverVersion: '18.0' }),
    get: async () => undefined,
    list: async () => [],
    delete: async () => [],
    gc: async () => ({ deleted: [], repaired: [], kept: [] }),
    create: refuse,
    ensure: refuse,
    reset: refuse,
    connectionUri: refuse,
    close: async () => undefined,
  };
  return { forRepository: async () => provider, close: async () => undefined };
}
