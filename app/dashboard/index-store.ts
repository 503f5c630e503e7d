/**
 * The dashboard's index in the App's store (migrations/1764633600000_consort_app_dashboard.sql):
 * features at each pull request's head, their files by blob, their turns by position, and the
 * App's finished checks. Parameterized SQL only; a change is announced on the channel
 * `consort_dashboard` (delivered at commit, to every App process) so open pages refresh.
 */
import { z } from 'zod';
import { num, numOrNull, type Db } from '../store/db.js';
import type { Run, RunResult } from '../store/runs.js';

export const CHANGE_CHANNEL = 'consort_dashboard';

export interface IndexedFeature {
  repositoryId: number;
  pr: number;
  feature: string;
  installationId: number;
  owner: string;
  repo: string;
  headSha: string;
  headRef: string;
  codeTreeHash: string | null;
  state: unknown;
  gates: unknown;
  summary: unknown;
  indexedAt: Date;
}

export interface IndexedRepository {
  repositoryId: number;
  installationId: number;
  owner: string;
  repo: string;
}

const FEATURE_COLUMNS =
  'repository_id, pr, feature, installation_id, owner, repo, head_sha, head_ref, code_tree_hash, state, gates, summary, indexed_at';

function toFeature(r: Record<string, unknown>): IndexedFeature {
  return {
    repositoryId: num(r.repository_id),
    pr: num(r.pr),
    feature: String(r.feature),
    installationId: num(r.installation_id),
    owner: String(r.owner),
    repo: String(r.repo),
    headSha: String(r.head_sha),
    headRef: String(r.head_ref),
    codeTreeHash: (r.code_tree_hash as string | null) ?? null,
    state: r.state,
    gates: r.gates,
    summary: r.summary,
    indexedAt: r.indexed_at as Date,
  };
}

/** Repositories the App knows (it saw a pull request of them), by name. */
export async function knownRepositories(db: Db): Promise<IndexedRepository[]> {
  const { rows } = await db.query(
    `SELECT DISTINCT ON (repository_id) repository_id, installation_id, owner, repo FROM consort_app.pull_requests ORDER BY repository_id, updated_at DESC`,
  );
  return rows
    .map((r) => ({
      repositoryId: num(r.repository_id),
      installationId: num(r.installation_id),
      owner: String(r.owner),
      repo: String(r.repo),
    }))
    .sort((a, b) => `${a.owner}/${a.repo}`.localeCompare(`${b.owner}/${b.repo}`));
}

export async function repositoryByName(db: Db, owner: string, repo: string): Promise<IndexedRepository | undefined> {
  const { rows } = await db.query(
    `SELECT repository_id, installation_id, owner, repo FROM consort_app.pull_requests WHERE lower(owner) = lower($1) AND lower(repo) = lower($2) ORDER BY updated_at DESC LIMIT 1`,
    [owner, repo],
  );
  const r = rows[0];
  return r
    ? {
        repositoryId: num(r.repository_id),
        installationId: num(r.installation_id),
        owner: String(r.owner),
        repo: String(r.repo),
      }
    : undefined;
}

/** Each feature once: where it was indexed last (a feature carried from one pull request to the next shows its newest). */
export async function listFeatures(db: Db, repositoryId: number): Promise<IndexedFeature[]> {
  const { rows } = await db.query(
    `SELECT DISTINCT ON (feature) ${FEATURE_COLUMNS} FROM consort_app.dashboard_features WHERE repository_id = $1 ORDER BY feature, indexed_at DESC, pr DESC`,
    [repositoryId],
  );
  return rows.map(toFeature);
}

export async function getFeature(db: Db, repositoryId: number, feature: string): Promise<IndexedFeature | undefined> {
  const { rows } = await db.query(
    `SELECT ${FEATURE_COLUMNS} FROM consort_app.dashboard_features WHERE repository_id = $1 AND feature = $2 ORDER BY indexed_at DESC, pr DESC LIMIT 1`,
    [repositoryId, feature],
  );
  return rows[0] ? toFeature(rows[0]) : undefined;
}

export interface FileRow {
  path: string;
  blobSha: string;
  content: string | null;
}

/** A feature's files (paths inside its folder); `prefix` narrows them (`cycles/`). */
export async function featureFiles(
  db: Db,
  f: Pick<IndexedFeature, 'repositoryId' | 'pr' | 'feature'>,
  prefix = '',
): Promise<FileRow[]> {
  const { rows } = await db.query(
    `SELECT path, blob_sha, content FROM consort_app.dashboard_files WHERE repository_id = $1 AND pr = $2 AND feature = $3 AND starts_with(path, $4) ORDER BY path`,
    [f.repositoryId, f.pr, f.feature, prefix],
  );
  return rows.map((r) => ({
    path: String(r.path),
    blobSha: String(r.blob_sha),
    content: (r.content as string | null) ?? null,
  }));
}

export async function featureFile(
  db: Db,
  f: Pick<IndexedFeature, 'repositoryId' | 'pr' | 'feature'>,
  path: string,
): Promise<FileRow | undefined> {
  const { rows } = await db.query(
    'SELECT path, blob_sha, content FROM consort_app.dashboard_files WHERE repository_id = $1 AND pr = $2 AND feature = $3 AND path = $4',
    [f.repositoryId, f.pr, f.feature, path],
  );
  const r = rows[0];
  return r
    ? { path: String(r.path), blobSha: String(r.blob_sha), content: (r.content as string | null) ?? null }
    : undefined;
}

