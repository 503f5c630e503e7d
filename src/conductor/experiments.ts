/**
 * Competing GREEN attempts (`build.experiments` / `--experiments N`): N driver turns, each in its
 * own git worktree with its own database branches, each proven on a fresh branch. The conductor
 * keeps the green ones that stayed in scope and picks by an objective rule — fewest changed lines,
 * then the fastest suite, then the lowest number — and adopts that one; if none is green, it is a
 * failed GREEN like any other (a repair round with the failure in context, then a human).
 */
import { matchesAny } from '../core/glob.js';
import type { ExperimentResult, ProofOutcome, ProofTest } from './events.js';
import { turnId } from './actions.js';
import {
  at,
  commitMessage,
  currentItem,
  type Draft,
  enter,
  escalate,
  experimentsDue,
  handoff,
  log,
  policyOf,
  recordTurn,
  setStep,
  turnRecord,
} from './moves.js';
import { failureOf } from './proof-steps.js';
import { writeCycle } from './progress.js';
import { judgeGreen, judgeRecheck } from './proofs.js';
import { checkScope, describeRefusals } from './scope.js';
import type { StateAt } from './state.js';

export const PICK_RULE = 'fewest changed lines, then the fastest suite, then the lowest number';

export interface Candidate {
  index: number;
  changedLines: number;
  suiteMs: number;
}

export function pickExperiment(green: readonly Candidate[]): Candidate | null {
  return (
    [...green].sort((a, b) => a.changedLines - b.changedLines || a.suiteMs - b.suiteMs || a.index - b.index)[0] ?? null
  );
}

type Judged =
  | { index: number; result: ExperimentResult; paths: string[]; verdict: 'green'; passing: string[] }
  | {
      index: number;
      result: ExperimentResult;
      paths: string[];
      verdict: 'rejected';
      reason: string;
      refused?: string[];
      failing: ProofTest[];
    }
  | {
      index: number;
      result: ExperimentResult;
      paths: string[];
      verdict: 'failed' | 'refused';
      reason: string;
      refused?: string[];
      failing: ProofTest[];
    };

function judge(d: Draft, result: ExperimentResult, index: number): Judged {
  const s = d.state;
  const policy = policyOf(d);
  const { turn } = result;
  const paths = turn.changes
    .filter((c) => !matchesAny(c.path, policy.ignore))
    .map((c) => c.path)
    .sort();
  const base = { index, result, paths, failing: [] as ProofTest[] };
  if (turn.exit.kind !== 'done')
    return {
      ...base,
      verdict: 'failed',
      reason: `the turn ${turn.exit.kind === 'timeout' ? 'timed out' : 'failed'}: ${turn.exit.message}`,
    };
  const changes = turn.changes.filter((c) => paths.includes(c.path));
  const refused = checkScope({
    policy,
    role: 'driver',
    step: 'green',
    item: turn.item,
    changes,
    frozen: s.frozen,
    hashes: turn.hashes,
    testOwned: turn.facts.testOwned ?? [],
    links: turn.facts.links ?? [],
    linkTargets: turn.facts.linkTargets ?? {},
    shadows: turn.facts.shadows ?? [],
  });
  if (refused.length > 0)
    return {
      ...base,
      verdict: 'refused',
      reason: `out of scope: ${describeRefusals(refused)}`,
      refused: refused.map((r) => r.path),
    };
  if (result.proof === null) return { ...base, verdict: 'rejected', reason: 'not proven' };
  const v = judgeGreen({
    outcome: result.proof,
    itemTests: s.cycle?.tests ?? [],
    frozen: s.frozen,
    passing: s.passing ?? [],
  });
  if (v.verdict === 'green') return { ...base, verdict: 'green', passing: v.passing };
  return { ...base, verdict: 'rejected', reason: v.reason, failing: v.verdict === 'failing' ? v.failing : [] };
}

