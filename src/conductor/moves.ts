/**
 * The building blocks every step handler uses: a draft that collects the next state and its
 * effects, and the common moves (enter a step, retry with a note, escalate). Entering a step is
 * where ids are handed out — the turn id of a turn step, the proof number of a proof step — so
 * `act` only reads, and an action asked for twice is a stall, not a fresh id. Local mutation of a
 * fresh draft keeps the transition itself pure.
 */
import { ConsortError } from '../core/errors.js';
import type { Effect } from './effects.js';
import type { LogEvent, TurnOutcome } from './events.js';
import { DESIGN_ROLES, type DesignRole, type Role } from './roles.js';
import type { ConductorState, Cycle, GateName, Item, Policy, Position, TurnRecord, TurnStep } from './state.js';
import { count } from '../core/plural.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type LogBody = DistributiveOmit<LogEvent, 'id' | 'at' | 'feature'>;

export interface Draft<S extends ConductorState = ConductorState> {
  state: S;
  effects: Effect[];
  at: string;
}

export function draftOf(state: ConductorState, at: string): Draft {
  return { state: structuredClone(state), effects: [], at };
}

export function policyOf(d: Draft): Policy {
  if (d.state.policy === null)
    throw new ConsortError('internal', 'The conductor has no policy: the run did not start with run.started.');
  return d.state.policy;
}

export function log(d: Draft, body: LogBody): void {
  d.state.logSeq += 1;
  const event = { ...body, id: `${d.state.feature}#${d.state.logSeq}`, at: d.at, feature: d.state.feature } as LogEvent;
  d.effects.push({ type: 'log', event });
}

export function currentItem(state: ConductorState): Item | null {
  return state.current >= 0 ? (state.items[state.current] ?? null) : null;
}

// ---- positions: a step with its own fields, set all at once ----

const IDLE = { gate: null, current: -1, cycle: null, pendingTurn: null, escalation: null } as const;
type CycleTurnStep = 'red' | 'green' | 'refactor' | 'review';
type CycleProofStep = 'prove-red' | 'prove-green' | 'prove-refactor';

export const at = {
  design: (): Position => ({ step: 'design', phase: 'design', ...IDLE }),
  gate: (gate: GateName, phase: 'design' | 'merge', step: 'gate' | 'awaiting-approval' = 'gate'): Position => ({
    step,
    phase,
    ...IDLE,
    gate,
  }),
  baseline: (): Position => ({ step: 'baseline', phase: 'build', ...IDLE }),
  turn: (step: CycleTurnStep, current: number, cycle: Cycle): Position => ({
    step,
    phase: 'build',
    gate: null,
    current,
    cycle,
    pendingTurn: null,
    escalation: null,
  }),
  proof: (step: CycleProofStep, current: number, cycle: Cycle, pendingTurn: TurnRecord | null): Position => ({
    step,
    phase: 'build',
    gate: null,
    current,
    cycle,
    pendingTurn,
    escalation: null,
  }),
  done: (): Position => ({ step: 'done', phase: 'done', ...IDLE }),
};

/** Competing GREEN attempts are due: the first GREEN of a cycle, with `experiments` above 1. */
export function experimentsDue(s: ConductorState): boolean {
  return s.step === 'green' && (s.policy?.experiments ?? 1) > 1 && s.attempt === 0 && s.repair === 0;
}

/** Hand out the ids the step's action will carry: its turn id(s), its proof number. */
export function allocate(s: ConductorState): void {
  switch (s.step) {
    case 'design':
    case 'red':
    case 'refactor':
    case 'review':
      s.turns += 1;
      return;
    case 'green':
      if (experimentsDue(s)) {
        s.turns += s.policy?.experiments ?? 1;
        s.cycle.proofs += 1;
      } else {
        s.turns += 1;
      }
      return;
    case 'prove-red':
    case 'prove-green':
    case 'prove-refactor':
      s.cycle.proofs += 1;
      return;
    default:
  }
}

/** Be at a position without asking for anything (a stop follows). */
export function place(d: Draft, position: Position): void {
  Object.assign(d.state, position);
}

/** Enter a step: its fields, then its ids. Set attempt, repair and note before: they decide the ids. */
export function enter(d: Draft, position: Position): void {
  place(d, position);
  allocate(d.state);
}

/** Enter a step afresh: no attempt, no note. */
export function setStep(d: Draft, position: Position): void {
  d.state.attempt = 0;
  d.state.note = null;
  enter(d, position);
}

export function escalate(d: Draft, reason: string): void {
  const step = d.state.step;
  Object.assign(d.state, { step: 'escalated', escalation: { reason, step, at: d.at } });
  log(d, { type: 'escalation', kind: 'escalated', step, reason });
}

/**
 * One informed retry (by default) with a note saying what went wrong, then a human. `note` is what
 * the agent reads on its retry, when it is worded for the agent; `reason` is what a person reads.
 */
export function retryOrEscalate(d: Draft, position: Position, reason: string, note = reason): void {
  const s = d.state;
  if (s.attempt < policyOf(d).retries) {
    s.attempt += 1;
    s.note = note;
    enter(d, position);
  } else {
    place(d, position);
    escalate(d, `${reason} (after ${count(s.attempt + 1, 'attempt')})`);
  }
}

export function handoff(d: Draft, from: Role | 'conductor', to: Role, step: string): void {
  log(d, { type: 'handoff', from, to, step, item: currentItem(d.state)?.id ?? null });
}

export function turnRecord(
  d: Draft,
  turn: TurnOutcome,
  verdict: TurnRecord['verdict'],
  paths: string[],
  extra: { reason?: string; refused?: string[]; suite?: string | null } = {},
): TurnRecord {
  return {
    version: 1,
    id: turn.id,
    feature: d.state.feature,
    role: turn.role,
    step: turn.step,
    item: turn.item,
    attempt: turn.attempt,
    backend: turn.backend,
    model: turn.model,
    startedAt: turn.startedAt,
    durationMs: turn.durationMs,
    usage: turn.usage,
    filesChanged: paths,
    base: turn.base,
    verdict,
    ...(extra.reason === undefined ? {} : { reason: extra.reason }),
    ...(extra.refused === undefined ? {} : { refused: extra.refused }),
    branch: turn.branch,
    context: turn.context,
    suite: extra.suite ?? null,
    ...(turn.summary ? { summary: turn.summary.slice(0, 1000) } : {}),
  };
}

/** Append a turn's record and its usage event. */
export function recordTurn(d: Draft, record: TurnRecord): void {
  d.effects.push({ type: 'append-turn', record });
  log(d, {
    type: 'turn.usage',
    turn: record.id,
    role: record.role,
    step: record.step,
    item: record.item,
    model: record.model,
    durationMs: record.durationMs,
    inputTokens: record.usage.inputTokens,
    outputTokens: record.usage.outputTokens,
    ...(record.usage.costUsd === undefined ? {} : { costUsd: record.usage.costUsd }),
    verdict: record.verdict,
    ...(record.refused ? { refused: record.refused } : {}),
  });
}

export function commitMessage(role: Role, step: TurnStep, feature: string, item: string | null): string {
  return `consort(${role}): ${step} ${feature}${item ? `/${item}` : ''}`;
}

export function isDesignRole(role: Role): role is DesignRole {
  return (DESIGN_ROLES as readonly string[]).includes(role);
}
