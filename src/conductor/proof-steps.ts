/**
 * After the conductor's own suite run: the baseline must be green; RED must be proven (else the
 * navigator tries again with the reason); GREEN and REFACTOR must be green with the frozen tests
 * untouched (else a bounded repair, then a human).
 */
import type { ProofOutcome, ProofTest } from './events.js';
import { currentItem, type Draft, escalate, handoff, log, policyOf, recordTurn, retryOrEscalate, setStep } from './moves.js';
import { nextItem, writeCycle } from './progress.js';
import { boundedOutput, judgeBaseline, judgeGreen, judgeRed } from './proofs.js';
import type { Failure, ProofPurpose } from './state.js';

const STEP_OF: Record<ProofPurpose, string> = { baseline: 'baseline', red: 'prove-red', green: 'prove-green', refactor: 'prove-refactor' };

export function failureOf(purpose: ProofPurpose, summary: string, failing: readonly ProofTest[], outcome: ProofOutcome): Failure {
  return {
    purpose, summary,
    tests: failing.slice(0, 50).map((t) => ({ id: t.id, state: t.state, ...(t.message ? { message: t.message.slice(0, 500) } : {}) })),
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
  if (pending?.base && pending.filesChanged.length > 0) d.effects.push({ type: 'revert', base: pending.base, paths: pending.filesChanged });
}

/** The accepted turn that led to this proof gets its record, with the proof's suite summary. */
function flushTurn(d: Draft, outcome: ProofOutcome, verdict: 'accepted' | 'rejected', reason?: string): void {
  const pending = d.state.pendingTurn;
  if (pending === null) return;
  recordTurn(d, { ...pending, verdict, suite: suiteSummary(outcome), ...(reason ? { reason } : {}) });
  d.state.pendingTurn = null;
}

export function onProof(d: Draft, purpose: ProofPurpose, item: string | null, branch: string, outcome: ProofOutcome): boolean {
  const s = d.state;
  if (s.step !== STEP_OF[purpose] || (purpose !== 'baseline' && item !== (currentItem(s)?.id ?? null))) return false;
  const policy = policyOf(d);

  if (purpose === 'baseline') {
    const v = judgeBaseline(outcome);
    if (v.verdict !== 'green') {
      escalate(d, `the suite must pass before the first cycle, so RED can be told from a broken suite: ${v.reason}`);
      return true;
    }
    s.passing = v.passing;
    nextItem(d);
    return true;
  }

  const cycle = s.cycle!;
  const stamp = (verdict: string) => ({ at: d.at, verdict, branch, summary: suiteSummary(outcome) });

  if (purpose === 'red') {
    const v = judgeRed({ outcome, passing: s.passing ?? [], testFiles: cycle.testFiles, rejectBornGreen: policy.rejectBornGreen });
    if (v.verdict === 'red') {
      flushTurn(d, outcome, 'accepted');
      cycle.tests = v.tests;
      cycle.red = stamp('red');
      for (const file of cycle.testFiles) {
        const hash = outcome.hashes[file];
        if (hash) s.frozen[file] = hash;
        else delete s.frozen[file];
      }
      const it = currentItem(s)!;
      it.status = 'red';
      d.effects.push({ type: 'set-item-status', item: it.id, status: 'red' });
      log(d, { type: 'cycle.red', item: it.id, branch, tests: v.tests });
      writeCycle(d);
      setStep(d, 'green');
      s.repair = 0;
      s.failure = failureOf('red', `${v.failing.length} test(s) fail as they should`, v.failing, outcome);
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
    const tail = outcome.output.trim() === '' ? '' : `\n\nThe end of the suite's output:\n${boundedOutput(outcome.output).slice(-1500)}`;
    retryOrEscalate(d, 'red', `${v.reason}${tail}`);
    return true;
  }

  // green or refactor
  const v = judgeGreen({ outcome, itemTests: cycle.tests, frozen: s.frozen });
  const turnStep = purpose === 'green' ? 'green' : 'refactor';
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
      setStep(d, 'refactor');
      handoff(d, 'driver', 'driver', 'refactor');
    } else {
      cycle.refactor = stamp('green');
      writeCycle(d);
      setStep(d, 'review');
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
    escalate(d, v.reason);
    return true;
  }
  s.step = turnStep;
  if (s.repair >= policy.repairRounds) {
    escalate(d, `${turnStep.toUpperCase()} is still red after ${s.repair} repair round(s): ${v.reason}`);
    return true;
  }
  s.repair += 1;
  cycle.repairs += 1;
  s.attempt = 0;
  s.failure = failureOf(purpose, v.reason, v.failing, outcome);
  s.note = `the suite is red after your ${turnStep} turn (repair round ${s.repair} of ${policy.repairRounds}): ${v.reason}`;
  log(d, { type: 'cycle.repair', item: cycle.item, step: turnStep, round: s.repair });
  return true;
}