export function onExperiments(
  d: Draft<StateAt<'green'>>,
  results: readonly ExperimentResult[],
  recheck?: ProofOutcome,
): boolean {
  const s = d.state;
  const policy = policyOf(d);
  const cycle = s.cycle;
  const item = currentItem(s);
  const n = results.length;
  const ids = Array.from({ length: n }, (_, i) => turnId(s.turns - n + 1 + i));
  if (!experimentsDue(s) || n !== policy.experiments || item === null) return false;
  if (
    results.some(
      (r, i) => r.turn.id !== ids[i] || r.turn.role !== 'driver' || r.turn.step !== 'green' || r.turn.item !== item.id,
    )
  )
    return false;

  const judged = results.map((r, i) => judge(d, r, i + 1));
  const proven = judged.filter((j): j is Extract<Judged, { verdict: 'green' }> => j.verdict === 'green');
  // As for a single GREEN: RED's failing tests must still fail on RED's tree, proven after the attempts.
  const unheld = proven.length > 0 && recheck && cycle.redFailing ? judgeRecheck(cycle.redFailing, recheck) : null;
  const green = unheld === null ? proven : [];
  const picked = pickExperiment(
    green.map((g) => ({ index: g.index, changedLines: g.result.changedLines, suiteMs: g.result.suiteMs })),
  );
  const winner = green.find((g) => g.index === picked?.index);
  const proofBranch = (j: Judged) => `${j.result.turn.branch ?? ''}-green-${cycle.proofs}`;
  const summary = (j: Judged) =>
    j.result.proof?.kind === 'ran' ? j.result.proof.summary : (j.result.proof?.message ?? 'no proof');

  for (const j of judged) {
    const won = winner !== undefined && j.index === winner.index;
    const reason = won
      ? undefined
      : j.verdict === 'green'
        ? (unheld ??
          `not picked (${PICK_RULE}): ${j.result.changedLines} changed lines vs ${winner?.result.changedLines}`)
        : j.reason;
    recordTurn(
      d,
      turnRecord(d, j.result.turn, won ? 'accepted' : j.verdict === 'green' ? 'rejected' : j.verdict, j.paths, {
        ...(reason ? { reason } : {}),
        ...(j.verdict !== 'green' && j.refused ? { refused: j.refused } : {}),
        suite: j.result.proof ? summary(j) : null,
      }),
    );
  }
  log(d, {
    type: 'cycle.experiments',
    item: item.id,
    of: n,
    green: green.map((g) => g.index),
    picked: winner?.index ?? null,
    rule: PICK_RULE,
  });

  if (winner !== undefined) {
    const t = winner.result.turn;
    d.effects.push({
      type: 'adopt-experiment',
      turn: t.id,
      index: winner.index,
      base: t.base,
      message: `${commitMessage('driver', 'green', s.feature, item.id)} (experiment ${winner.index} of ${n})`,
    });
    s.passing = winner.passing;
    s.failure = null;
    // RED's code (the attempts' base): REFACTOR's proof proves it again beside it.
    cycle.redTree = t.base;
    cycle.green = {
      at: d.at,
      verdict: 'green',
      branch: proofBranch(winner),
      summary: `experiment ${winner.index} of ${n}: ${winner.result.changedLines} changed lines; ${summary(winner)}`,
    };
    item.status = 'green';
    d.effects.push({ type: 'set-item-status', item: item.id, status: 'green' });
    log(d, { type: 'cycle.green', item: item.id, branch: proofBranch(winner), purpose: 'green' });
    writeCycle(d);
    setStep(d, at.turn('refactor', s.current, cycle));
    handoff(d, 'driver', 'driver', 'refactor');
    return true;
  }

  if (unheld !== null) {
    cycle.rejections.push({ step: 'green', verdict: 'red-not-held', reason: unheld, at: d.at });
    log(d, { type: 'cycle.rejected', item: item.id, step: 'green', verdict: 'red-not-held', reason: unheld });
    writeCycle(d);
    escalate(d, unheld);
    return true;
  }
  // No experiment is green: a failed GREEN, repaired one turn at a time.
  const reasons = judged.map((j) => `experiment ${j.index}: ${j.verdict === 'green' ? 'green' : j.reason}`).join('; ');
  cycle.rejections.push({ step: 'green', verdict: 'no-green-experiment', reason: reasons, at: d.at });
  log(d, { type: 'cycle.rejected', item: item.id, step: 'green', verdict: 'no-green-experiment', reason: reasons });
  writeCycle(d);
  if (s.repair >= policy.repairRounds) {
    escalate(d, `none of ${n} GREEN experiments made the suite pass: ${reasons}`);
    return true;
  }
  const failing = judged.find(
    (j): j is Extract<Judged, { verdict: 'rejected' }> => j.verdict === 'rejected' && j.result.proof !== null,
  );
  s.repair += 1;
  cycle.repairs += 1;
  s.failure = failing?.result.proof ? failureOf('green', failing.reason, failing.failing, failing.result.proof) : null;
  s.note = `none of ${n} competing GREEN attempts made the suite pass (repair round ${s.repair} of ${policy.repairRounds}): ${reasons}`;
  log(d, { type: 'cycle.repair', item: item.id, step: 'green', round: s.repair });
  enter(d, at.turn('green', s.current, cycle));
  return true;
}
