/**
 * After the conductor's own suite run: the baseline must be green; RED must be proven (else the
 * navigator tries again with the reason); GREEN and REFACTOR must be green with the frozen tests
 * untouched (else a bounded repair, then a human).
 */
import type { ProofOutcome, ProofTest } from './events.js';
import {
  at,
  currentItem,
  type Draft,
  enter,
  escalate,
  handoff,
  log,
  place,
  policyOf,
  recordTurn,
  retryOrEscalate,
  setStep,
} from './moves.js';
import { nextItem, writeCycle } from './progress.js';
import { boundedOutput, judgeBaseline, judgeGreen, judgeRecheck, judgeRed } from './proofs.js';
import type { Failure, ProofPurpose, StateAt } from './state.js';
import { count } from '../core/plural.js';

type ProofEvent = {
  purpose: ProofPurpose;
  item: string | null;
  branch: string;
  outcome: ProofOutcome;
  recheck?: ProofOutcome;
};

export function failureOf(
  purpose: ProofPurpose,
  summary: string,
  failing: readonly ProofTest[],
  outcome: ProofOutcome,
): Failure {
  return {
    purpose,
    summary,
    tests: failing
      .slice(0, 50)
      .map((t) => ({ id: t.id, state: t.state, ...(t.message ? { message: t.message.slice(0, 500) } : {}) })),
    output: boundedOutput(outcome.output),
  };
}

function suiteSummary(outcome: ProofOutcome): string {
  return outcome.kind === 'ran' ? outcome.summary : `${outcome.reason}: ${outcome.message.slice(0, 200)}`;
}

/**
 * Rejected means gone: the turn's commit (made before its proof, never pushed) is dropped by
 * resetting to the commit it started from, before any record of this batch is written (the reset
 * takes the records back to that commit too). Its record says what was rejected and why.
 */
function revertPending(d: Draft): void {
  const pending = d.state.pendingTurn;
  if (pending?.base && pending.filesChanged.length > 0)
    d.effects.push({ type: 'revert', base: pending.base, paths: pending.filesChanged });
}

/** The accepted turn that led to this proof gets its record, with the proof's suite summary. */
function flushTurn(d: Draft, outcome: ProofOutcome, verdict: 'accepted' | 'rejected', reason?: string): void {
  const pending = d.state.pendingTurn;
  if (pending === null) return;
  recordTurn(d, { ...pending, verdict, suite: suiteSummary(outcome), ...(reason ? { reason } : {}) });
  d.state.pendingTurn = null;
}

/** The baseline must be green: else RED could not be told from a broken suite. */
export function onBaselineProof(d: Draft<StateAt<'baseline'>>, { purpose, outcome }: ProofEvent): boolean {
  if (purpose !== 'baseline') return false;
  const v = judgeBaseline(outcome);
  if (v.verdict !== 'green') {
    escalate(d, `the suite must pass before the first cycle, so RED can be told from a broken suite: ${v.reason}`);
    return true;
  }
  d.state.passing = v.passing;
  nextItem(d);
  return true;
}

type CycleProof = StateAt<'prove-red' | 'prove-green' | 'prove-refactor'>;
const PURPOSE_OF = { 'prove-red': 'red', 'prove-green': 'green', 'prove-refactor': 'refactor' } as const;

/** The proof this step asked for: its purpose and the cycle's item. */
export function fits(s: CycleProof, event: ProofEvent): boolean {
  return event.purpose === PURPOSE_OF[s.step] && event.item === (currentItem(s)?.id ?? null);
}

/** RED proven: freeze the tests, hand over to the driver. Not proven: the navigator again (broken: a human). */
export function onRedProof(d: Draft<StateAt<'prove-red'>>, event: ProofEvent): boolean {
  if (!fits(d.state, event)) return false;
  const { branch, outcome } = event;
  const s = d.state;
  const policy = policyOf(d);
  const cycle = s.cycle;
  const stamp = (verdict: string) => ({ at: d.at, verdict, branch, summary: suiteSummary(outcome) });
  const v = judgeRed({
    outcome,
    passing: s.passing ?? [],
    testFiles: cycle.testFiles,
    rejectBornGreen: policy.rejectBornGreen,
  });
  if (v.verdict === 'red') {
    flushTurn(d, outcome, 'accepted');
    cycle.tests = v.tests;
    cycle.redFailing = v.failing.map((t) => t.id);
    cycle.red = stamp('red');
    for (const file of cycle.testFiles) {
      const hash = outcome.hashes[file];
      if (hash) s.frozen[file] = hash;
      else delete s.frozen[file];
    }
    const it = currentItem(s)!;
    it.status = 'red';
    d.effects.push({ type: 'set-item-status', item: it.id, status: 'red' });
    log(d, { type: 'cycle.red', item: it.id, branch, tests: v.tests, failing: v.failing.map((t) => t.id) });
    writeCycle(d);
    s.repair = 0;
    s.failure = failureOf(
      'red',
      `${count(v.failing.length, 'test')} ${v.failing.length === 1 ? 'fails as it should' : 'fail as they should'}`,
      v.failing,
      outcome,
    );
    setStep(d, at.turn('green', s.current, cycle));
    handoff(d, 'navigator', 'driver', 'green');
    return true;
  }
  // A broken suite is not the navigator's doing: the test stays for the proof a retry repeats.
  if (v.verdict !== 'broken') revertPending(d);
  flushTurn(d, outcome, 'rejected', v.reason);
  cycle.rejections.push({ step: 'red', verdict: v.verdict, reason: v.reason, at: d.at });
  log(d, { type: 'cycle.rejected', item: cycle.item, step: 'red', verdict: v.verdict, reason: v.reason });
  writeCycle(d);
  if (v.verdict === 'broken') {
    // Not the navigator's doing: a human fixes the suite, and a retry proves again.
    escalate(d, v.reason);
    return true;
  }
  const tail =
    outcome.output.trim() === ''
      ? ''
      : `\n\nThe end of the suite's output:\n${boundedOutput(outcome.output).slice(-1500)}`;
  retryOrEscalate(d, at.turn('red', s.current, cycle), `${v.reason}${tail}`);
  return true;
}

