/**
 * The conductor's state: where a feature is (one variant per kind of step, so a step's own fields
 * are there exactly when it needs them), what it has proven so far, and the policy it runs under.
 * Zod schemas are the single source of the types because the state is persisted in
 * `.consort/features/<F>/state.json` and read back on resume.
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
  'design',
  'gate',
  'awaiting-approval',
  'baseline',
  'red',
  'prove-red',
  'green',
  'prove-green',
  'refactor',
  'prove-refactor',
  'review',
  'escalated',
  'stalled',
  'done',
] as const;
export type Step = (typeof STEPS)[number];

export const GATES = ['plan', 'test_list', 'spec', 'merge', 'deploy'] as const;
export type GateName = (typeof GATES)[number];
export const OPTIONAL_GATES = ['plan', 'test_list', 'deploy'] as const;
export type OptionalGate = (typeof OPTIONAL_GATES)[number];

/** What CONSORT_STEP says to an agent. */
export const TURN_STEPS = [
  'request',
  'spec',
  'architecture',
  'db-design',
  'test-list',
  'ux',
  'red',
  'green',
  'refactor',
  'review',
] as const;
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

export const Stamp = z.object({
  at: z.string(),
  verdict: z.string(),
  branch: z.string().nullable(),
  summary: z.string().optional(),
});
export type Stamp = z.infer<typeof Stamp>;

export const Timing = z.object({
  wallMs: z.number(),
  agentMs: z.number(),
  suiteMs: z.number(),
  overheadMs: z.number(),
});
export type Timing = z.infer<typeof Timing>;

