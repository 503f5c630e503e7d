/**
 * Effects: what the conductor wants done, as data. Exactly one *action* effect (`run-turn`,
 * `prove`, `check-gate`) ends a batch and its result comes back as the next event; the others are
 * records and git operations the driver performs idempotently before it. A batch without an action
 * ends the run (a gate awaits a human, an escalation, done).
 */
import { z } from 'zod';
import { LogEvent } from './events.js';
import { ROLES } from './roles.js';
import { Cycle, Failure, GATES, Item, ITEM_STATUSES, PROOF_PURPOSES, TURN_STEPS, TurnRecord } from './state.js';

export const TurnPlan = z.object({
  id: z.string(),
  role: z.enum(ROLES),
  step: z.enum(TURN_STEPS),
  item: Item.nullable(),
  attempt: z.number().int(),
  note: z.string().nullable(),
  failure: Failure.nullable(),
  /**
   * The turn's database branch (DATABASE_URL), with the current migrations applied: one per cycle
   * (and one for the design), shared by the cycle's turns; proofs never run on it.
   */
  branch: z.string(),
  /**
   * A branch the driver may fork from the baseline while this turn runs: the proof's after a
   * RED/GREEN/REFACTOR turn, the next cycle's sandbox during a REVIEW. A hint; names stay the conductor's.
   */
  forkAhead: z
    .object({
      branch: z.string(),
      use: z.enum(['proof', 'sandbox']),
      /** GREEN only: the branch RED's tree is proven again on beside the proof (the prove effect's `recheck`). */
      recheck: z.string().optional(),
    })
    .nullable(),
  /** One of N competing GREEN attempts, with the branch its proof runs on. */
  experiment: z
    .object({ index: z.number().int().min(1), of: z.number().int().min(2), proofBranch: z.string() })
    .nullable(),
  /** Frozen test files whose hashes the driver reports after the turn. */
  frozen: z.array(z.string()),
  /** The role's effective write scope, for the agent's information. */
  writes: z.array(z.string()),
});
export type TurnPlan = z.infer<typeof TurnPlan>;

export const Approval = z.object({ approver: z.string(), at: z.string(), hash: z.string(), proxy: z.boolean() });

/** cycles/cycle-NNN.json */
export const CycleRecord = Cycle.omit({ proofs: true, number: true }).extend({
  version: z.literal(1),
  cycle: z.number().int(),
});
export type CycleRecord = z.infer<typeof CycleRecord>;

export const Effect = z.discriminatedUnion('type', [
  z.object({ type: z.literal('run-turn'), turn: TurnPlan }),
  z.object({
    type: z.literal('prove'),
    purpose: z.enum(PROOF_PURPOSES),
    item: z.string().nullable(),
    branch: z.string(),
    /** Files whose hashes the driver reports (frozen tests). */
    hash: z.array(z.string()),
    /** As for turns: a branch to fork while the suite runs (the first cycle's sandbox during the baseline). */
    forkAhead: z.object({ branch: z.string(), use: z.enum(['proof', 'sandbox']) }).nullable(),
    /**
     * GREEN and REFACTOR: RED's tree (the GREEN turn's base), proven again beside it on a branch of its own,
     * so a test that passes by the clock, the environment or what an earlier run left is told from
     * one the implementation made pass (src/conductor/proofs.ts judgeRecheck).
     */
    recheck: z.object({ commit: z.string(), branch: z.string() }).nullable().optional(),
  }),
  z.object({ type: z.literal('check-gate'), gate: z.enum(GATES) }),
  /** N GREEN turns side by side, each in its own git worktree and database branches, each proven. */
  z.object({ type: z.literal('run-experiments'), turns: z.array(TurnPlan).min(2) }),
  /** Bring the picked experiment's change into the workspace and commit it. */
  z.object({
    type: z.literal('adopt-experiment'),
    turn: z.string(),
    index: z.number().int(),
    base: z.string(),
    message: z.string(),
  }),
  /** Stage the paths (and the conductor's own records) and commit, if anything changed. */
  z.object({ type: z.literal('commit'), message: z.string(), paths: z.array(z.string()) }),
  /** Throw a refused turn away: back to the commit it started from. */
  z.object({ type: z.literal('revert'), base: z.string(), paths: z.array(z.string()) }),
  z.object({ type: z.literal('append-turn'), record: TurnRecord }),
  z.object({ type: z.literal('write-cycle'), record: CycleRecord }),
  z.object({ type: z.literal('set-item-status'), item: z.string(), status: z.enum(ITEM_STATUSES) }),
  z.object({ type: z.literal('record-approval'), gate: z.enum(GATES), approval: Approval }),
  z.object({ type: z.literal('log'), event: LogEvent }),
  /** Ask a human: the CLI prints it, the App and Action post it on the pull request. */
  z.object({
    type: z.literal('surface-gate'),
    gate: z.enum(GATES),
    hash: z.string(),
    /** Why the artifacts cannot be approved yet. */
    problems: z.array(z.string()),
    /** Not problems: lines the person approving reads first (proxy mode does not pass them). */
    flags: z.array(z.string()).optional(),
  }),
  z.object({
    type: z.literal('stop'),
    reason: z.enum(['awaiting-approval', 'escalated', 'stalled', 'done']),
    message: z.string(),
  }),
]);
export type Effect = z.infer<typeof Effect>;

export type ActionEffect = Extract<Effect, { type: 'run-turn' | 'prove' | 'check-gate' | 'run-experiments' }>;

export function isAction(effect: Effect): effect is ActionEffect {
  return (
    effect.type === 'run-turn' ||
    effect.type === 'prove' ||
    effect.type === 'check-gate' ||
    effect.type === 'run-experiments'
  );
}

/** Identity of an action, for the stall guard and for idempotent re-execution. */
export function actionKey(effect: ActionEffect): string {
  if (effect.type === 'run-turn') return `run-turn:${effect.turn.id}`;
  if (effect.type === 'prove') return `prove:${effect.purpose}:${effect.item ?? '-'}:${effect.branch}`;
  if (effect.type === 'run-experiments') return `run-experiments:${effect.turns.map((t) => t.id).join(',')}`;
  return `check-gate:${effect.gate}`;
}
