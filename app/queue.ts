/**
 * The durable job queue, on pg-boss in the App's own database (its `pgboss` schema).
 *
 * pg-boss rather than a hand-written queue: jobs are rows fetched with SKIP LOCKED, so any number
 * of App processes share one queue; a job inserted in the same transaction as the store's rows
 * (`send(…, { db })`) exists exactly when they do; a job whose process died expires per job
 * (`expireInSeconds`) and is retried; cron schedules run once across processes. (graphile-worker
 * would do as well; pg-boss 10 was chosen for per-job expiry and singleton keys, and because it
 * still supports Node 20.)
 *
 * Three queues, so quick work never waits behind long checks:
 *   quick  — create a check run, answer a /consort command, index a head for the dashboard (seconds);
 *   run    — a check or a close-time cleanup/promote (minutes), serialized per subject by the store;
 *   sweep  — the periodic sweep (cron).
 */
import PgBoss from 'pg-boss';
import { z } from 'zod';
import { Command } from '../src/github/commands.js';
import { rateLimitWait } from '../src/github/rate-limit.js';

export const QUEUES = { quick: 'consort-quick', run: 'consort-run', sweep: 'consort-sweep' } as const;

/** What a `/consort` command job carries from the webhook to the worker that answers it. */
export const CommandJob = z.object({
  deliveryId: z.string(),
  installationId: z.number().int(),
  repositoryId: z.number().int(),
  owner: z.string(),
  repo: z.string(),
  pr: z.number().int().positive(),
  commentId: z.number().int(),
  /** Who gave the command: the comment's author, or for an edited comment the person who edited it (the webhook's sender). */
  author: z.string(),
  /** When the comment was written (an edit's time for edited comments): what its author could have seen. */
  writtenAt: z.string(),
  command: Command,
});
export type CommandJob = z.infer<typeof CommandJob>;

export const QuickJob = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('announce'), runId: z.number().int().positive() }),
  z.object({ kind: z.literal('command'), command: CommandJob }),
  /** Index the TDD lane's records at a pull request's head for the dashboard (only when the dashboard is on). */
  z.object({
    kind: z.literal('index'),
    repositoryId: z.number().int(),
    pr: z.number().int().positive(),
    headSha: z.string(),
  }),
]);
export type QuickJob = z.infer<typeof QuickJob>;
export const RunJob = z.object({ runId: z.number().int().positive() });
export type RunJob = z.infer<typeof RunJob>;

