/**
 * The periodic sweep (and `/consort gc`): hand runs whose process died (their lease passed) back
 * to the queue, and delete database branches nobody needs any more — those of closed pull requests
 * and those whose TTL passed. Snapshots kept after a failed promotion (`pre-merge-…`) stay.
 */
import { pullNumberOf } from '../../src/core/names.js';
import { cleanupPull } from '../../src/lanes/check/cleanup.js';
import { isConsortError } from '../../src/core/errors.js';
import { everyProvider } from '../providers.js';
import { closedPulls, knownRepositories } from '../store/pulls.js';
import { expiredRuns, unannouncedRuns, type RepoRef } from '../store/runs.js';
import type { JobDeps } from './deps.js';

export interface SweepResult {
  /** Branches of closed pull requests. */
  deleted: string[];
  /** Branches whose TTL passed (and leftovers of crashed branch operations), via the provider's gc. */
  expired: string[];
}

export async function sweepRepository(deps: JobDeps, repo: Pick<RepoRef, 'repositoryId'>): Promise<SweepResult> {
  const closed = await closedPulls(deps.store.pool, repo.repositoryId);
  const result: SweepResult = { deleted: [], expired: [] };
  // A repository's branches may be on any provider the App offers (it may have changed provider).
  for (const provider of await everyProvider(deps.providers, repo.repositoryId)) {
    const prs = new Set<number>();
    for (const b of await provider.list()) {
      const n = pullNumberOf(b.name);
      if (n !== null && closed.has(n)) prs.add(n);
    }
    for (const pr of prs) {
      try {
        result.deleted.push(...(await cleanupPull(provider, pr)));
      } catch (e) {
        // Busy (someone is connected) or deleted meanwhile by the close job: the next sweep tries again.
        if (!isConsortError(e)) throw e;
        deps.log.warn('sweep could not delete a branch', { pr, provider: provider.name, error: e.message });
      }
    }
    const gc = await provider.gc();
    result.expired.push(...gc.deleted, ...gc.repaired);
  }
  return result;
}

/**
 * Runs left by a dead process go back to the queue (a live process claims them once their lease
 * has passed), and checks whose announcement never happened (its job gave up, e.g. while GitHub
 * was down) are announced again.
 */
export async function recoverRuns(deps: JobDeps, unannouncedAfterSeconds = 600): Promise<number[]> {
  const runs = await expiredRuns(deps.store.pool);
  for (const run of runs) await deps.queue.sendRun({ runId: run.id });
  const unannounced = await unannouncedRuns(deps.store.pool, unannouncedAfterSeconds);
  for (const run of unannounced) await deps.queue.sendQuick({ kind: 'announce', runId: run.id });
  if (runs.length + unannounced.length > 0) deps.queue.wake();
  return [...runs, ...unannounced].map((r) => r.id);
}

export async function sweepAll(deps: JobDeps): Promise<void> {
  const recovered = await recoverRuns(deps);
  if (recovered.length > 0) deps.log.info('re-queued runs of a stopped process', { runs: recovered });
  for (const repo of await knownRepositories(deps.store.pool)) {
    const result = await sweepRepository(deps, repo).catch((e: unknown) => {
      deps.log.warn('sweep failed for a repository', { repositoryId: repo.repositoryId, error: String(e) });
      return undefined;
    });
    if (result && result.deleted.length + result.expired.length > 0)
      deps.log.info('swept branches', { repositoryId: repo.repositoryId, ...result });
  }
}