/** A blob's content fetched later (a transcript opened for the first time). */
export async function fillContent(db: Db, repositoryId: number, blobSha: string, content: string): Promise<void> {
  await db.query(
    'UPDATE consort_app.dashboard_files SET content = $3 WHERE repository_id = $1 AND blob_sha = $2 AND content IS NULL',
    [repositoryId, blobSha, content],
  );
}

export async function turnCount(db: Db, f: Pick<IndexedFeature, 'repositoryId' | 'pr' | 'feature'>): Promise<number> {
  const { rows } = await db.query(
    'SELECT count(*) AS n FROM consort_app.dashboard_turns WHERE repository_id = $1 AND pr = $2 AND feature = $3',
    [f.repositoryId, f.pr, f.feature],
  );
  return num(rows[0]?.n ?? 0);
}

/** Turns `offset`… in file order. */
export async function turnRecords(
  db: Db,
  f: Pick<IndexedFeature, 'repositoryId' | 'pr' | 'feature'>,
  offset = 0,
  limit = 100_000,
): Promise<unknown[]> {
  const { rows } = await db.query(
    `SELECT record FROM consort_app.dashboard_turns WHERE repository_id = $1 AND pr = $2 AND feature = $3 AND seq > $4 ORDER BY seq LIMIT $5`,
    [f.repositoryId, f.pr, f.feature, offset, limit],
  );
  return rows.map((r) => r.record as unknown);
}

/** The last record with this id (a turn retried under the same id shows its last attempt). */
export async function turnRecord(
  db: Db,
  f: Pick<IndexedFeature, 'repositoryId' | 'pr' | 'feature'>,
  id: string,
): Promise<unknown> {
  const { rows } = await db.query(
    'SELECT record FROM consort_app.dashboard_turns WHERE repository_id = $1 AND pr = $2 AND feature = $3 AND turn_id = $4 ORDER BY seq DESC LIMIT 1',
    [f.repositoryId, f.pr, f.feature, id],
  );
  return rows[0]?.record ?? null;
}

// ---- checks ----

export interface CheckRow {
  runId: number;
  pr: number | null;
  headSha: string;
  conclusion: string;
  startedAt: Date;
  durationMs: number;
  report: unknown;
}

const toCheck = (r: Record<string, unknown>): CheckRow => ({
  runId: num(r.run_id),
  pr: numOrNull(r.pr),
  headSha: String(r.head_sha),
  conclusion: String(r.conclusion),
  startedAt: r.started_at as Date,
  durationMs: num(r.duration_ms),
  report: r.report ?? null,
});

/** A finished check, for the history (called once per run, after its outcome is recorded). */
export async function recordCheck(db: Db, run: Run, result: RunResult, report: unknown): Promise<void> {
  await db.query(
    `INSERT INTO consort_app.check_history (run_id, repository_id, pr, head_sha, conclusion, started_at, duration_ms, report)
     SELECT id, repository_id, pr, head_sha, $2, COALESCE(started_at, created_at), GREATEST(0, (extract(epoch FROM (COALESCE(finished_at, now()) - COALESCE(started_at, created_at))) * 1000)::bigint), $3
     FROM consort_app.runs WHERE id = $1
     ON CONFLICT (run_id) DO UPDATE SET conclusion = EXCLUDED.conclusion, duration_ms = EXCLUDED.duration_ms, report = EXCLUDED.report`,
    [run.id, result.conclusion, report === null || report === undefined ? null : JSON.stringify(report)],
  );
  await db.query('SELECT pg_notify($1, $2)', [
    CHANGE_CHANNEL,
    JSON.stringify({ repositoryId: run.repositoryId, feature: null }),
  ]);
}

/** Newest first; `withReport` false leaves the (large) report out. */
export async function checkPage(
  db: Db,
  repositoryId: number,
  offset: number,
  limit: number,
): Promise<{ rows: CheckRow[]; total: number }> {
  // One statement, so the page and the count are read from one snapshot: two queries side by side
  // (each on a pool connection of its own) could count a check recorded between them that the page
  // had not seen (total 1, no row). A page past the end is the count's row alone.
  const { rows } = await db.query(
    `SELECT t.total, p.run_id, p.pr, p.head_sha, p.conclusion, p.started_at, p.duration_ms, p.stages_only
     FROM (SELECT count(*) AS total FROM consort_app.check_history WHERE repository_id = $1) t
     LEFT JOIN LATERAL (
       SELECT run_id, pr, head_sha, conclusion, started_at, duration_ms, report -> 'stages' AS stages_only
       FROM consort_app.check_history WHERE repository_id = $1 ORDER BY run_id DESC OFFSET $2 LIMIT $3
     ) p ON true
     ORDER BY p.run_id DESC`,
    [repositoryId, offset, limit],
  );
  return {
    rows: rows
      .filter((r) => r.run_id !== null)
      .map((r) => toCheck({ ...r, report: r.stages_only === null ? null : { stages: r.stages_only } })),
    total: num(rows[0]?.total ?? 0),
  };
}

export async function lastReport(db: Db, repositoryId: number): Promise<unknown> {
  const { rows } = await db.query(
    'SELECT report FROM consort_app.check_history WHERE repository_id = $1 AND report IS NOT NULL ORDER BY run_id DESC LIMIT 1',
    [repositoryId],
  );
  return rows[0]?.report ?? null;
}

/** A notification on CHANGE_CHANNEL. */
export const ChangeNote = z.object({ repositoryId: z.number(), feature: z.string().nullable() });