/** Something that can run SQL: a transaction's client, so a job is inserted atomically with the rows it is about. */
export interface SqlExecutor {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** What the intake and the jobs need from the queue. */
export interface JobQueue {
  sendQuick(job: QuickJob, tx?: SqlExecutor): Promise<void>;
  sendRun(job: RunJob, tx?: SqlExecutor): Promise<void>;
  /** Wake this process's idle workers now instead of at their next poll. */
  wake(): void;
}

export interface QueueHandlers {
  quick(job: QuickJob): Promise<void>;
  run(job: RunJob): Promise<void>;
  sweep(): Promise<void>;
}

export interface QueueSettings {
  url: string;
  quickConcurrency: number;
  runConcurrency: number;
  /** How long a run job may take before pg-boss gives it to another process (the store's leases usually act first). */
  runExpireSeconds: number;
  sweepCron: string;
  pollingSeconds?: number;
  /** pg-boss's own maintenance (expiring jobs, cron); tests shorten it. */
  maintenanceSeconds?: number;
  onError?: (error: Error) => void;
  /** A job threw: the queue retries it until `final` (then it stays failed). Told before the queue records it. */
  onJobFailed?: (failure: JobFailure, error: unknown) => void;
  onJobDeferred?: (deferral: JobDeferral, error: unknown) => void;
}

/** A job that hit a GitHub rate limit, sent again to start once GitHub's wait has passed. */
export interface JobDeferral {
  queue: string;
  jobId: string;
  data: unknown;
  seconds: number;
}

/** How often one job is put off for a rate limit before the queue's own retries take over. */
const MAX_RATE_LIMIT_DEFERRALS = 5;
/** Kept in the job's data (the jobs' parsers drop it). */
const DEFERRALS = 'rateLimitDeferrals';
const deferralsOf = (data: unknown): number => {
  const n = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[DEFERRALS] : undefined;
  return typeof n === 'number' ? n : 0;
};

export interface JobFailure {
  queue: string;
  jobId: string;
  data: unknown;
  /** Tries so far, this one included, and how many the queue makes at most. */
  attempt: number;
  attempts: number;
  final: boolean;
}

export interface QueueRuntime extends JobQueue {
  startWorkers(handlers: QueueHandlers): Promise<void>;
  /** Graceful: let running jobs finish (up to `timeoutMs`). Not graceful: drop everything, as a crash would. */
  stop(options?: { graceful?: boolean; timeoutMs?: number }): Promise<void>;
  readonly boss: PgBoss;
}

const executor = (tx: SqlExecutor): PgBoss.Db => ({ executeSql: (text, values) => tx.query(text, values) });

export async function startQueue(settings: QueueSettings): Promise<QueueRuntime> {
  const boss = new PgBoss({
    connectionString: settings.url,
    schema: 'pgboss',
    max: 4,
    application_name: 'consort-app-queue',
    ...(settings.maintenanceSeconds
      ? {
          maintenanceIntervalSeconds: settings.maintenanceSeconds,
          monitorStateIntervalSeconds: settings.maintenanceSeconds,
        }
      : {}),
  });
  boss.on('error', (e: Error) => settings.onError?.(e));
  await boss.start();
  await ensureQueue(boss, {
    name: QUEUES.quick,
    retryLimit: 5,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: 300,
  });
  await ensureQueue(boss, {
    name: QUEUES.run,
    retryLimit: 10,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: settings.runExpireSeconds,
  });
  await ensureQueue(boss, { name: QUEUES.sweep, retryLimit: 0, expireInSeconds: 600 });
  const workers: string[] = [];
  const polling = settings.pollingSeconds ?? 2;

  return {
    boss,
    async sendQuick(job, tx) {
      await boss.send(QUEUES.quick, QuickJob.parse(job), tx ? { db: executor(tx) } : {});
    },
    async sendRun(job, tx) {
      await boss.send(QUEUES.run, RunJob.parse(job), tx ? { db: executor(tx) } : {});
    },
    wake() {
      for (const id of workers) boss.notifyWorker(id);
    },
    async startWorkers(handlers) {
      // Every failure is told (and so logged) before pg-boss retries it, or gives up on the job.
      const guarded =
        <T>(queue: string, parse: (data: unknown) => T, handle: (job: T) => Promise<void>) =>
        async ([job]: PgBoss.JobWithMetadata<unknown>[]): Promise<void> => {
          if (!job) return;
          try {
            await handle(parse(job.data));
          } catch (e) {
            // GitHub said how long to leave it alone: the job comes back after that, not after the
            // queue's few seconds (requests made while limited can get the App banned).
            const wait = rateLimitWait(e);
            const deferrals = deferralsOf(job.data);
            if (wait !== null && deferrals < MAX_RATE_LIMIT_DEFERRALS) {
              await boss.send(queue, { ...(job.data as object), [DEFERRALS]: deferrals + 1 }, { startAfter: wait });
              settings.onJobDeferred?.({ queue, jobId: job.id, data: job.data, seconds: wait }, e);
              return;
            }
            const attempt = job.retryCount + 1;
            settings.onJobFailed?.(
              {
                queue,
                jobId: job.id,
                data: job.data,
                attempt,
                attempts: job.retryLimit + 1,
                final: attempt > job.retryLimit,
              },
              e,
            );
            throw e;
          }
        };
      // pg-boss 10 runs one job at a time per worker, so concurrency is the number of workers.
      for (let i = 0; i < settings.quickConcurrency; i++) {
        workers.push(
          await boss.work(
            QUEUES.quick,
            { pollingIntervalSeconds: polling, includeMetadata: true },
            guarded(QUEUES.quick, (d) => QuickJob.parse(d), handlers.quick),
          ),
        );
      }
      for (let i = 0; i < settings.runConcurrency; i++) {
        workers.push(
          await boss.work(
            QUEUES.run,
            { pollingIntervalSeconds: polling, includeMetadata: true },
            guarded(QUEUES.run, (d) => RunJob.parse(d), handlers.run),
          ),
        );
      }
      await boss.work(
        QUEUES.sweep,
        { pollingIntervalSeconds: Math.max(polling, 5), includeMetadata: true },
        guarded(
          QUEUES.sweep,
          () => undefined,
          () => handlers.sweep(),
        ),
      );
      await boss.schedule(QUEUES.sweep, settings.sweepCron);
    },
    async stop(options = {}) {
      await boss.stop({ graceful: options.graceful ?? true, wait: true, timeout: options.timeoutMs ?? 30_000 });
    },
  };
}

async function ensureQueue(boss: PgBoss, queue: PgBoss.Queue): Promise<void> {
  if (await boss.getQueue(queue.name)) await boss.updateQueue(queue.name, queue);
  else
    await boss.createQueue(queue.name, queue).catch(async (e: unknown) => {
      if (!(await boss.getQueue(queue.name))) throw e; // created by another process meanwhile
    });
}
