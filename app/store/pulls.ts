/**
 * Deliveries (so a redelivered webhook does nothing twice), the last known state of each pull
 * request, and the head SHAs of fork pull requests someone with write access approved to run.
 */
import { num, type Db } from './db.js';
import type { RepoRef } from './runs.js';

export type PullState = 'open' | 'closed' | 'merged';

export interface PullRecord extends RepoRef {
  number: number;
  headSha: string;
  headRef: string;
  baseSha: string;
  baseRef: string;
  fork: boolean;
  state: PullState;
  /**
   * When headSha became the head: the later of the App's clock when it learned of it and GitHub's
   * time of the event (pull_request.updated_at), so an App clock behind GitHub's cannot date a push
   * before a comment GitHub dated earlier.
   */
  headRecordedAt: Date;
}

export interface DeliveryRecord {
  id: string;
  event: string;
  action: string | null;
  repositoryId: number | null;
}

/** Record a delivery; false when it was recorded before (a redelivery). */
export async function recordDelivery(db: Db, d: DeliveryRecord): Promise<boolean> {
  const { rowCount } = await db.query(
    'INSERT INTO consort_app.deliveries (id, event, action, repository_id) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING',
    [d.id, d.event, d.action, d.repositoryId],
  );
  return rowCount === 1;
}

function toPull(r: Record<string, unknown>): PullRecord {
  return {
    repositoryId: num(r.repository_id),
    installationId: num(r.installation_id),
    owner: String(r.owner),
    repo: String(r.repo),
    number: num(r.number),
    headSha: String(r.head_sha),
    headRef: String(r.head_ref),
    baseSha: String(r.base_sha),
    baseRef: String(r.base_ref),
    fork: r.fork === true,
    state: r.state as PullState,
    headRecordedAt: r.head_recorded_at as Date,
  };
}

/**
 * Where a webhook stands in the pull request's history: its `pull_request.updated_at`, and whether
 * it reopens the pull request. GitHub does not promise to deliver webhooks in order, so an event
 * older than the one recorded changes nothing, and only `reopened` (or a later `opened`) makes a
 * closed pull request open again — a push's event of the same second as the close arriving after it
 * must not.
 */
export interface PullEventOrder {
  at: string;
  reopens: boolean;
}

/**
 * Insert or update a pull request; returns the head SHA recorded before (null when new). With
 * `order`, an event older than the recorded one, or one that would open a closed pull request
 * without reopening it, changes nothing: `pull` is null and `stale` says why.
 */
export async function upsertPull(
  db: Db,
  p: Omit<PullRecord, 'headRecordedAt'>,
  order?: PullEventOrder,
): Promise<{ previousHead: string | null; pull: PullRecord | null; stale?: 'older' | 'closed' }> {
  const before = await db.query(
    'SELECT head_sha, state, event_at, $3::timestamptz < event_at AS older FROM consort_app.pull_requests WHERE repository_id = $1 AND number = $2 FOR UPDATE',
    [p.repositoryId, p.number, order?.at ?? null],
  );
  const known = before.rows[0] as { head_sha: unknown; state: unknown; older: unknown } | undefined;
  const previousHead = known ? String(known.head_sha) : null;
  if (known && order) {
    if (known.older === true) return { previousHead, pull: null, stale: 'older' };
    if (known.state !== 'open' && p.state === 'open' && !order.reopens)
      return { previousHead, pull: null, stale: 'closed' };
  }
  const { rows } = await db.query(
    `INSERT INTO consort_app.pull_requests (repository_id, number, installation_id, owner, repo, head_sha, head_ref, base_sha, base_ref, fork, state, event_at, head_recorded_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, GREATEST(now(), $12))
     ON CONFLICT (repository_id, number) DO UPDATE SET installation_id = EXCLUDED.installation_id, owner = EXCLUDED.owner, repo = EXCLUDED.repo,
       head_recorded_at = CASE WHEN consort_app.pull_requests.head_sha = EXCLUDED.head_sha THEN consort_app.pull_requests.head_recorded_at ELSE EXCLUDED.head_recorded_at END,
       head_sha = EXCLUDED.head_sha, head_ref = EXCLUDED.head_ref, base_sha = EXCLUDED.base_sha, base_ref = EXCLUDED.base_ref,
       fork = EXCLUDED.fork, state = EXCLUDED.state, updated_at = now(),
       event_at = GREATEST(consort_app.pull_requests.event_at, EXCLUDED.event_at)
     -- Two first events of a pull request inserting side by side: the older one does not overwrite.
     WHERE EXCLUDED.event_at IS NULL OR consort_app.pull_requests.event_at IS NULL OR EXCLUDED.event_at >= consort_app.pull_requests.event_at
     RETURNING *`,
    [
      p.repositoryId,
      p.number,
      p.installationId,
      p.owner,
      p.repo,
      p.headSha,
      p.headRef,
      p.baseSha,
      p.baseRef,
      p.fork,
      p.state,
      order?.at ?? null,
    ],
  );
  return rows[0] ? { previousHead, pull: toPull(rows[0]) } : { previousHead, pull: null, stale: 'older' };
}

