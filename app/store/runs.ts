/**
 * Runs: the work the App does for one subject (a pull request or a merge group). A newer run of a
 * subject cancels the older live ones (it sets their `cancel_reason`; a running job sees it on its
 * next heartbeat and aborts). Runs of one subject never overlap: a job must claim its run, and a
 * claim fails while another run of the subject holds a live lease. A process that dies stops
 * renewing its lease, so the run can be claimed again once the lease has passed.
 */
import type pg from 'pg';
import { num, numOrNull, type Db } from './db.js';

export type RunKind = 'check' | 'close';
export type RunState = 'queued' | 'running' | 'blocked' | 'completed' | 'cancelled';

export interface RepoRef {
  repositoryId: number;
  installationId: number;
  owner: string;
  repo: string;
}

export interface NewRun extends RepoRef {
  kind: RunKind;
  subject: string;
  pr: number | null;
  headSha: string;
  headRef: string;
  baseSha: string;
  baseRef: string;
  fork: boolean;
  /** A close run: merged into the repository's default branch, so its migrations are promoted (when promotion is on). */
  merged: boolean;
  deliveryId: string | null;
}

export interface Run extends NewRun {
  id: number;
  state: RunState;
  conclusion: string | null;
  summary: string | null;
  cancelReason: string | null;
  checkRunId: number | null;
  attempts: number;
  createdAt: Date;
}

export type ClaimOutcome =
  | { kind: 'claimed'; run: Run }
  /** Cancelled before it started: the caller concludes its check run and stops. */
  | { kind: 'cancelled'; run: Run }
  /** Another run of the subject is live: try again shortly. */
  | { kind: 'busy'; holder: number }
  /** Finished already, or leased by a live process: nothing to do. */
  | { kind: 'done'; run: Run | undefined };

export const prSubject = (repositoryId: number, pr: number): string => `${repositoryId}:pr:${pr}`;
export const mergeGroupSubject = (repositoryId: number, headRef: string): string => `${repositoryId}:mg:${headRef}`;

const COLUMNS = `id, kind, subject, repository_id, installation_id, owner, repo, pr, head_sha, head_ref, base_sha, base_ref, fork, merged,
  delivery_id, state, conclusion, summary, cancel_reason, check_run_id, attempts, created_at`;

function toRun(r: Record<string, unknown>): Run {
  return {
    id: num(r.id),
    kind: r.kind as RunKind,
    subject: String(r.subject),
    repositoryId: num(r.repository_id),
    installationId: num(r.installation_id),
    owner: String(r.owner),
    repo: String(r.repo),
    pr: numOrNull(r.pr),
    headSha: String(r.head_sha),
    headRef: String(r.head_ref),
    baseSha: String(r.base_sha),
    baseRef: String(r.base_ref),
    fork: r.fork === true,
    merged: r.merged === true,
    deliveryId: r.delivery_id === null ? null : String(r.delivery_id),
    state: r.state as RunState,
    conclusion: (r.conclusion as string | null) ?? null,
    summary: (r.summary as string | null) ?? null,
    cancelReason: (r.cancel_reason as string | null) ?? null,
    checkRunId: numOrNull(r.check_run_id),
    attempts: num(r.attempts),
    createdAt: r.created_at as Date,
  };
}

/**
 * Record a run and cancel the older live check runs of its subject with `reason`. Blocked runs
 * (a fork waiting for approval) have no job, so they are cancelled outright.
 */
export async function insertRun(db: Db, run: NewRun, reason: string): Promise<Run> {
  const { rows } = await db.query(
    `INSERT INTO consort_app.runs (kind, subject, repository_id, installation_id, owner, repo, pr, head_sha, head_ref, base_sha, base_ref, fork, merged, delivery_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING ${COLUMNS}`,
    [
      run.kind,
      run.subject,
      run.repositoryId,
      run.installationId,
      run.owner,
      run.repo,
      run.pr,
      run.headSha,
      run.headRef,
      run.baseSha,
      run.baseRef,
      run.fork,
      run.merged,
      run.deliveryId,
    ],
  );
  const inserted = toRun(rows[0]);
  await cancelSubject(db, run.subject, reason, inserted.id);
  return inserted;
}

