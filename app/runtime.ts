/**
 * The App's core, assembled: the store (migrated), the queue, the intake the webhook handlers hand
 * off to, and the workers that run the jobs. Nothing here knows Probot: the shell passes in how to
 * reach GitHub for an installation. Tests assemble the same runtime with stand-ins for the parts
 * they are not about, and several runtimes on one store behave like several App processes.
 */
import { check } from '../src/lanes/check/run.js';
import { createIntake, type Intake } from './intake.js';
import type { GitHubPort } from '../src/ports/github.js';
import type { CallContext } from './github-watch.js';
import type { RecordsApi } from './dashboard/github-records.js';
import { handleAnnounce } from './jobs/announce.js';
import { handleIndex } from './jobs/index-records.js';
import { handleCommand } from './jobs/command.js';
import type { AppLog, JobDeps, JobSettings, Lane, LanePorts } from './jobs/deps.js';
import { handleRunJob } from './jobs/run-job.js';
import { sweepAll } from './jobs/sweep.js';
import type { RepoProviders } from './providers.js';
import { startQueue, type JobFailure, type QueueHandlers, type QueueRuntime, type QueueSettings } from './queue.js';
import { migrateStore, openStore, type Store } from './store/db.js';

export interface RuntimeOptions {
  storeUrl: string;
  queue: Omit<QueueSettings, 'url' | 'onError' | 'onJobFailed' | 'onJobDeferred'>;
  providers: RepoProviders;
  /** GitHub as an installation, for the delivery and run in `context` (named in every log line about the calls). */
  github(installationId: number, context?: CallContext): Promise<GitHubPort>;
  jobs: JobSettings;
  log: AppLog;
  /** The check lane (default: the real one). */
  lane?: Lane;
  /** The lane's git, process runner and clock (built by the composition root, app/start.ts). */
  lanePorts: LanePorts;
  /** Start the workers (default true); false gives a process that only takes webhooks. */
  workers?: boolean;
  /** The dashboard is on: index every pushed head's TDD records through this. */
  records?: (installationId: number) => Promise<RecordsApi>;
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
    quick: (job) =>
      job.kind === 'announce'
        ? handleAnnounce(deps, job)
        : job.kind === 'index'
          ? handleIndex(deps, job)
          : handleCommand(deps, job.command),
    run: (job) => handleRunJob(deps, job),
    sweep: () => sweepAll(deps),
  };
}

/** A failed job, with what it was for; the last attempt says that the queue gives up on it. */
function logJobFailure(log: AppLog, f: JobFailure, error: unknown): void {
  const data = (typeof f.data === 'object' && f.data !== null ? f.data : {}) as {
    kind?: string;
    runId?: number;
    command?: { deliveryId?: string };
  };
  const fields = {
    queue: f.queue,
    job: f.jobId,
    ...(data.kind ? { kind: data.kind } : {}),
    ...(data.runId !== undefined ? { runId: data.runId } : {}),
    ...(data.command?.deliveryId ? { delivery: data.command.deliveryId } : {}),
    attempt: f.attempt,
    attempts: f.attempts,
    error: error instanceof Error ? error.message : String(error),
  };
  if (f.final) log.error(`job gave up after ${f.attempts} attempts`, fields);
  else log.warn(`job failed (attempt ${f.attempt} of ${f.attempts}); the queue retries it`, fields);
}

export async function startRuntime(options: RuntimeOptions): Promise<AppRuntime> {
  await migrateStore(options.storeUrl);
  const store = openStore(options.storeUrl, {
    max: options.queue.runConcurrency * 2 + options.queue.quickConcurrency + 4,
  });
  let queue: QueueRuntime;
  try {
    queue = await startQueue({
      ...options.queue,
      url: options.storeUrl,
      onError: (e) => options.log.error('queue error', { error: e.message }),
      onJobFailed: (f, e) => logJobFailure(options.log, f, e),
      onJobDeferred: (d, e) =>
        options.log.warn(`GitHub rate limit: the job starts again in ${d.seconds} s, as GitHub asked`, {
          queue: d.queue,
          job: d.jobId,
          error: e instanceof Error ? e.message : String(e),
        }),
    });
  } catch (e) {
    await store.close();
    throw e;
  }
  const deps: JobDeps = {
    store,
    queue,
    github: options.github,
    providers: options.providers,
    lane: options.lane ?? check,
    lanePorts: options.lanePorts,
    settings: options.jobs,
    log: options.log,
    ...(options.records ? { records: options.records } : {}),
  };
  if (options.workers !== false) await queue.startWorkers(jobHandlers(deps));
  let stopped = false;
  return {
    store,
    queue,
    intake: createIntake(store, queue, { indexRecords: options.records !== undefined }),
    deps,
    healthy: () =>
      store.pool.query('SELECT 1').then(
        () => true,
        () => false,
      ),
    async stop(stopOptions = {}) {
      if (stopped) return;
      stopped = true;
      await queue.stop({ graceful: stopOptions.graceful ?? true });
      await store.close();
    },
  };
}
