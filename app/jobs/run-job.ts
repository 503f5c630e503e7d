/**
 * A run job: claim the run, keep its lease alive while the work goes on, and record the outcome.
 *
 * - Another run of the same subject is live: wait for it (it is usually being cancelled by this
 *   one), then claim. Only one run of a pull request ever works on its branches at a time.
 * - The run was cancelled before it started: conclude its check run `cancelled` and stop.
 * - Finished already, or another live process holds it (a duplicate job): do nothing.
 * - While working, a heartbeat renews the lease; a cancellation (a newer push, the PR closed) or a
 *   lost lease aborts the work through its AbortSignal.
 * - An unexpected error gives the run back to the queue (pg-boss retries the job) until the last
 *   attempt, which reports the error on the check run instead.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { isConsortError } from '../../src/core/errors.js';
import { cancelledOutcome, errorOutcome } from '../check-output.js';
import type { RunJob } from '../queue.js';
import { claimRun, finishRun, getRun, heartbeat, releaseRun, type Run, type RunResult } from '../store/runs.js';
import { recordCheck } from '../dashboard/index-store.js';
import { checkRun } from './check.js';
import { closeRun } from './close.js';
import { LeaseLost, runContext, type JobDeps } from './deps.js';

export async function handleRunJob(deps: JobDeps, job: RunJob): Promise<void> {
  const token = randomUUID();
  const started = Date.now();
  for (;;) {
    const claim = await claimRun(deps.store.pool, job.runId, token, deps.settings.leaseSeconds);
    switch (claim.kind) {
      case 'done':
        return;
      case 'cancelled':
        await concludeCancelled(deps, claim.run);
        return;
      case 'busy':
        if (Date.now() - started > deps.settings.busyWaitMs)
          throw new Error(`run ${job.runId} still waits for run ${claim.holder} of the same subject`);
        await delay(deps.settings.busyPollMs);
        continue;
      case 'claimed':
        await work(deps, claim.run, token);
        return;
    }
  }
}

async function concludeCancelled(deps: JobDeps, run: Run): Promise<void> {
  if (run.kind !== 'check' || run.checkRunId === null) return;
  const gh = await deps.github(run.installationId, runContext(run));
  await gh.completeCheckRun(run, run.checkRunId, cancelledOutcome(run.cancelReason ?? 'cancelled'));
}

async function work(deps: JobDeps, run: Run, token: string): Promise<void> {
  const controller = new AbortController();
  const stopHeartbeat = startHeartbeat(deps, run.id, token, controller);
  let result: RunResult;
  try {
    result =
      run.kind === 'check'
        ? await checkRun(deps, run, controller.signal)
        : await closeRun(deps, run, controller.signal);
  } catch (e) {
    stopHeartbeat();
    if (e instanceof LeaseLost || controller.signal.reason instanceof LeaseLost) {
      deps.log.warn('run abandoned: another process owns it now', { runId: run.id });
      return;
    }
    const message = e instanceof Error ? e.message : String(e);
    deps.log.error('run failed', { runId: run.id, attempt: run.attempts, error: message });
    if (!controller.signal.aborted && run.attempts < deps.settings.maxAttempts) {
      await releaseRun(deps.store.pool, run.id, token);
      throw e;
    }
    // Cancelled while failing: the cancellation is what happened. Out of attempts: say why on the check run.
    const cancelled = controller.signal.aborted ? String(controller.signal.reason) : null;
    result =
      cancelled !== null
        ? { state: 'cancelled', conclusion: 'cancelled', summary: cancelled }
        : { state: 'completed', conclusion: 'failure', summary: `could not run: ${message}` };
    const checkRunId = run.kind === 'check' ? ((await getRun(deps.store.pool, run.id))?.checkRunId ?? null) : null;
    if (checkRunId !== null) {
      const outcome =
        cancelled !== null
          ? cancelledOutcome(cancelled)
          : errorOutcome(message, isConsortError(e) ? e.hint : undefined);
      await (
        await deps.github(run.installationId, runContext(run))
      )
        .completeCheckRun(run, checkRunId, outcome)
        .catch((err: unknown) => {
          deps.log.warn('could not conclude the check run', { runId: run.id, error: String(err) });
        });
    }
  }
  stopHeartbeat();
  if (!(await finishRun(deps.store.pool, run.id, token, result))) {
    deps.log.warn('run outcome not recorded: the lease was lost', { runId: run.id });
    return;
  }
  if (run.kind === 'check') {
    await recordCheck(deps.store.pool, run, result, result.report ?? null).catch((e: unknown) => {
      deps.log.warn('the check history did not record this run', { runId: run.id, error: String(e) });
    });
  }
}

/**
 * Renew the lease every heartbeatMs; abort on cancellation, on a lost lease, or when renewals keep
 * failing past the lease. A cancelled run keeps renewing while it cleans up, so the newer run waits
 * until the branches are clear.
 */
function startHeartbeat(deps: JobDeps, runId: number, token: string, controller: AbortController): () => void {
  let lastRenewed = Date.now();
  let busy = false;
  const timer = setInterval(() => {
    if (busy || controller.signal.reason instanceof LeaseLost) return;
    busy = true;
    heartbeat(deps.store.pool, runId, token, deps.settings.leaseSeconds)
      .then((beat) => {
        lastRenewed = Date.now();
        if (!beat.owned) controller.abort(new LeaseLost('the run was taken over by another process'));
        else if (beat.cancelReason !== null && !controller.signal.aborted) controller.abort(beat.cancelReason);
      })
      .catch((e: unknown) => {
        deps.log.warn('heartbeat failed', { runId, error: String(e) });
        if (Date.now() - lastRenewed > deps.settings.leaseSeconds * 1000)
          controller.abort(new LeaseLost('the lease could not be renewed'));
      })
      .finally(() => {
        busy = false;
      });
  }, deps.settings.heartbeatMs);
  timer.unref();
  return () => clearInterval(timer);
}
