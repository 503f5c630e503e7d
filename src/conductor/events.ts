/**
 * What the conductor hears and what it says. Input events are what the lane driver feeds back
 * after running an effect (results of the world, as data). Log events are the append-only
 * `events.jsonl` of a feature, a closed vocabulary the dashboard reads.
 */
import { z } from 'zod';
import type { TestState } from '../suite/junit.js';
import { ROLES } from './roles.js';
import {
  GATES,
  type GateName,
  type Item,
  type Policy,
  type ProofPurpose,
  type TurnStep,
  type Usage,
  PHASES,
  TURN_VERDICTS,
} from './state.js';
import type { Role } from './roles.js';

/** Time the driver spent on one effect, split so the conductor's own overhead can be measured. */
export interface EffectTiming {
  /** Wall-clock of the effect plus the driver's bookkeeping since the previous event. */
  totalMs: number;
  /** Of which the agent backend's turn. */
  agentMs: number;
  /** Of which the project's own suite command. */
  suiteMs: number;
}

export interface FileChange {
  /** Relative to the workspace, `/`-separated; `../` when outside it. */
  path: string;
  status: 'added' | 'modified' | 'deleted';
}

export interface ArtifactCheck {
  file: string;
  status: 'valid' | 'missing' | 'invalid';
  problems: string[];
}

export interface TurnOutcome {
  id: string;
  role: Role;
  step: TurnStep;
  item: string | null;
  attempt: number;
  backend: string;
  model: string | null;
  startedAt: string;
  durationMs: number;
  usage: Usage;
  exit: { kind: 'done' } | { kind: 'failed' | 'timeout' | 'aborted'; message: string };
  summary: string;
  /** The commit the turn started from. */
  base: string;
  changes: FileChange[];
  /** Current sha256 (normalized) of each frozen file; null when it no longer exists. */
  hashes: Record<string, string | null>;
  owed: ArtifactCheck[];
  /**
   * `testOwned`: changed paths whose test-owned content changed; `links`: changed paths that are
   * links out of the workspace; `shadows`: changed modules beside another of the same name (all
   * src/lanes/tdd/harness.ts).
   */
  facts: {
    userFacing?: boolean;
    review?: { verdict: 'approve' | 'changes'; notes: string };
    testOwned?: string[];
    links?: string[];
    /** Where each changed link inside the workspace leads. */
    linkTargets?: Record<string, string>;
    shadows?: string[];
  };
  branch: string | null;
  context: { bytes: number; sha256: string };
}

export interface ProofTest {
  id: string;
  /** Relative to the workspace when the report names the file. */
  file?: string;
  state: TestState;
  loadError?: boolean;
  message?: string;
  /** The exception class when the test failed by one rather than by an assertion (src/conductor/failure-kind.ts). */
  exception?: string;
}

export type ProofOutcome =
  | {
      kind: 'ran';
      exitCode: number | null;
      tests: ProofTest[];
      summary: string;
      output: string;
      hashes: Record<string, string | null>;
    }
  /**
   * The suite could not be judged: migrations failed, no JUnit report, timeout, command not found,
   * or it changed git's own files (the repository's `.git`, git's global files).
   */
  | {
      kind: 'broken';
      reason: 'migrations' | 'no-report' | 'timeout' | 'not-found' | 'git-files' | 'tree-changed';
      message: string;
      output: string;
      hashes: Record<string, string | null>;
    };

export interface GateCheck {
  /** Every gated artifact present and schema-valid. */
  valid: boolean;
  problems: string[];
  /** sha256 over the gated artifacts, normalized. */
  hash: string;
  approval: Approval | null;
  /** Not problems, but what a person must look at before approving (proxy mode does not pass a flagged gate). */
  flags?: string[];
}

export interface Approval {
  approver: string;
  at: string;
  hash: string;
  proxy: boolean;
}

/** One competing GREEN attempt: its turn, its proof (none when the turn itself failed or strayed), its size. */
export interface ExperimentResult {
  turn: TurnOutcome;
  proof: ProofOutcome | null;
  /** Lines added plus lines removed, the first objective criterion. */
  changedLines: number;
  suiteMs: number;
}

