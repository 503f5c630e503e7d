/**
 * What happens after an agent's turn. The scope check comes first for every role and step; then
 * the step's own rule: a design role must leave a valid artifact, the navigator's RED turn must
 * change a test, the driver's turns go to a proof, a review must deliver a verdict.
 */
import { matchesAny } from '../core/glob.js';
import type { TurnOutcome } from './events.js';
import { designPlan } from './design-plan.js';
import {
  commitMessage, currentItem, type Draft, escalate, handoff, isDesignRole, log, policyOf, recordTurn, retryOrEscalate, setStep, turnRecord,
} from './moves.js';
import { enterDesignStop, nextItem, writeCycle } from './progress.js';
import { checkScope, describeRefusals, isTestPath, reviewFile } from './scope.js';

function expectedTurn(d: Draft, turn: TurnOutcome): boolean {
  const s = d.state;
  const id = `turn-${String(s.turns).padStart(4, '0')}`;
  if (turn.id !== id) return false;
  if (s.step === 'design') {
    const stop = designPlan(policyOf(d), s.userFacing)[s.designStop];
    return stop?.kind === 'role' && stop.role === turn.role;
  }
  const roles: Record<string, string> = { red: 'navigator', green: 'driver', refactor: 'driver', review: 'navigator' };
  return roles[s.step] === turn.role && turn.step === s.step && turn.item === (currentItem(s)?.id ?? null);
}

export function onTurn(d: Draft, turn: TurnOutcome): boolean {
  if (!expectedTurn(d, turn)) return false;
  const s = d.state;
  const policy = policyOf(d);
  const changes = turn.changes.filter((c) => !matchesAny(c.path, policy.ignore));
  const paths = changes.map((c) => c.path).sort();
  const step = s.step;
  const reject = (verdict: 'failed' | 'refused' | 'incomplete', reason: string, refused?: string[]) => {
    if (paths.length > 0) d.effects.push({ type: 'revert', base: turn.base, paths });
    recordTurn(d, turnRecord(d, turn, verdict, paths, { reason, ...(refused ? { refused } : {}) }));
    retryOrEscalate(d, step, reason);
  };

  if (turn.exit.kind !== 'done') {
    reject('failed', `the ${turn.role}'s turn ${turn.exit.kind === 'timeout' ? 'timed out' : 'failed'}: ${turn.exit.message}; its changes were reverted`);
    return true;
  }
  const refused = checkScope({ policy, role: turn.role, step: turn.step, item: turn.item, changes, frozen: s.frozen, hashes: turn.hashes, testOwned: turn.facts.testOwned ?? [] });
  if (refused.length > 0) {
    const allowed = (policy.writes[turn.role] ?? []).join(', ');
    reject('refused', `your previous turn was refused and reverted: it changed ${describeRefusals(refused)}. The ${turn.role} may change only: ${allowed}${turn.step === 'red' ? ' (tests only)' : turn.step === 'review' ? ' (the review file only)' : turn.role === 'driver' ? ' (never a test)' : ''}`, refused.map((r) => r.path));
    return true;
  }
  const commit = () => {
    if (paths.length > 0) d.effects.push({ type: 'commit', message: commitMessage(turn.role, turn.step, s.feature, turn.item), paths });
  };

  if (step === 'design' && isDesignRole(turn.role)) {
    const bad = turn.owed.filter((o) => o.status !== 'valid');
    if (bad.length > 0) {
      reject('incomplete', `the ${turn.role} owes ${bad.map((o) => `${o.file} (${o.status}${o.problems.length ? `: ${o.problems.slice(0, 5).join('; ')}` : ''})`).join(', ')}`);
      return true;
    }
    commit();
    recordTurn(d, turnRecord(d, turn, 'accepted', paths));
    for (const o of turn.owed) log(d, { type: 'artifact.written', file: `${policy.featureDir}/${o.file}`, role: turn.role });
    if (turn.role === 'spec-author') s.userFacing = turn.facts.userFacing ?? false;
    enterDesignStop(d, s.designStop + 1, turn.role);
    return true;
  }

  const cycle = s.cycle!;
  switch (step) {
    case 'red': {
      const tests = paths.filter((p) => isTestPath(policy, p));
      if (tests.length === 0) {
        reject('incomplete', 'the navigator changed no test file: RED needs a new or changed test for the item');
        return true;
      }
      commit();
      cycle.testFiles = [...new Set([...cycle.testFiles, ...tests])].sort();
      s.pendingTurn = turnRecord(d, turn, 'accepted', paths);
      s.step = 'prove-red';
      return true;
    }
    case 'green':
    case 'refactor': {
      if (step === 'refactor' && paths.length === 0) {
        recordTurn(d, turnRecord(d, turn, 'accepted', paths, { suite: 'no changes: the GREEN proof still holds' }));
        cycle.refactor = { at: d.at, verdict: 'unchanged', branch: null };
        writeCycle(d);
        setStep(d, 'review');
        handoff(d, 'driver', 'navigator', 'review');
        return true;
      }
      commit();
      s.pendingTurn = turnRecord(d, turn, 'accepted', paths);
      s.step = step === 'green' ? 'prove-green' : 'prove-refactor';
      return true;
    }
    case 'review': {
      const review = turn.facts.review;
      const owed = turn.owed.find((o) => o.file === reviewFile(policy, cycle.item).slice(policy.featureDir.length + 1));
      if (review === undefined || owed?.status !== 'valid') {
        reject('incomplete', `the navigator owes a review in ${reviewFile(policy, cycle.item)}: ${owed?.problems.join('; ') || 'missing'}`);
        return true;
      }
      commit();
      recordTurn(d, turnRecord(d, turn, 'accepted', paths));
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
      setStep(d, 'refactor');
      s.note = `the navigator's review asked for changes: ${review.notes}`;
      handoff(d, 'navigator', 'driver', 'refactor');
      return true;
    }
    default:
      return false;
  }
}