/** GREEN or REFACTOR proven: on to REFACTOR or REVIEW. A red suite: a bounded repair round, then a human. */
export function onGreenProof(d: Draft<StateAt<'prove-green' | 'prove-refactor'>>, event: ProofEvent): boolean {
  if (!fits(d.state, event)) return false;
  const { branch, outcome } = event;
  const s = d.state;
  const purpose = PURPOSE_OF[s.step];
  const policy = policyOf(d);
  const cycle = s.cycle;
  const stamp = (verdict: string) => ({ at: d.at, verdict, branch, summary: suiteSummary(outcome) });
  const v = judgeGreen({
    outcome,
    itemTests: cycle.tests,
    frozen: s.frozen,
    passing: s.passing ?? [],
  });
  const turnStep = purpose === 'green' ? 'green' : 'refactor';
  // GREEN on its own says the tests pass now; RED's tree proven again beside it says the code is why.
  const unheld =
    v.verdict === 'green' && event.recheck && cycle.redFailing
      ? judgeRecheck(cycle.redFailing, event.recheck, purpose === 'green' ? 'GREEN' : 'REFACTOR')
      : null;
  if (unheld !== null) {
    // Not proven, so gone like any rejected turn; a human looks at the navigator's test. A retry
    // runs the turn again: proving again would prove the reverted tree, RED's own, as GREEN.
    revertPending(d);
    flushTurn(d, outcome, 'rejected', unheld);
    cycle.rejections.push({ step: turnStep, verdict: 'red-not-held', reason: unheld, at: d.at });
    log(d, { type: 'cycle.rejected', item: cycle.item, step: turnStep, verdict: 'red-not-held', reason: unheld });
    writeCycle(d);
    place(d, at.turn(turnStep, s.current, cycle));
    escalate(d, unheld);
    return true;
  }
  if (v.verdict === 'green') {
    flushTurn(d, outcome, 'accepted');
    s.passing = v.passing;
    s.failure = null;
    s.repair = 0;
    log(d, { type: 'cycle.green', item: cycle.item, branch, purpose });
    if (purpose === 'green') {
      cycle.green = stamp('green');
      const it = currentItem(s)!;
      it.status = 'green';
      d.effects.push({ type: 'set-item-status', item: it.id, status: 'green' });
      writeCycle(d);
      setStep(d, at.turn('refactor', s.current, cycle));
      handoff(d, 'driver', 'driver', 'refactor');
    } else {
      cycle.refactor = stamp('green');
      writeCycle(d);
      setStep(d, at.turn('review', s.current, cycle));
      handoff(d, 'driver', 'navigator', 'review');
    }
    return true;
  }
  if (v.verdict !== 'broken') revertPending(d);
  flushTurn(d, outcome, 'rejected', v.reason);
  cycle.rejections.push({ step: turnStep, verdict: v.verdict, reason: v.reason, at: d.at });
  log(d, { type: 'cycle.rejected', item: cycle.item, step: turnStep, verdict: v.verdict, reason: v.reason });
  writeCycle(d);
  if (v.verdict !== 'failing') {
    // A reverted turn is run again on a retry (a proof of the tree it was reverted to proves nothing
    // of it); a proof that could not be judged is proven again, its turn still committed.
    if (v.verdict !== 'broken') place(d, at.turn(turnStep, s.current, cycle));
    escalate(d, v.reason);
    return true;
  }
  const retry = at.turn(turnStep, s.current, cycle);
  if (s.repair >= policy.repairRounds) {
    place(d, retry);
    escalate(d, `${turnStep.toUpperCase()} is still red after ${s.repair} repair round(s): ${v.reason}`);
    return true;
  }
  s.repair += 1;
  cycle.repairs += 1;
  s.attempt = 0;
  s.failure = failureOf(purpose, v.reason, v.failing, outcome);
  s.note = `the suite is red after your ${turnStep} turn (repair round ${s.repair} of ${policy.repairRounds}): ${v.reason}`;
  log(d, { type: 'cycle.repair', item: cycle.item, step: turnStep, round: s.repair });
  enter(d, retry);
  return true;
}
