/**
 * The building blocks every part of the transition uses: a draft that collects the next state and
 * its effects, the action each step asks for, and the common moves (retry with a note, escalate,
 * enter a gate). Local mutation of a fresh draft keeps the transition itself pure.
 */
import { ConsortError } from '../core/errors.js';
import type { Effect, TurnPlan } from './effects.js';
import type { LogEvent, TurnOutcome } from './events.js';
import { DESIGN_ROLES, type DesignRole, type Role } from './roles.js';
import type { ConductorState, GateName, Item, Policy, ProofPurpose, Step, TurnRecord, TurnStep } from './state.js';
import { designPlan, DESIGN_STEP } from './design-plan.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type LogBody = DistributiveOmit<LogEvent, 'id' | 'at' | 'feature'>;

export interface Draft {
  state: ConductorState;
  effects: Effect[];
  at: string;
}

export function draftOf(state: ConductorState, at: string): Draft {
  return { state: structuredClone(state), effects: [], at };
}

export function policyOf(d: Draft): Policy {
  if (d.state.policy === null) throw new ConsortError('internal', 'The conductor has no policy: the run did not start with run.started.');
  return d.state.policy;
}

export function log(d: Draft, body: LogBody): void {
  d.state.logSeq += 1;
  const event = { ...body, id: `${d.state.feature}#${d.state.logSeq}`, at: d.at, feature: d.state.feature } as LogEvent;
  d.effects.push({ type: 'log', event });
}

/** Branch names: `f001-…` from feature `001-slug`, valid on every provider (lowercase, ≤ 63). */
export function branchPrefix(feature: string): string {
  const digits = /^\d+/.exec(feature)?.[0];
  return `f${digits ?? feature.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 20)}`;
}

export function currentItem(state: ConductorState): Item | null {
  return state.current >= 0 ? (state.items[state.current] ?? null) : null;
}

const BUILD_TURN: Partial<Record<Step, { role: Role; step: TurnStep }>> = {
  red: { role: 'navigator', step: 'red' },
  green: { role: 'driver', step: 'green' },
  refactor: { role: 'driver', step: 'refactor' },
  review: { role: 'navigator', step: 'review' },
};

const PROOF_AFTER: Partial<Record<TurnStep, ProofPurpose>> = { red: 'red', green: 'green', refactor: 'refactor' };

/** Proof branches are numbered within their cycle, so a name is never reused for another proof. */
function proofBranch(s: ConductorState, purpose: ProofPurpose, n: number): string {
  return `${branchPrefix(s.feature)}-${s.cycle?.item.toLowerCase() ?? 'x'}-${purpose}-${n}`;
}

function sandboxOf(s: ConductorState, item: string | null): string {
  return `${branchPrefix(s.feature)}-${item?.toLowerCase() ?? 'design'}`;
}

/** The item after the current one, whose cycle comes next if this one completes. */
function nextItemId(s: ConductorState): string | null {
  return s.items.find((i, index) => index !== s.current && i.status !== 'refactored')?.id ?? null;
}

function turnPlan(d: Draft, role: Role, step: TurnStep): TurnPlan {
  const s = d.state;
  s.turns += 1;
  const withFailure = step === 'green' || step === 'refactor';
  const proof = PROOF_AFTER[step];
  const next = step === 'review' ? nextItemId(s) : null;
  return {
    id: `turn-${String(s.turns).padStart(4, '0')}`,
    role, step, item: currentItem(s), attempt: s.attempt, note: s.note,
    failure: withFailure ? s.failure : null,
    branch: sandboxOf(s, s.cycle?.item ?? null),
    forkAhead: proof && s.cycle ? { branch: proofBranch(s, proof, s.cycle.proofs + 1), use: 'proof' as const } : next ? { branch: sandboxOf(s, next), use: 'sandbox' as const } : null,
    experiment: null,
    frozen: Object.keys(s.frozen).sort(),
    writes: policyOf(d).writes[role] ?? [],
  };
}

