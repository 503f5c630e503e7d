/**
 * The conductor's state: where a feature is (phase and step as string-literal unions), what it has
 * proven so far, and the policy it runs under. Zod schemas are the single source of the types
 * because the state is persisted in `.consort/features/<F>/state.json` and read back on resume.
 */
import { z } from 'zod';
import { DESIGN_ROLES, ROLES } from './roles.js';

export const STATE_VERSION = 1;

export const PHASES = ['design', 'build', 'merge', 'done'] as const;
export type Phase = (typeof PHASES)[number];

/**
 * `design` a design role's turn · `gate` a gate to check · `awaiting-approval` stopped for a human ·
 * `baseline` the suite must be green before the first cycle · `red` … `review` one test-list item's
 * cycle (`prove-*` are the conductor's own suite runs) · `escalated`, `stalled`, `done` stop the run.
 */
export const STEPS = [
  'design', 'gate', 'awaiting-approval', 'baseline',
  'red', 'prove-red', 'green', 'prove-green', 'refactor', 'prove-refactor', 'review',
  'escalated', 'stalled', 'done',
] as const;
export type Step = (typeof STEPS)[number];

export const GATES = ['plan', 'test_list', 'spec', 'merge', 'deploy'] as const;
export type GateName = (typeof GATES)[number];
export const OPTIONAL_GATES = ['plan', 'test_list', 'deploy'] as const;
export type OptionalGate = (typeof OPTIONAL_GATES)[number];

/** What CONSORT_STEP says to an agent. */
export const TURN_STEPS = ['request', 'spec', 'architecture', 'db-design', 'test-list', 'ux', 'red', 'green', 'refactor', 'review'] as const;
export type TurnStep = (typeof TURN_STEPS)[number];

export const ITEM_STATUSES = ['pending', 'red', 'green', 'refactored'] as const;
export type ItemStatus = (typeof ITEM_STATUSES)[number];

export const PROOF_PURPOSES = ['baseline', 'red', 'green', 'refactor'] as const;
export type ProofPurpose = (typeof PROOF_PURPOSES)[number];

export const Item = z.object({
  id: z.string().regex(/^T[1-9][0-9]*$/),
  ac: z.string(),
  kind: z.enum(['behavior', 'fitness']),
  title: z.string(),
  status: z.enum(ITEM_STATUSES),
});
export type Item = z.infer<typeof Item>;

export const Policy = z.object({
  /** The feature folder relative to the workspace. */
  featureDir: z.string(),
  design: z.array(z.enum(DESIGN_ROLES)),
  optionalGates: z.array(z.enum(OPTIONAL_GATES)),
  gateMode: z.enum(['human', 'proxy']),
  rejectBornGreen: z.boolean(),
  /** Informed retries a role gets after a refused, failed or incomplete turn, before escalation. */
  retries: z.number().int().min(0),
  /** GREEN/REFACTOR repair rounds after a failing proof, before escalation. */
  repairRounds: z.number().int().min(0),
  /** Where tests live (expanded globs). */
  tests: z.array(z.string()),
  /** Each role's writes (expanded globs). */
  writes: z.record(z.enum(ROLES), z.array(z.string())),
  /** Paths no turn is judged on: outputs of the suite itself (its JUnit reports). */
  ignore: z.array(z.string()),
  /** Competing GREEN attempts per item (1: none). */
  experiments: z.number().int().min(1),
  /** The test harness (globs): how the suite runs and what it expects. Test-owned: only the navigator, in RED, changes it. */
  harness: z.array(z.string()).default([]),
  /** Paths no agent changes: Consort's configuration, migrations already on the base, the seed. */
  locked: z.array(z.string()).default([]),
});
export type Policy = z.infer<typeof Policy>;

/** A failing proof, bounded, for the repair turn's context pack. */
export const Failure = z.object({
  purpose: z.enum(PROOF_PURPOSES),
  summary: z.string(),
  tests: z.array(z.object({ id: z.string(), state: z.string(), message: z.string().optional() })),
  output: z.string(),
});
export type Failure = z.infer<typeof Failure>;

export const Stamp = z.object({ at: z.string(), verdict: z.string(), branch: z.string().nullable(), summary: z.string().optional() });
export type Stamp = z.infer<typeof Stamp>;

export const Timing = z.object({ wallMs: z.number(), agentMs: z.number(), suiteMs: z.number(), overheadMs: z.number() });
export type Timing = z.infer<typeof Timing>;