export type ConductorEvent =
  | { type: 'run.started'; at: string; policy: Policy; reopened: GateName[]; retry: boolean }
  | { type: 'turn.finished'; at: string; turn: TurnOutcome; timing: EffectTiming }
  | {
      type: 'proof.finished';
      at: string;
      purpose: ProofPurpose;
      item: string | null;
      branch: string;
      outcome: ProofOutcome;
      /** RED's tree proven again beside GREEN (the effect's `recheck`). */
      recheck?: ProofOutcome;
      timing: EffectTiming;
    }
  | {
      type: 'gate.checked';
      at: string;
      gate: GateName;
      check: GateCheck;
      reopened: GateName[];
      /** The test list as the spec gate approves it (only for `spec`). */
      items?: Item[];
      timing: EffectTiming;
    }
  | {
      type: 'experiments.finished';
      at: string;
      results: ExperimentResult[];
      /** RED's tree (the attempts' base) proven again after the attempts (as GREEN's `recheck`). */
      recheck?: ProofOutcome;
      timing: EffectTiming;
    };

// ---- the log vocabulary (events.jsonl) ----

const base = { id: z.string(), at: z.string(), feature: z.string() };
const role = z.enum(ROLES);
const gate = z.enum(GATES);

export const LogEvent = z.discriminatedUnion('type', [
  z.object({ ...base, type: z.literal('phase.start'), phase: z.enum(PHASES) }),
  z.object({ ...base, type: z.literal('phase.end'), phase: z.enum(PHASES) }),
  z.object({
    ...base,
    type: z.literal('handoff'),
    from: z.union([role, z.literal('conductor')]),
    to: role,
    step: z.string(),
    item: z.string().nullable(),
  }),
  z.object({
    ...base,
    type: z.literal('artifact.written'),
    file: z.string(),
    role: z.union([role, z.literal('conductor')]),
  }),
  z.object({
    ...base,
    type: z.literal('gate.surfaced'),
    gate,
    hash: z.string(),
    problems: z.array(z.string()),
    flags: z.array(z.string()).optional(),
  }),
  z.object({
    ...base,
    type: z.literal('gate.approved'),
    gate,
    hash: z.string(),
    approver: z.string(),
    proxy: z.boolean(),
  }),
  z.object({ ...base, type: z.literal('gate.reopened'), gate, reason: z.string() }),
  /** A recorded approval the lane did not count (on a pull request: no verified command backs it). */
  z.object({
    ...base,
    type: z.literal('gate.approval-ignored'),
    gate,
    hash: z.string(),
    approver: z.string(),
    reason: z.string(),
  }),
  z.object({
    ...base,
    type: z.literal('cycle.red'),
    item: z.string(),
    branch: z.string(),
    /** The item's tests (every test in a file the navigator changed, and any new one). */
    tests: z.array(z.string()),
    /** Those that failed, as RED requires (absent in logs written before 2026-12-03). */
    failing: z.array(z.string()).optional(),
  }),
  z.object({
    ...base,
    type: z.literal('cycle.rejected'),
    item: z.string(),
    step: z.string(),
    verdict: z.string(),
    reason: z.string(),
  }),
  z.object({
    ...base,
    type: z.literal('cycle.green'),
    item: z.string(),
    branch: z.string(),
    purpose: z.enum(['green', 'refactor']),
  }),
  z.object({ ...base, type: z.literal('cycle.repair'), item: z.string(), step: z.string(), round: z.number() }),
  z.object({ ...base, type: z.literal('cycle.review'), item: z.string(), verdict: z.enum(['approve', 'changes']) }),
  z.object({
    ...base,
    type: z.literal('cycle.experiments'),
    item: z.string(),
    of: z.number(),
    green: z.array(z.number()),
    picked: z.number().nullable(),
    rule: z.string(),
  }),
  z.object({ ...base, type: z.literal('cycle.refactored'), item: z.string() }),
  z.object({
    ...base,
    type: z.literal('turn.usage'),
    turn: z.string(),
    role,
    step: z.string(),
    item: z.string().nullable(),
    model: z.string().nullable(),
    durationMs: z.number(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    costUsd: z.number().optional(),
    verdict: z.enum(TURN_VERDICTS),
    refused: z.array(z.string()).optional(),
  }),
  z.object({
    ...base,
    type: z.literal('escalation'),
    kind: z.enum(['escalated', 'stalled', 'resumed']),
    step: z.string(),
    reason: z.string(),
  }),
]);
export type LogEvent = z.infer<typeof LogEvent>;

/** A log event as the transition writes it: the driver's appender adds nothing. */
export type LogEventType = LogEvent['type'];
