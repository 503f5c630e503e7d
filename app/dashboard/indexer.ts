/**
 * Indexing a pull request's head for the dashboard: one call for the commit's tree, then only the
 * blobs under `.consort/features/` whose sha the index has not seen (in any pull request of the
 * repository); transcripts wait until someone opens their turn. Everything an agent wrote is parsed
 * with the lane's own schemas; a record that does not parse is left out, never guessed at. The
 * feature rows, files and turns of the pull request are replaced in one transaction, and the
 * change is announced to every App process.
 */
import { createHash } from 'node:crypto';
import { GatesFile } from '../../src/conductor/artifacts.js';
import { LogEvent } from '../../src/conductor/events.js';
import { TurnRecord } from '../../src/conductor/state.js';
import { summarize } from '../../src/dashboard/records.js';
import { FEATURES_DIR, StateFile } from '../../src/lanes/tdd/store.js';
import type { RepoRef as Repo } from '../../src/ports/github.js';
import type { Store } from '../store/db.js';
import { CHANGE_CHANNEL } from './index-store.js';
import { codeTreeLines, type RecordsApi } from './github-records.js';

export interface PullHead extends Repo {
  repositoryId: number;
  installationId: number;
  pr: number;
  headSha: string;
  headRef: string;
}

export interface IndexOutcome {
  features: string[];
  /** Blobs fetched from GitHub (unchanged ones are not). */
  fetched: number;
}

const FEATURE_NAME = /^\d{3,}-[a-z0-9][a-z0-9-]*$/;
/**
 * A record larger than this is neither fetched nor kept (anyone who can open a pull request, a fork
 * included, chooses what its head holds; 1,000 turns are about 1 MB). Such a file is indexed
 * without content, as if unreadable; a transcript that large is left out.
 */
