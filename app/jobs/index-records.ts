/**
 * Index a pushed head for the dashboard. Jobs of one pull request may run out of order; a job for
 * a head that is no longer the pull request's head does nothing (the newer push has its own job).
 */
import { indexPull } from '../dashboard/indexer.js';
import type { QuickJob } from '../queue.js';
import { getPull } from '../store/pulls.js';
import type { JobDeps } from './deps.js';

export async function handleIndex(deps: JobDeps, job: Extract<QuickJob, { kind: 'index' }>): Promise<void> {
  if (!deps.records) return;
  const pull = await getPull(deps.store.pool, job.repositoryId, job.pr);
  if (!pull || pull.headSha !== job.headSha) return;
  const outcome = await indexPull(deps.store, await deps.records(pull.installationId), {
    repositoryId: pull.repositoryId,
    installationId: pull.installationId,
    owner: pull.owner,
    repo: pull.repo,
    pr: pull.number,
    headSha: pull.headSha,
    headRef: pull.headRef,
  });
  deps.log.info('indexed the TDD records for the dashboard', {
    repositoryId: pull.repositoryId,
    pr: pull.number,
    head: pull.headSha.slice(0, 7),
    features: outcome.features.length,
    fetched: outcome.fetched,
  });
}
