/**
 * Human approval gates of a pull request. The TDD lane opens a gate with the hash of the artifacts
 * it gates; `/consort approve|reject` decides it. A decision records who, when, the head SHA and
 * the artifact hash it was made on, so a later push or a changed artifact makes an approval stale
 * (the gate is pending again). Every decision is also appended to gate_decisions.
 */
import { GATE_NAME } from '../../github/commands.js';
import { num, type Db } from './db.js';

export { GATE_NAME };

export type GateState = 'pending' | 'approved' | 'rejected' | 'stale';

export interface Gate {
  id: number;
  repositoryId: number;
  pr: number;
  name: string;
  state: GateState;
  artifactHash: string;
  headSha: string;
  decidedBy: string | null;
  decidedAt: Date | null;
  decidedHeadSha: string | null;
  decidedArtifactHash: string | null;
  reason: string | null;
}

export interface GateDecision {
  decision: 'approved' | 'rejected' | 'stale';
  actor: string;
  headSha: string;
  artifactHash: string;
  reason: string | null;
  decidedAt: Date;
}

export const FORK_RUN_GATE = 'run';

function toGate(r: Record<string, unknown>): Gate {
  return {
    id: num(r.id), repositoryId: num(r.repository_id), pr: num(r.pr), name: String(r.name), state: r.state as GateState,
    artifactHash: String(r.artifact_hash), headSha: String(r.head_sha), decidedBy: (r.decided_by as string | null) ?? null,
    decidedAt: (r.decided_at as Date | null) ?? null, decidedHeadSha: (r.decided_head_sha as string | null) ?? null,
    decidedArtifactHash: (r.decided_artifact_hash as string | null) ?? null, reason: (r.reason as string | null) ?? null,
  };
}

/**
 * Open a gate, or refresh it with the current artifacts: an approval made on other artifacts
 * becomes stale; one made on these artifacts stands.
 */
export async function openGate(db: Db, g: { repositoryId: number; pr: number; name: string; artifactHash: string; headSha: string }): Promise<Gate> {
  if (!GATE_NAME.test(g.name) || g.name === FORK_RUN_GATE) throw new Error(`invalid gate name "${g.name}"`);
  const { rows } = await db.query(
    `INSERT INTO consort_app.gates (repository_id, pr, name, artifact_hash, head_sha) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (repository_id, pr, name) DO UPDATE SET artifact_hash = EXCLUDED.artifact_hash, head_sha = EXCLUDED.head_sha, updated_at = now(),
       state = CASE WHEN consort_app.gates.state = 'approved' AND consort_app.gates.decided_artifact_hash IS DISTINCT FROM EXCLUDED.artifact_hash THEN 'stale'
                    WHEN consort_app.gates.state = 'rejected' AND consort_app.gates.decided_artifact_hash IS DISTINCT FROM EXCLUDED.artifact_hash THEN 'pending'
                    ELSE consort_app.gates.state END
     RETURNING *`,
    [g.repositoryId, g.pr, g.name, g.artifactHash, g.headSha],
  );
  return toGate(rows[0]);
}

export async function listGates(db: Db, repositoryId: number, pr: number): Promise<Gate[]> {
  const { rows } = await db.query('SELECT * FROM consort_app.gates WHERE repository_id = $1 AND pr = $2 ORDER BY name', [repositoryId, pr]);
  return rows.map(toGate);
}

export async function decideGate(db: Db, gateId: number, d: { decision: 'approved' | 'rejected'; actor: string; headSha: string; reason: string | null }): Promise<Gate> {
  const { rows } = await db.query(
    `UPDATE consort_app.gates SET state = $2, decided_by = $3, decided_at = now(), decided_head_sha = $4, decided_artifact_hash = artifact_hash,
       reason = $5, updated_at = now() WHERE id = $1 RETURNING *`,
    [gateId, d.decision, d.actor, d.headSha, d.reason],
  );
  const gate = toGate(rows[0]);
  await db.query(
    'INSERT INTO consort_app.gate_decisions (gate_id, decision, actor, head_sha, artifact_hash, reason) VALUES ($1, $2, $3, $4, $5, $6)',
    [gateId, d.decision, d.actor, d.headSha, gate.artifactHash, d.reason],
  );
  return gate;
}

/** A push to the pull request: approvals given on another head SHA no longer hold. */
export async function staleApprovals(db: Db, repositoryId: number, pr: number, headSha: string): Promise<Gate[]> {
  const { rows } = await db.query(
    `UPDATE consort_app.gates SET state = 'stale', updated_at = now()
     WHERE repository_id = $1 AND pr = $2 AND state = 'approved' AND decided_head_sha IS DISTINCT FROM $3 RETURNING *`,
    [repositoryId, pr, headSha],
  );
  for (const r of rows) {
    await db.query(
      `INSERT INTO consort_app.gate_decisions (gate_id, decision, actor, head_sha, artifact_hash, reason) VALUES ($1, 'stale', 'consort', $2, $3, $4)`,
      [r.id, headSha, r.artifact_hash, `new commits pushed (${headSha.slice(0, 7)}) after the approval`],
    );
  }
  return rows.map(toGate);
}

export async function gateHistory(db: Db, gateId: number): Promise<GateDecision[]> {
  const { rows } = await db.query('SELECT * FROM consort_app.gate_decisions WHERE gate_id = $1 ORDER BY id', [gateId]);
  return rows.map((r) => ({
    decision: r.decision as GateDecision['decision'], actor: String(r.actor), headSha: String(r.head_sha), artifactHash: String(r.artifact_hash),
    reason: (r.reason as string | null) ?? null, decidedAt: r.decided_at as Date,
  }));
}