export const Cycle = z.object({
  number: z.number().int().min(1),
  item: z.string(),
  ac: z.string(),
  /** Test files the RED turn added or changed. */
  testFiles: z.array(z.string()),
  /** Ids of the item's tests, as the RED proof found them. */
  tests: z.array(z.string()),
  /** Those that failed at RED: they must fail again when RED's tree is proven beside GREEN. */
  redFailing: z.array(z.string()).optional(),
  /**
   * RED's commit (the GREEN turn's base), proven again beside every GREEN proof of the cycle — a
   * retried one too, when no turn is pending any more (a proof that could not be judged).
   */
  redTree: z.string().optional(),
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

export const Usage = z.object({
  inputTokens: z.number().min(0),
  outputTokens: z.number().min(0),
  costUsd: z.number().min(0).optional(),
});
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
export type Escalation = z.infer<typeof Escalation>;

/** Stall guard: the last action asked for, the state it was asked from, and the last ids handed out. */
export const LastAction = z.object({
  key: z.string(),
  fingerprint: z.string(),
  /** Number of the highest turn id asked for: a turn id is never asked for twice. */
  turn: z.number().int().min(0).default(0),
  /** The last proof branch asked for: a proof is never asked for twice. */
  proof: z.string().nullable().default(null),
});
export type LastAction = z.infer<typeof LastAction>;

/** What every step carries: the feature's record and its policy. */
const Common = z.object({
  version: z.literal(STATE_VERSION),
  feature: z.string(),
  /** null until the first `run.started`. */
  policy: Policy.nullable(),
  /** Index into the design plan (roles and gates before the build). */
  designStop: z.number().int().min(0),
  userFacing: z.boolean(),
  items: z.array(Item),
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
  /** Turn ids handed out so far: the current turn is `turn-<turns>` (ids are allocated on entering a step, never by `act`). */
  turns: z.number().int().min(0),
  logSeq: z.number().int().min(0),
  /** Hash last surfaced per gate, so a gate is announced once per content. */
  surfaced: z.record(z.string(), z.string()),
  /** Resets at every `run.started` (a new run is a person's decision); an older shape is dropped. */
  lastAction: LastAction.nullable().catch(null),
});

/*
 * Where the feature is: one variant per kind of step, so that what a step needs is there and what
 * it must not have is not (`red` without a cycle, a gate step without a gate). Every variant keeps
 * the same keys (`gate`, `current`, `cycle`, `pendingTurn`, `escalation`), narrowed, so readers and
 * the persisted JSON see one flat shape.
 */
const idle = { gate: z.null(), current: z.literal(-1), cycle: z.null(), pendingTurn: z.null(), escalation: z.null() };
const inCycle = {
  phase: z.literal('build'),
  gate: z.null(),
  current: z.number().int().min(0),
  cycle: Cycle,
  escalation: z.null(),
};

const DesignAt = Common.extend({ step: z.literal('design'), phase: z.literal('design'), ...idle });
/** Checking a gate, or stopped at it for a human; design gates in `design`, `merge`/`deploy` in `merge`. */
const GateAt = Common.extend({
  step: z.literal(['gate', 'awaiting-approval']),
  phase: z.enum(['design', 'merge']),
  ...idle,
  gate: z.enum(GATES),
});
const BaselineAt = Common.extend({ step: z.literal('baseline'), phase: z.literal('build'), ...idle });
/** An agent's turn within a cycle. */
const CycleTurnAt = Common.extend({
  step: z.literal(['red', 'green', 'refactor', 'review']),
  ...inCycle,
  pendingTurn: z.null(),
});
/** The conductor's own suite run within a cycle; `pendingTurn` is the turn it judges (none when a retry proves again). */
const CycleProofAt = Common.extend({
  step: z.literal(['prove-red', 'prove-green', 'prove-refactor']),
  ...inCycle,
  pendingTurn: TurnRecord.nullable(),
});
/** Stopped for a human: the fields of the step it stopped at (`escalation.step`), where `--retry` resumes. */
const StoppedAt = Common.extend({
  step: z.literal(['escalated', 'stalled']),
  phase: z.enum(PHASES),
  gate: z.enum(GATES).nullable(),
  current: z.number().int().min(-1),
  cycle: Cycle.nullable(),
  pendingTurn: TurnRecord.nullable(),
  escalation: Escalation,
});
const DoneAt = Common.extend({ step: z.literal('done'), phase: z.literal('done'), ...idle });

const STOPS: readonly Step[] = ['awaiting-approval', 'escalated', 'stalled', 'done'];

/**
 * State files written before the steps were variants may hold what a variant now leaves out:
 * a gate reopened during the build kept the last cycle (already written to its cycle record).
 */
function withoutLeftovers(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const v = value as Record<string, unknown>;
  if (v.step !== 'gate' && v.step !== 'awaiting-approval') return value;
  return { ...v, cycle: null, current: -1 };
}

export const ConductorState = z.preprocess(
  withoutLeftovers,
  z
    .discriminatedUnion('step', [DesignAt, GateAt, BaselineAt, CycleTurnAt, CycleProofAt, StoppedAt, DoneAt])
    .superRefine((s, ctx) => {
      if (s.step !== 'escalated' && s.step !== 'stalled') return;
      // A stop must be resumable: the step it stopped at, with its fields, is a state of its own.
      const resumed = LiveState.safeParse(withoutLeftovers({ ...s, step: s.escalation.step, escalation: null }));
      if (STOPS.includes(s.escalation.step) || !resumed.success) {
        ctx.addIssue({
          code: 'custom',
          path: ['escalation', 'step'],
          message: `a ${s.step} state cannot resume at ${s.escalation.step} with these fields`,
        });
      }
    }),
);
const LiveState = z.discriminatedUnion('step', [DesignAt, GateAt, BaselineAt, CycleTurnAt, CycleProofAt, DoneAt]);
export type ConductorState = z.infer<typeof ConductorState>;

/** The state at one step, narrowed: `StateAt<'red'>` has its cycle. */
export type StateAt<S extends Step> = ConductorState extends infer U
  ? U extends { step: infer T }
    ? S extends T
      ? U & { step: S }
      : never
    : never
  : never;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A step with its own fields: what a move sets, all at once. */
export type Position = DistributiveOmit<ConductorState, keyof z.infer<typeof Common>>;

export function initialState(feature: string): ConductorState {
  return {
    version: STATE_VERSION,
    feature,
    phase: 'design',
    step: 'design',
    policy: null,
    designStop: 0,
    gate: null,
    userFacing: false,
    items: [],
    current: -1,
    cycle: null,
    cycles: 0,
    attempt: 0,
    repair: 0,
    note: null,
    failure: null,
    passing: null,
    frozen: {},
    pendingTurn: null,
    turns: 0,
    logSeq: 0,
    surfaced: {},
    escalation: null,
    lastAction: null,
  };
}

/** Stop states: nothing to do until a human acts (or, for `escalated`, retries). */
export function isStopped(state: ConductorState): boolean {
  return STOPS.includes(state.step);
}