/** The effects a step asks for: one action, or a stop. */
export function act(d: Draft): void {
  const s = d.state;
  const prefix = branchPrefix(s.feature);
  const build = BUILD_TURN[s.step];
  const n = s.policy?.experiments ?? 1;
  if (s.step === 'green' && n > 1 && s.attempt === 0 && s.repair === 0 && s.cycle !== null) {
    // Competing GREEN attempts, each in its own worktree with its own sandbox and proof branch.
    const cycle = s.cycle;
    cycle.proofs += 1;
    const turns = Array.from({ length: n }, (_, i) => {
      const plan = turnPlan(d, 'driver', 'green');
      const x = `${prefix}-${cycle.item.toLowerCase()}-x${i + 1}`;
      return { ...plan, branch: x, forkAhead: null, experiment: { index: i + 1, of: n, proofBranch: `${x}-green-${cycle.proofs}` } };
    });
    d.effects.push({ type: 'run-experiments', turns });
    return;
  }
  if (build) {
    d.effects.push({ type: 'run-turn', turn: turnPlan(d, build.role, build.step) });
    return;
  }
  switch (s.step) {
    case 'design': {
      const stop = designPlan(policyOf(d), s.userFacing)[s.designStop];
      if (stop?.kind !== 'role') throw new ConsortError('internal', `Design stop ${s.designStop} is not a role's turn.`);
      d.effects.push({ type: 'run-turn', turn: turnPlan(d, stop.role, DESIGN_STEP[stop.role]) });
      return;
    }
    case 'gate':
      d.effects.push({ type: 'check-gate', gate: s.gate ?? 'spec' });
      return;
    case 'baseline':
    case 'prove-red':
    case 'prove-green':
    case 'prove-refactor': {
      const purpose = s.step === 'baseline' ? 'baseline' : s.step === 'prove-red' ? 'red' : s.step === 'prove-green' ? 'green' : 'refactor';
      const item = currentItem(s);
      let branch = `${prefix}-baseline-${s.turns}`;
      if (s.cycle !== null && purpose !== 'baseline') {
        s.cycle.proofs += 1;
        branch = proofBranch(s, purpose, s.cycle.proofs);
      }
      const hash = [...new Set([...Object.keys(s.frozen), ...(s.cycle?.testFiles ?? [])])].sort();
      const first = purpose === 'baseline' ? (s.items.find((i) => i.status !== 'refactored')?.id ?? null) : null;
      d.effects.push({ type: 'prove', purpose, item: purpose === 'baseline' ? null : (item?.id ?? null), branch, hash, forkAhead: first ? { branch: sandboxOf(s, first), use: 'sandbox' } : null });
      return;
    }
    case 'awaiting-approval':
      d.effects.push({ type: 'stop', reason: 'awaiting-approval', message: `waiting for a human to approve the ${s.gate} gate` });
      return;
    case 'escalated':
    case 'stalled':
      d.effects.push({ type: 'stop', reason: s.step, message: s.escalation?.reason ?? s.step });
      return;
    case 'done':
      d.effects.push({ type: 'stop', reason: 'done', message: 'the feature is built and its gates are approved' });
      return;
    default:
      throw new ConsortError('internal', `No action for step ${s.step}.`);
  }
}

export function escalate(d: Draft, reason: string): void {
  const s = d.state;
  const step = s.step;
  s.escalation = { reason, step, at: d.at };
  s.step = 'escalated';
  log(d, { type: 'escalation', kind: 'escalated', step, reason });
}

/** One informed retry (by default) with a note saying what went wrong, then a human. */
export function retryOrEscalate(d: Draft, step: Step, reason: string): void {
  const s = d.state;
  s.step = step;
  if (s.attempt < policyOf(d).retries) {
    s.attempt += 1;
    s.note = reason;
  } else {
    escalate(d, `${reason} (after ${s.attempt + 1} attempt(s))`);
  }
}

export function enterGate(d: Draft, gate: GateName): void {
  d.state.step = 'gate';
  d.state.gate = gate;
}

export function setStep(d: Draft, step: Step): void {
  d.state.step = step;
  d.state.attempt = 0;
  d.state.note = null;
}

export function handoff(d: Draft, from: Role | 'conductor', to: Role, step: string): void {
  log(d, { type: 'handoff', from, to, step, item: currentItem(d.state)?.id ?? null });
}

export function turnRecord(
  d: Draft, turn: TurnOutcome, verdict: TurnRecord['verdict'], paths: string[],
  extra: { reason?: string; refused?: string[]; suite?: string | null } = {},
): TurnRecord {
  return {
    version: 1, id: turn.id, feature: d.state.feature, role: turn.role, step: turn.step, item: turn.item, attempt: turn.attempt,
    backend: turn.backend, model: turn.model, startedAt: turn.startedAt, durationMs: turn.durationMs, usage: turn.usage,
    filesChanged: paths, base: turn.base, verdict, ...(extra.reason === undefined ? {} : { reason: extra.reason }),
    ...(extra.refused === undefined ? {} : { refused: extra.refused }), branch: turn.branch, context: turn.context, suite: extra.suite ?? null,
    ...(turn.summary ? { summary: turn.summary.slice(0, 1000) } : {}),
  };
}

/** Append a turn's record and its usage event. */
export function recordTurn(d: Draft, record: TurnRecord): void {
  d.effects.push({ type: 'append-turn', record });
  log(d, {
    type: 'turn.usage', turn: record.id, role: record.role, step: record.step, item: record.item, model: record.model, durationMs: record.durationMs,
    inputTokens: record.usage.inputTokens, outputTokens: record.usage.outputTokens,
    ...(record.usage.costUsd === undefined ? {} : { costUsd: record.usage.costUsd }),
    verdict: record.verdict, ...(record.refused ? { refused: record.refused } : {}),
  });
}

export function commitMessage(role: Role, step: TurnStep, feature: string, item: string | null): string {
  return `consort(${role}): ${step} ${feature}${item ? `/${item}` : ''}`;
}

export function isDesignRole(role: Role): role is DesignRole {
  return (DESIGN_ROLES as readonly string[]).includes(role);
}
