/**
 * The quick half of a check: create the `Consort / database` check run (in progress) as soon as
 * the webhook is recorded, and either hand the run to
 * the run queue or — for a fork whose head nobody approved — conclude `action_required` and wait.
 */
import type { QuickJob } from '../queue.js';
import { blockRun, dropCancelled, getRun } from '../store/runs.js';
import { ensureCheckRun, forkBlocked, reportForkWaiting } from './check.js';
import { runContext, type JobDeps } from './deps.js';

export async function handleAnnounce(deps: JobDeps, job: Extract<QuickJob, { kind: 'announce' }>): Promise<void> {
  const run = await getRun(deps.store.pool, job.runId);
  if (!run || run.kind !== 'check' || run.state !== 'queued') return;
  // Superseded before anyone saw it: no check run is better than one that is cancelled at once.
  if (run.cancelReason !== null && run.checkRunId === null) {
    await dropCancelled(deps.store.pool, run.id);
    return;
  }
  const gh = await deps.github(run.installationId, runContext(run));
  const checkRunId = await ensureCheckRun(deps, gh, run);
  if (await forkBlocked(deps, run)) {
    if (await blockRun(deps.store.pool, run.id, 'waiting for /consort allow-run'))
      await reportForkWaiting(deps, gh, run, checkRunId);
    return;
  }
  await deps.queue.sendRun({ runId: run.id });
  deps.queue.wake();
}