export async function getPull(db: Db, repositoryId: number, number: number): Promise<PullRecord | undefined> {
  const { rows } = await db.query('SELECT * FROM consort_app.pull_requests WHERE repository_id = $1 AND number = $2', [
    repositoryId,
    number,
  ]);
  return rows[0] ? toPull(rows[0]) : undefined;
}

/** The repositories' pull requests the App knows are open. */
export async function openPulls(db: Db, repositoryIds: readonly number[]): Promise<PullRecord[]> {
  const { rows } = await db.query(
    "SELECT * FROM consort_app.pull_requests WHERE repository_id = ANY($1::bigint[]) AND state = 'open' ORDER BY repository_id, number",
    [repositoryIds],
  );
  return rows.map(toPull);
}

/** Numbers of the repository's pull requests the App knows are closed or merged. */
export async function closedPulls(db: Db, repositoryId: number): Promise<Set<number>> {
  const { rows } = await db.query(
    "SELECT number FROM consort_app.pull_requests WHERE repository_id = $1 AND state <> 'open'",
    [repositoryId],
  );
  return new Set(rows.map((r) => num(r.number)));
}

/** Every repository the App has seen a pull request in (what the sweep visits). */
export async function knownRepositories(db: Db): Promise<RepoRef[]> {
  const { rows } = await db.query(
    `SELECT DISTINCT ON (repository_id) repository_id, installation_id, owner, repo FROM consort_app.pull_requests ORDER BY repository_id, updated_at DESC`,
  );
  return rows.map((r) => ({
    repositoryId: num(r.repository_id),
    installationId: num(r.installation_id),
    owner: String(r.owner),
    repo: String(r.repo),
  }));
}

/**
 * The pull request's base changed: what its check runs against is new, so a fork's approvals end
 * (the base's configuration decides what the fork's code may have: its role, the environment passed
 * to its suite) and an approval written before now (on either clock) counts for nothing.
 */
export async function baseChanged(db: Db, repositoryId: number, pr: number, at: string): Promise<void> {
  await db.query(
    'UPDATE consort_app.pull_requests SET head_recorded_at = GREATEST(now(), $3::timestamptz) WHERE repository_id = $1 AND number = $2',
    [repositoryId, pr, at],
  );
  await db.query('DELETE FROM consort_app.fork_approvals WHERE repository_id = $1 AND pr = $2', [repositoryId, pr]);
}

export async function approveForkRun(
  db: Db,
  repositoryId: number,
  pr: number,
  headSha: string,
  approver: string,
): Promise<void> {
  await db.query(
    'INSERT INTO consort_app.fork_approvals (repository_id, pr, head_sha, approver) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
    [repositoryId, pr, headSha, approver],
  );
}

export async function forkRunApproval(
  db: Db,
  repositoryId: number,
  pr: number,
  headSha: string,
): Promise<{ approver: string; approvedAt: Date } | undefined> {
  const { rows } = await db.query(
    'SELECT approver, approved_at FROM consort_app.fork_approvals WHERE repository_id = $1 AND pr = $2 AND head_sha = $3',
    [repositoryId, pr, headSha],
  );
  return rows[0] ? { approver: String(rows[0].approver), approvedAt: rows[0].approved_at as Date } : undefined;
}
