/**
 * The App's core, assembled: the store (migrated), the queue, the intake the webhook handlers hand
 * off to, and the workers that run the jobs. Nothing here knows Probot: the shell passes in how to
 * reach GitHub for an installation. Tests assemble the same runtime with stand-ins for the parts
 * they are not about, and several runtimes on one store behave like several App processes.
 */
import { runCheck } from '../lanes/check/run.js';
import { createIntake, type Intake } from './intake.js';
import type { GitHubApi } from './github.js';
import { handleAnnounce } from './jobs/announce.js';
import { handleCommand } from './jobs/command.js';
import type { AppLog, JobDeps, JobSettings, Lane } from './jobs/deps.js';
import { handleRunJob } from './jobs/run-job.js';
import { sweepAll } from './jobs/sweep.js';
import type { RepoProviders } from './providers.js';
import { startQueue, type QueueHandlers, type QueueRuntime, type QueueSettings } from './queue.js';
import { migrateStore, openStore, type Store } from './store/db.js';

export interface RuntimeOptions {
  storeUrl: string;
  queue: Omit<QueueSettings, 'url' | 'onError'>;
  providers: RepoProviders;
  github(installationId: number): Promise<GitHubApi>;
  jobs: JobSettings;
  log: AppLog;
  /** The check lane (default: the real one). */
  lane?: Lane;
  /** Start the workers (default true); false gives a process that only takes webhooks. */
  workers?: boolean;
}

export interface AppRuntime {
  store: Store;
  queue: QueueRuntime;
  intake: Intake;
  deps: JobDeps;
  /** Quick health probe: the store answers. */
  healthy(): Promise<boolean>;
  stop(options?: { graceful?: boolean }): Promise<void>;
}

export function jobHandlers(deps: JobDeps): QueueHandlers {
  return {
    quick: (job) => (job.kind === 'announce' ? handleAnnounce(deps, job) : handleCommand(deps, job.command)),
    run: (job) => handleRunJob(deps, job),
    sweep: () => sweepAll(deps),
  };
}

export async function startRuntime(options: RuntimeOptions): Promise<AppRuntime> {
  await migrateStore(options.storeUrl);
  const store = openStore(options.storeUrl, { max: options.queue.runConcurrency * 2 + options.queue.quickConcurrency + 4 });
  let queue: QueueRuntime;
  try {
    queue = await startQueue({ ...options.queue, url: options.storeUrl, onError: (e) => options.log.error('queue error', { error: e.message }) });
  } catch (e) {
    await store.close();
    throw e;
  }
  const deps: JobDeps = {
    store, queue, github: options.github, providers: options.providers, lane: options.lane ?? runCheck, settings: options.jobs, log: options.log,
  };
  if (options.workers !== false) await queue.startWorkers(jobHandlers(deps));
  let stopped = false;
  return {
    store,
    queue,
    intake: createIntake(store, queue),
    deps,
    healthy: () => store.pool.query('SELECT 1').then(() => true, () => false),
    async stop(stopOptions = {}) {
      if (stopped) return;
      stopped = true;
      await queue.stop({ graceful: stopOptions.graceful ?? true });
      await store.close();
    },
  };
}