/** Cancel every live check run of a subject older than `before` (all of them when omitted). */
export async function cancelSubject(
  db: Db,
  subject: string,
  reason: string,
  before: number = Number.MAX_SAFE_INTEGER,
): Promise<number[]> {
  const { rows } = await db.query(
    `UPDATE consort_app.runs SET cancel_reason = COALESCE(cancel_reason, $2),
       state = CASE WHEN state = 'blocked' THEN 'cancelled' ELSE state END,
       finished_at = CASE WHEN state = 'blocked' THEN now() ELSE finished_at END
     WHERE subject = $1 AND kind = 'check' AND id < $3 AND state IN ('queued', 'running', 'blocked') RETURNING id`,
    [subject, reason, before],
  );
  return rows.map((r) => num(r.id));
}

/** Cancel every live check run of the repositories (pull requests' and merge groups'). */
export async function cancelRepositories(db: Db, repositoryIds: readonly number[], reason: string): Promise<number[]> {
  const { rows } = await db.query(
    `UPDATE consort_app.runs SET cancel_reason = COALESCE(cancel_reason, $2),
       state = CASE WHEN state = 'blocked' THEN 'cancelled' ELSE state END,
       finished_at = CASE WHEN state = 'blocked' THEN now() ELSE finished_at END
     WHERE repository_id = ANY($1::bigint[]) AND kind = 'check' AND state IN ('queued', 'running', 'blocked') RETURNING id`,
    [repositoryIds, reason],
  );
  return rows.map((r) => num(r.id)).sort((a, b) => a - b);
}

/** The repositories the App has recorded work for under an installation. */
export async function repositoriesOf(db: Db, installationId: number): Promise<number[]> {
  const { rows } = await db.query(
    `SELECT repository_id FROM consort_app.pull_requests WHERE installation_id = $1
     UNION SELECT repository_id FROM consort_app.runs WHERE installation_id = $1 ORDER BY 1`,
    [installationId],
  );
  return rows.map((r) => num(r.repository_id));
}

/**
 * Cancel the subject's close runs that have not started: a pull request reopened meanwhile needs
 * its branches (the check of its reopening makes them), so deleting them would undo that check.
 */
export async function cancelQueuedCloses(db: Db, subject: string, reason: string): Promise<number[]> {
  const { rows } = await db.query(
    `UPDATE consort_app.runs SET cancel_reason = COALESCE(cancel_reason, $2)
     WHERE subject = $1 AND kind = 'close' AND state = 'queued' RETURNING id`,
    [subject, reason],
  );
  return rows.map((r) => num(r.id));
}

export async function getRun(db: Db, id: number): Promise<Run | undefined> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM consort_app.runs WHERE id = $1`, [id]);
  return rows[0] ? toRun(rows[0]) : undefined;
}

export async function findRunByCheckRun(db: Db, checkRunId: number): Promise<Run | undefined> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM consort_app.runs WHERE check_run_id = $1`, [checkRunId]);
  return rows[0] ? toRun(rows[0]) : undefined;
}

/** The newest check of a repository at a commit (a pull request head or a merge group's). */
export async function latestRunAt(db: Db, repositoryId: number, headSha: string): Promise<Run | undefined> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM consort_app.runs WHERE repository_id = $1 AND head_sha = $2 AND kind = 'check' ORDER BY id DESC LIMIT 1`,
    [repositoryId, headSha],
  );
  return rows[0] ? toRun(rows[0]) : undefined;
}

export async function latestRun(db: Db, subject: string, kind: RunKind = 'check'): Promise<Run | undefined> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM consort_app.runs WHERE subject = $1 AND kind = $2 ORDER BY id DESC LIMIT 1`,
    [subject, kind],
  );
  return rows[0] ? toRun(rows[0]) : undefined;
}

export async function setCheckRun(db: Db, id: number, checkRunId: number): Promise<void> {
  await db.query('UPDATE consort_app.runs SET check_run_id = $2 WHERE id = $1', [id, checkRunId]);
}

/** A run cancelled before anything was shown for it: recorded as cancelled, with no job left to do it. */
export async function dropCancelled(db: Db, id: number): Promise<void> {
  await db.query(
    `UPDATE consort_app.runs SET state = 'cancelled', conclusion = 'cancelled', summary = cancel_reason, finished_at = now()
     WHERE id = $1 AND state = 'queued' AND cancel_reason IS NOT NULL`,
    [id],
  );
}

