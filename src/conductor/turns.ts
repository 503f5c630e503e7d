/**
 * What happens after an agent's turn. The scope check comes first for every role and step; then
 * the step's own rule: a design role must leave a valid artifact, the navigator's RED turn must
 * change a test, the driver's turns go to a proof, a review must deliver a verdict.
 */
import { matchesAny } from '../core/glob.js';
import { turnId } from './actions.js';
import type { TurnOutcome } from './events.js';
import { designPlan } from './design-plan.js';
import {
  at,
  commitMessage,
  currentItem,
  type Draft,
  enter,
  escalate,
  handoff,
  isDesignRole,
  log,
  policyOf,
  recordTurn,
  retryOrEscalate,
  setStep,
  turnRecord,
} from './moves.js';
import { enterDesignStop, nextItem, writeCycle } from './progress.js';
import { checkScope, describeRefusals, isTestPath, reviewFile } from './scope.js';
import type { Role } from './roles.js';
import type { Position, StateAt } from './state.js';

type TurnStepState = StateAt<'design' | 'red' | 'green' | 'refactor' | 'review'>;
const CYCLE_ROLE: Record<string, Role> = { red: 'navigator', green: 'driver', refactor: 'driver', review: 'navigator' };

/** The turn this step asked for: its id, its role, its item. */
function expectedTurn(d: Draft<TurnStepState>, turn: TurnOutcome): boolean {
  const s = d.state;
  if (turn.id !== turnId(s.turns)) return false;
  if (s.step === 'design') {
    const stop = designPlan(policyOf(d), s.userFacing)[s.designStop];
    return stop?.kind === 'role' && stop.role === turn.role;
  }
  return CYCLE_ROLE[s.step] === turn.role && turn.step === s.step && turn.item === (currentItem(s)?.id ?? null);
}

/** What the step does with a turn that passed the common checks. */
interface Settled {
  paths: string[];
  commit(): void;
  reject(verdict: 'incomplete', reason: string): void;
}

/**
 * The checks every turn goes through, in order: the right turn, a clean exit, in scope. A turn
 * that fails one is reverted, recorded and retried at the same step (`retry`), then escalated.
 * Returns false for a turn nobody asked for, null when the turn was rejected.
 */
function settle(d: Draft<TurnStepState>, turn: TurnOutcome, retry: Position): Settled | null | false {
  if (!expectedTurn(d, turn)) return false;
  const s = d.state;
  const policy = policyOf(d);
  const changes = turn.changes.filter((c) => !matchesAny(c.path, policy.ignore));
  const paths = changes.map((c) => c.path).sort();
  /** `reason` is the record's (the PR comment, the dashboard, an escalation); `note` the agent's on its retry. */
  const reject = (
    verdict: 'failed' | 'refused' | 'incomplete',
    reason: string,
    refused?: { paths: string[]; note: string },
  ) => {
    if (paths.length > 0) d.effects.push({ type: 'revert', base: turn.base, paths });
    recordTurn(d, turnRecord(d, turn, verdict, paths, { reason, ...(refused ? { refused: refused.paths } : {}) }));
    retryOrEscalate(d, retry, reason, refused?.note);
  };
  if (turn.exit.kind !== 'done') {
    reject(
      'failed',
      `the ${turn.role}'s turn ${turn.exit.kind === 'timeout' ? 'timed out' : 'failed'}: ${turn.exit.message}; its changes were reverted`,
    );
    return null;
  }
  const refused = checkScope({
    policy,
    role: turn.role,
    step: turn.step,
    item: turn.item,
    changes,
    frozen: s.frozen,
    hashes: turn.hashes,
    testOwned: turn.facts.testOwned ?? [],
    links: turn.facts.links ?? [],
    linkTargets: turn.facts.linkTargets ?? {},
    shadows: turn.facts.shadows ?? [],
  });
  if (refused.length > 0) {
    const allowed = `${(policy.writes[turn.role] ?? []).join(', ')}${turn.step === 'red' ? ' (tests only)' : turn.step === 'review' ? ' (the review file only)' : turn.role === 'driver' ? ' (never a test)' : ''}`;
    const what = `${turn.step}${turn.item ? ` ${turn.item}` : ''}`;
    reject(
      'refused',
      `the ${turn.role} changed ${describeRefusals(refused)} at ${what}, where it may change only ${allowed}: the turn was refused and its changes reverted`,
      {
        paths: refused.map((r) => r.path),
        note: `your previous turn was refused and reverted: it changed ${describeRefusals(refused)}. The ${turn.role} may change only: ${allowed}`,
      },
    );
    return null;
  }
  return {
    paths,
    commit: () => {
      if (paths.length > 0)
        d.effects.push({ type: 'commit', message: commitMessage(turn.role, turn.step, s.feature, turn.item), paths });
    },
    reject: (verdict, reason) => reject(verdict, reason),
  };
}

