/**
 * What each step asks for, read off the state: a turn, competing turns, a proof, a gate check or
 * a stop. Pure and allocation-free: the ids an action carries were handed out when its step was
 * entered (`allocate` in moves.ts), so asking twice yields the same action and the stall guard
 * can see it.
 */
import { ConsortError } from '../core/errors.js';
import { designPlan, DESIGN_STEP } from './design-plan.js';
import type { Effect, TurnPlan } from './effects.js';
import { currentItem, experimentsDue } from './moves.js';
import type { Role } from './roles.js';
import type { ConductorState, ProofPurpose, StateAt, TurnStep } from './state.js';

/** Branch names: `f001-…` from feature `001-slug`, valid on every provider (lowercase, ≤ 63). */
export function branchPrefix(feature: string): string {
  const digits = /^\d+/.exec(feature)?.[0];
  return `f${
    digits ??
    feature
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 20)
  }`;
}

export function turnId(n: number): string {
  return `turn-${String(n).padStart(4, '0')}`;
}

const PROOF_AFTER: Partial<Record<TurnStep, ProofPurpose>> = { red: 'red', green: 'green', refactor: 'refactor' };

/** Proof branches are numbered within their cycle, so a name is never reused for another proof. */
function proofBranch(s: ConductorState, purpose: ProofPurpose, n: number): string {
  return `${branchPrefix(s.feature)}-${s.cycle?.item.toLowerCase() ?? 'x'}-${purpose}-${n}`;
}

/** The branch RED's tree is proven again on, beside GREEN's proof on `branch`. */
function recheckBranch(branch: string): string {
  return `${branch}-r`;
}

function sandboxOf(s: ConductorState, item: string | null): string {
  return `${branchPrefix(s.feature)}-${item?.toLowerCase() ?? 'design'}`;
}

/** The item after the current one, whose cycle comes next if this one completes. */
function nextItemId(s: ConductorState): string | null {
  return s.items.find((i, index) => index !== s.current && i.status !== 'refactored')?.id ?? null;
}

function turnPlan(s: ConductorState, id: number, role: Role, step: TurnStep): TurnPlan {
  const withFailure = step === 'green' || step === 'refactor';
  const proof = PROOF_AFTER[step];
  const next = step === 'review' ? nextItemId(s) : null;
  return {
    id: turnId(id),
    role,
    step,
    item: currentItem(s),
    attempt: s.attempt,
    note: s.note,
    failure: withFailure ? s.failure : null,
    branch: sandboxOf(s, s.cycle?.item ?? null),
    // The proof after this turn gets the next number (handed out when the turn is accepted).
    forkAhead:
      proof && s.cycle
        ? {
            branch: proofBranch(s, proof, s.cycle.proofs + 1),
            use: 'proof' as const,
            // GREEN's proof proves RED's tree (this turn's base) again beside it, and so does REFACTOR's
            // (RED's tree kept by the cycle): `prove` names that branch so. Forked from the working tree
            // now, it is kept at the proof only if it holds RED's tree's migrations (settleMigrations).
            ...(step === 'green' || (step === 'refactor' && s.cycle.redTree)
              ? { recheck: recheckBranch(proofBranch(s, proof, s.cycle.proofs + 1)) }
              : {}),
          }
        : next
          ? { branch: sandboxOf(s, next), use: 'sandbox' as const }
          : null,
    experiment: null,
    frozen: Object.keys(s.frozen).sort(),
    writes: s.policy?.writes[role] ?? [],
  };
}

export function designTurn(s: StateAt<'design'>): Effect[] {
  const stop = s.policy ? designPlan(s.policy, s.userFacing)[s.designStop] : undefined;
  if (stop?.kind !== 'role') throw new ConsortError('internal', `Design stop ${s.designStop} is not a role's turn.`);
  return [{ type: 'run-turn', turn: turnPlan(s, s.turns, stop.role, DESIGN_STEP[stop.role]) }];
}

export function cycleTurn(role: Role, step: TurnStep) {
  return (s: ConductorState): Effect[] => [{ type: 'run-turn', turn: turnPlan(s, s.turns, role, step) }];
}

/** GREEN: one driver turn, or (first attempt, `experiments` above 1) N competing ones, each with its own sandbox and proof branch. */
export function greenTurns(s: StateAt<'green'>): Effect[] {
  const n = s.policy?.experiments ?? 1;
  if (!experimentsDue(s)) return cycleTurn('driver', 'green')(s);
  const cycle = s.cycle;
  const turns = Array.from({ length: n }, (_, i) => {
    const plan = turnPlan(s, s.turns - n + 1 + i, 'driver', 'green');
    const x = `${branchPrefix(s.feature)}-${cycle.item.toLowerCase()}-x${i + 1}`;
    return {
      ...plan,
      branch: x,
      forkAhead: null,
      experiment: { index: i + 1, of: n, proofBranch: `${x}-green-${cycle.proofs}` },
    };
  });
  return [{ type: 'run-experiments', turns }];
}

export function prove(purpose: ProofPurpose) {
  return (s: ConductorState): Effect[] => {
    const branch =
      s.cycle !== null && purpose !== 'baseline'
        ? proofBranch(s, purpose, s.cycle.proofs)
        : `${branchPrefix(s.feature)}-baseline-${s.turns}`;
    const hash = [...new Set([...Object.keys(s.frozen), ...(s.cycle?.testFiles ?? [])])].sort();
    // RED's code, proven again beside GREEN's proof and REFACTOR's: the item's tests must still fail
    // there, or they pass whatever the code (the clock, a marker or run count an earlier run left),
    // and a REFACTOR could take the implementation out again. GREEN's turn started from it (a
    // rejected attempt before it was reverted); a retried proof, with no turn pending, and REFACTOR's
    // take the cycle's record of it.
    const redTree =
      purpose === 'green'
        ? (s.pendingTurn?.base ?? s.cycle?.redTree)
        : purpose === 'refactor'
          ? s.cycle?.redTree
          : undefined;
    // The sandbox of the cycle after this proof: the first one's during the baseline proof; the next
    // one's during REFACTOR's, the cycle's last suite run (the REVIEW turn between is often too short to hide a fork).
    const sandbox =
      purpose === 'baseline'
        ? (s.items.find((i) => i.status !== 'refactored')?.id ?? null)
        : purpose === 'refactor'
          ? nextItemId(s)
          : null;
    return [
      {
        type: 'prove',
        purpose,
        item: purpose === 'baseline' ? null : (currentItem(s)?.id ?? null),
        branch,
        hash,
        forkAhead: sandbox ? { branch: sandboxOf(s, sandbox), use: 'sandbox' } : null,
        ...(redTree ? { recheck: { commit: redTree, branch: recheckBranch(branch) } } : {}),
      },
    ];
  };
}

export function checkGate(s: StateAt<'gate'>): Effect[] {
  return [{ type: 'check-gate', gate: s.gate }];
}

export function stop(s: ConductorState): Effect[] {
  switch (s.step) {
    case 'awaiting-approval':
      return [
        { type: 'stop', reason: 'awaiting-approval', message: `waiting for a human to approve the ${s.gate} gate` },
      ];
    case 'escalated':
    case 'stalled':
      return [{ type: 'stop', reason: s.step, message: s.escalation.reason }];
    case 'done':
      return [{ type: 'stop', reason: 'done', message: 'the feature is built and its gates are approved' }];
    default:
      throw new ConsortError('internal', `Step ${s.step} is not a stop.`);
  }
}