/** A fork's run waiting for `/consort allow-run`: no job holds it. */
export async function blockRun(db: Db, id: number, summary: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE consort_app.runs SET state = 'blocked', summary = $2, conclusion = 'action_required' WHERE id = $1 AND state = 'queued' AND cancel_reason IS NULL`,
    [id, summary],
  );
  return rowCount === 1;
}

export async function claimRun(pool: pg.Pool, id: number, token: string, leaseSeconds: number): Promise<ClaimOutcome> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      const outcome = await claimIn(client, id, token, leaseSeconds);
      await client.query('COMMIT');
      return outcome;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  } finally {
    client.release();
  }
}

async function claimIn(db: Db, id: number, token: string, leaseSeconds: number): Promise<ClaimOutcome> {
  const run = await getRun(db, id);
  if (!run) return { kind: 'done', run };
  // Claims of one subject take turns, so two runs can never both see the other as not live.
  await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`consort_app:subject:${run.subject}`]);
  const { rows: mine } = await db.query(
    `SELECT ${COLUMNS}, lease_until > now() AS leased FROM consort_app.runs WHERE id = $1 FOR UPDATE`,
    [id],
  );
  const current = toRun(mine[0]);
  const leased = mine[0].leased === true;
  if (current.state === 'completed' || current.state === 'cancelled' || current.state === 'blocked')
    return { kind: 'done', run: current };
  if (current.state === 'running' && leased) return { kind: 'done', run: current };
  if (current.cancelReason !== null) {
    const { rows } = await db.query(
      `UPDATE consort_app.runs SET state = 'cancelled', conclusion = 'cancelled', summary = cancel_reason, finished_at = now(), lease_owner = NULL
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [id],
    );
    return { kind: 'cancelled', run: toRun(rows[0]) };
  }
  const { rows: live } = await db.query(
    `SELECT id FROM consort_app.runs WHERE subject = $1 AND id <> $2 AND state = 'running' AND lease_until > now() LIMIT 1`,
    [run.subject, id],
  );
  if (live[0]) return { kind: 'busy', holder: num(live[0].id) };
  const { rows } = await db.query(
    `UPDATE consort_app.runs SET state = 'running', lease_owner = $2, lease_until = now() + make_interval(secs => $3),
       attempts = attempts + 1, started_at = COALESCE(started_at, now())
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, token, leaseSeconds],
  );
  return { kind: 'claimed', run: toRun(rows[0]) };
}

/** Renew the lease; says whether the run is still ours and why it should stop, if it should. */
export async function heartbeat(
  db: Db,
  id: number,
  token: string,
  leaseSeconds: number,
): Promise<{ owned: boolean; cancelReason: string | null }> {
  const { rows } = await db.query(
    `UPDATE consort_app.runs SET lease_until = now() + make_interval(secs => $3)
     WHERE id = $1 AND lease_owner = $2 AND state = 'running' RETURNING cancel_reason`,
    [id, token, leaseSeconds],
  );
  return rows[0]
    ? { owned: true, cancelReason: (rows[0].cancel_reason as string | null) ?? null }
    : { owned: false, cancelReason: null };
}

export interface RunResult {
  state: 'completed' | 'cancelled';
  conclusion: string;
  summary: string;
  /** The check lane's CheckReport, when it produced one (kept for the dashboard's check history). */
  report?: unknown;
}

/** Record the outcome, only if the run is still ours (a lost lease means another process took over). */
export async function finishRun(db: Db, id: number, token: string, result: RunResult): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE consort_app.runs SET state = $3, conclusion = $4, summary = $5, finished_at = now(), lease_owner = NULL, lease_until = NULL
     WHERE id = $1 AND lease_owner = $2 AND state = 'running'`,
    [id, token, result.state, result.conclusion, result.summary],
  );
  return rowCount === 1;
}

/** Give a run back (its job failed and will be retried): queued again, claimable by any process. */
export async function releaseRun(db: Db, id: number, token: string): Promise<void> {
  await db.query(
    `UPDATE consort_app.runs SET state = 'queued', lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2 AND state = 'running'`,
    [id, token],
  );
}

/** Runs whose process stopped renewing the lease: the sweep hands them to a live process. */
export async function expiredRuns(db: Db): Promise<Run[]> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM consort_app.runs WHERE state = 'running' AND lease_until < now() ORDER BY id`,
  );
  return rows.map(toRun);
}

/** Check runs still queued long after they were recorded without a check run: their announcement was lost. */
export async function unannouncedRuns(db: Db, olderThanSeconds: number): Promise<Run[]> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM consort_app.runs WHERE kind = 'check' AND state = 'queued' AND check_run_id IS NULL AND cancel_reason IS NULL
       AND created_at < now() - make_interval(secs => $1) ORDER BY id`,
    [olderThanSeconds],
  );
  return rows.map(toRun);
}

export async function runsOf(db: Db, subject: string): Promise<Run[]> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM consort_app.runs WHERE subject = $1 ORDER BY id`, [subject]);
  return rows.map(toRun);
}