/** A design role must leave a valid artifact; then the next design stop. */
export function onDesignTurn(d: Draft<StateAt<'design'>>, turn: TurnOutcome): boolean {
  const settled = settle(d, turn, at.design());
  if (settled === false) return false;
  if (settled === null || !isDesignRole(turn.role)) return true;
  const s = d.state;
  const bad = turn.owed.filter((o) => o.status !== 'valid');
  if (bad.length > 0) {
    settled.reject(
      'incomplete',
      `the ${turn.role} owes ${bad.map((o) => `${o.file} (${o.status}${o.problems.length ? `: ${o.problems.slice(0, 5).join('; ')}` : ''})`).join(', ')}`,
    );
    return true;
  }
  settled.commit();
  recordTurn(d, turnRecord(d, turn, 'accepted', settled.paths));
  for (const o of turn.owed)
    log(d, { type: 'artifact.written', file: `${policyOf(d).featureDir}/${o.file}`, role: turn.role });
  if (turn.role === 'spec-author') s.userFacing = turn.facts.userFacing ?? false;
  enterDesignStop(d, s.designStop + 1, turn.role);
  return true;
}

/** RED must change a test; then the conductor proves it red. */
export function onRedTurn(d: Draft<StateAt<'red'>>, turn: TurnOutcome): boolean {
  const s = d.state;
  const settled = settle(d, turn, at.turn('red', s.current, s.cycle));
  if (!settled) return settled === null;
  const tests = settled.paths.filter((p) => isTestPath(policyOf(d), p));
  if (tests.length === 0) {
    settled.reject('incomplete', 'the navigator changed no test file: RED needs a new or changed test for the item');
    return true;
  }
  settled.commit();
  s.cycle.testFiles = [...new Set([...s.cycle.testFiles, ...tests])].sort();
  enter(d, at.proof('prove-red', s.current, s.cycle, turnRecord(d, turn, 'accepted', settled.paths)));
  return true;
}

/** GREEN and REFACTOR go to a proof; a REFACTOR that changed nothing keeps the GREEN proof. */
export function onDriverTurn(d: Draft<StateAt<'green' | 'refactor'>>, turn: TurnOutcome): boolean {
  const s = d.state;
  const step = s.step;
  const settled = settle(d, turn, at.turn(step, s.current, s.cycle));
  if (!settled) return settled === null;
  const cycle = s.cycle;
  if (step === 'refactor' && settled.paths.length === 0) {
    recordTurn(d, turnRecord(d, turn, 'accepted', settled.paths, { suite: 'no changes: the GREEN proof still holds' }));
    cycle.refactor = { at: d.at, verdict: 'unchanged', branch: null };
    writeCycle(d);
    setStep(d, at.turn('review', s.current, cycle));
    handoff(d, 'driver', 'navigator', 'review');
    return true;
  }
  settled.commit();
  // RED's code, which every GREEN proof of the cycle proves again beside it (a retried one too).
  if (step === 'green') cycle.redTree = turn.base;
  enter(
    d,
    at.proof(
      step === 'green' ? 'prove-green' : 'prove-refactor',
      s.current,
      cycle,
      turnRecord(d, turn, 'accepted', settled.paths),
    ),
  );
  return true;
}

/** A review must deliver a verdict: approve completes the item, changes send the driver back (bounded). */
export function onReviewTurn(d: Draft<StateAt<'review'>>, turn: TurnOutcome): boolean {
  const s = d.state;
  const settled = settle(d, turn, at.turn('review', s.current, s.cycle));
  if (!settled) return settled === null;
  const policy = policyOf(d);
  const cycle = s.cycle;
  const review = turn.facts.review;
  const owed = turn.owed.find((o) => o.file === reviewFile(policy, cycle.item).slice(policy.featureDir.length + 1));
  if (review === undefined || owed?.status !== 'valid') {
    settled.reject(
      'incomplete',
      `the navigator owes a review in ${reviewFile(policy, cycle.item)}: ${owed?.problems.join('; ') || 'missing'}`,
    );
    return true;
  }
  settled.commit();
  recordTurn(d, turnRecord(d, turn, 'accepted', settled.paths));
  cycle.review = { at: d.at, verdict: review.verdict, branch: null, summary: review.notes.slice(0, 500) };
  log(d, { type: 'cycle.review', item: cycle.item, verdict: review.verdict });
  if (review.verdict === 'approve') {
    const item = currentItem(s)!;
    item.status = 'refactored';
    d.effects.push({ type: 'set-item-status', item: item.id, status: 'refactored' });
    log(d, { type: 'cycle.refactored', item: item.id });
    writeCycle(d);
    nextItem(d);
    return true;
  }
  writeCycle(d);
  if (s.repair >= policy.repairRounds) {
    escalate(d, `the review asked for changes after ${s.repair} repair round(s): ${review.notes.slice(0, 500)}`);
    return true;
  }
  s.repair += 1;
  cycle.repairs += 1;
  log(d, { type: 'cycle.repair', item: cycle.item, step: 'refactor', round: s.repair });
  setStep(d, at.turn('refactor', s.current, cycle));
  s.note = `the navigator's review asked for changes: ${review.notes}`;
  handoff(d, 'navigator', 'driver', 'refactor');
  return true;
}