export const MAX_RECORD_BYTES = 8 * 1024 * 1024;
/** Blobs fetched in one indexing at most (the lane's own files first); the rest wait for the next push. */
export const MAX_FETCHES = 2_000;
const CORE = new Set(['state.json', 'gates.json', 'turns.jsonl', 'events.jsonl']);
const LAZY = /^transcripts\//;
const PREFIX = `${FEATURES_DIR}/`;

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function jsonLines<T>(
  text: string | null,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
): T[] {
  const out: T[] = [];
  for (const line of (text ?? '').split('\n')) {
    if (line.trim() === '') continue;
    const parsed = schema.safeParse(parseJson(line));
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}

async function inBatches<T, R>(items: readonly T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}

export async function indexPull(store: Store, api: RecordsApi, head: PullHead): Promise<IndexOutcome> {
  const { entries, truncated } = await api.tree(head, head.headSha);
  const codeTreeHash = truncated ? null : createHash('sha256').update(codeTreeLines(entries).join('\n')).digest('hex');
  // feature → path inside the folder → blob sha
  const found = new Map<string, Map<string, string>>();
  const oversized = new Set<string>();
  for (const e of entries) {
    if (e.type !== 'blob' || !e.path.startsWith(PREFIX)) continue;
    const [feature, ...rest] = e.path.slice(PREFIX.length).split('/');
    if (!feature || !FEATURE_NAME.test(feature) || rest.length === 0) continue;
    const file = rest.join('/');
    const tooLarge = (e.size ?? 0) > MAX_RECORD_BYTES;
    if (tooLarge && LAZY.test(file)) continue;
    if (tooLarge) oversized.add(e.sha);
    const files = found.get(feature) ?? new Map<string, string>();
    files.set(file, e.sha);
    found.set(feature, files);
  }
  const fetchable = [...found.values()].flatMap((files) =>
    [...files].filter(([p, sha]) => !LAZY.test(p) && !oversized.has(sha)),
  );
  const wanted = [
    ...new Set(
      [...fetchable.filter(([p]) => CORE.has(p)), ...fetchable.filter(([p]) => !CORE.has(p))].map(([, sha]) => sha),
    ),
  ];
  const known = new Map<string, string>();
  if (wanted.length > 0) {
    const { rows } = await store.pool.query(
      `SELECT DISTINCT ON (blob_sha) blob_sha, content FROM consort_app.dashboard_files WHERE repository_id = $1 AND blob_sha = ANY($2) AND content IS NOT NULL`,
      [head.repositoryId, wanted],
    );
    for (const r of rows) known.set(String(r.blob_sha), String(r.content));
  }
  const missing = wanted.filter((sha) => !known.has(sha)).slice(0, MAX_FETCHES);
  const fetched = await inBatches(missing, 8, async (sha) => [sha, await api.blob(head, sha)] as const);
  for (const [sha, text] of fetched) known.set(sha, text);

  const features: string[] = [];
  await store.tx(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `consort_app:dashboard:${head.repositoryId}:${head.pr}`,
    ]);
    const { rows: before } = await tx.query(
      `SELECT feature, path, blob_sha FROM consort_app.dashboard_files WHERE repository_id = $1 AND pr = $2 AND path = 'turns.jsonl'`,
      [head.repositoryId, head.pr],
    );
    const turnsBlob = new Map(before.map((r) => [String(r.feature), String(r.blob_sha)]));
    await tx.query(
      'DELETE FROM consort_app.dashboard_features WHERE repository_id = $1 AND pr = $2 AND NOT (feature = ANY($3))',
      [head.repositoryId, head.pr, [...found.keys()]],
    );
    for (const [feature, files] of found) {
      const text = (p: string) => {
        const sha = files.get(p);
        return sha === undefined ? null : (known.get(sha) ?? null);
      };
      const stateFile = StateFile.safeParse(parseJson(text('state.json')));
      if (!stateFile.success) continue; // not a feature the conductor wrote (or not yet)
      const state = stateFile.data.state;
      const gates = GatesFile.safeParse(parseJson(text('gates.json')));
      const gatesFile: GatesFile = gates.success ? gates.data : { version: 1, feature, gates: {} };
      const turns = jsonLines(text('turns.jsonl'), TurnRecord);
      const events = jsonLines(text('events.jsonl'), LogEvent);
      const summary = summarize({ state, turns, events, gates: gatesFile, pr: head.pr });
      await tx.query(
        `INSERT INTO consort_app.dashboard_features (repository_id, pr, feature, installation_id, owner, repo, head_sha, head_ref, code_tree_hash, state, gates, summary, indexed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now())
         ON CONFLICT (repository_id, pr, feature) DO UPDATE SET installation_id = EXCLUDED.installation_id, owner = EXCLUDED.owner, repo = EXCLUDED.repo,
           head_sha = EXCLUDED.head_sha, head_ref = EXCLUDED.head_ref, code_tree_hash = EXCLUDED.code_tree_hash, state = EXCLUDED.state, gates = EXCLUDED.gates,
           summary = EXCLUDED.summary, indexed_at = now()`,
        [
          head.repositoryId,
          head.pr,
          feature,
          head.installationId,
          head.owner,
          head.repo,
          head.headSha,
          head.headRef,
          codeTreeHash,
          JSON.stringify(state),
          JSON.stringify(gatesFile),
          JSON.stringify(summary),
        ],
      );
      const paths = [...files.keys()];
      await tx.query(
        'DELETE FROM consort_app.dashboard_files WHERE repository_id = $1 AND pr = $2 AND feature = $3 AND NOT (path = ANY($4))',
        [head.repositoryId, head.pr, feature, paths],
      );
      await tx.query(
        `INSERT INTO consort_app.dashboard_files (repository_id, pr, feature, path, blob_sha, content)
         SELECT $1, $2, $3, f.path, f.sha, f.content FROM unnest($4::text[], $5::text[], $6::text[]) AS f(path, sha, content)
         ON CONFLICT (repository_id, pr, feature, path) DO UPDATE SET blob_sha = EXCLUDED.blob_sha,
           content = CASE WHEN consort_app.dashboard_files.blob_sha = EXCLUDED.blob_sha THEN COALESCE(EXCLUDED.content, consort_app.dashboard_files.content) ELSE EXCLUDED.content END`,
        [
          head.repositoryId,
          head.pr,
          feature,
          paths,
          paths.map((p) => files.get(p)!),
          paths.map((p) => (LAZY.test(p) ? null : text(p))),
        ],
      );
      if (turnsBlob.get(feature) !== files.get('turns.jsonl')) {
        await tx.query(
          'DELETE FROM consort_app.dashboard_turns WHERE repository_id = $1 AND pr = $2 AND feature = $3',
          [head.repositoryId, head.pr, feature],
        );
        await tx.query(
          `INSERT INTO consort_app.dashboard_turns (repository_id, pr, feature, seq, turn_id, record)
           SELECT $1, $2, $3, t.ord, t.e ->> 'id', t.e FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS t(e, ord)`,
          [head.repositoryId, head.pr, feature, JSON.stringify(turns)],
        );
      }
      features.push(feature);
      await tx.query('SELECT pg_notify($1, $2)', [
        CHANGE_CHANNEL,
        JSON.stringify({ repositoryId: head.repositoryId, feature }),
      ]);
    }
  });
  return { features, fetched: missing.length };
}