export const Cycle = z.object({
  number: z.number().int().min(1),
  item: z.string(),
  ac: z.string(),
  /** Test files the RED turn added or changed. */
  testFiles: z.array(z.string()),
  /** Ids of the item's tests, as the RED proof found them. */
  tests: z.array(z.string()),
  red: Stamp.nullable(),
  green: Stamp.nullable(),
  refactor: Stamp.nullable(),
  review: Stamp.nullable(),
  rejections: z.array(z.object({ step: z.string(), verdict: z.string(), reason: z.string(), at: z.string() })),
  repairs: z.number().int(),
  proofs: z.number().int(),
  timing: Timing,
});
export type Cycle = z.infer<typeof Cycle>;

export const Usage = z.object({ inputTokens: z.number().min(0), outputTokens: z.number().min(0), costUsd: z.number().min(0).optional() });
export type Usage = z.infer<typeof Usage>;

export const TURN_VERDICTS = ['accepted', 'refused', 'failed', 'incomplete', 'rejected'] as const;

/** One line of turns.jsonl. */
export const TurnRecord = z.object({
  version: z.literal(1),
  id: z.string(),
  feature: z.string(),
  role: z.enum(ROLES),
  step: z.enum(TURN_STEPS),
  item: z.string().nullable(),
  attempt: z.number().int(),
  backend: z.string(),
  model: z.string().nullable(),
  startedAt: z.string(),
  durationMs: z.number(),
  usage: Usage,
  filesChanged: z.array(z.string()),
  /** The commit the turn started from (what a rejected turn is reverted to). */
  base: z.string().optional(),
  verdict: z.enum(TURN_VERDICTS),
  reason: z.string().optional(),
  refused: z.array(z.string()).optional(),
  branch: z.string().nullable(),
  context: z.object({ bytes: z.number(), sha256: z.string() }),
  suite: z.string().nullable(),
  /** What the agent says it did (its full transcript is in transcripts/<id>.txt). */
  summary: z.string().optional(),
});
export type TurnRecord = z.infer<typeof TurnRecord>;

export const Escalation = z.object({ reason: z.string(), step: z.enum(STEPS), at: z.string() });

export const ConductorState = z.object({
  version: z.literal(STATE_VERSION),
  feature: z.string(),
  phase: z.enum(PHASES),
  step: z.enum(STEPS),
  /** null until the first `run.started`. */
  policy: Policy.nullable(),
  /** Index into the design plan (roles and gates before the build). */
  designStop: z.number().int().min(0),
  gate: z.enum(GATES).nullable(),
  userFacing: z.boolean(),
  items: z.array(Item),
  /** Index of the item being built; -1 before the build. */
  current: z.number().int(),
  cycle: Cycle.nullable(),
  cycles: z.number().int().min(0),
  attempt: z.number().int().min(0),
  repair: z.number().int().min(0),
  /** For the next turn: what was refused or missing the last time. */
  note: z.string().nullable(),
  failure: Failure.nullable(),
  /** Ids of the tests that passed at the last green proof; null before the baseline. */
  passing: z.array(z.string()).nullable(),
  /** Test files frozen at RED: path → sha256 of the normalized content. */
  frozen: z.record(z.string(), z.string()),
  /** An accepted turn whose record waits for its proof's suite summary. */
  pendingTurn: TurnRecord.nullable(),
  turns: z.number().int().min(0),
  logSeq: z.number().int().min(0),
  /** Hash last surfaced per gate, so a gate is announced once per content. */
  surfaced: z.record(z.string(), z.string()),
  escalation: Escalation.nullable(),
  /** Stall guard: the last action and the state it was planned from. */
  lastAction: z.object({ key: z.string(), fingerprint: z.string() }).nullable(),
});
export type ConductorState = z.infer<typeof ConductorState>;

export function initialState(feature: string): ConductorState {
  return {
    version: STATE_VERSION, feature, phase: 'design', step: 'design', policy: null, designStop: 0, gate: null, userFacing: false,
    items: [], current: -1, cycle: null, cycles: 0, attempt: 0, repair: 0, note: null, failure: null, passing: null, frozen: {},
    pendingTurn: null, turns: 0, logSeq: 0, surfaced: {}, escalation: null, lastAction: null,
  };
}

/** Stop states: nothing to do until a human acts (or, for `escalated`, retries). */
export function isStopped(state: ConductorState): boolean {
  return state.step === 'awaiting-approval' || state.step === 'escalated' || state.step === 'stalled' || state.step === 'done';
}
