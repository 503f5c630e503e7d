/**
 * Moving forward: to the next design stop, into the build, to the next test-list item, past a
 * gate, and back to a reopened gate. Each move logs what the dashboard and `consort log` show
 * (phase changes, handoffs) and records cycles.
 */
import type { CycleRecord } from './effects.js';
import type { GateCheck } from './events.js';
import { designPlan } from './design-plan.js';
import { gateEnabled, isApproved } from './gates.js';
import { at, type Draft, enter, handoff, log, place, policyOf, recordTurn, setStep } from './moves.js';
import type { Role } from './roles.js';
import type { GateName, Item } from './state.js';

export function enterDesignStop(d: Draft, index: number, from: Role | 'conductor'): void {
  const stop = designPlan(policyOf(d), d.state.userFacing)[index];
  d.state.designStop = index;
  if (stop === undefined || stop.kind === 'gate') {
    enter(d, at.gate(stop?.gate ?? 'spec', 'design'));
    return;
  }
  setStep(d, at.design());
  handoff(d, from, stop.role, 'design');
}

export function writeCycle(d: Draft): void {
  const c = d.state.cycle;
  if (c === null) return;
  const { proofs: _proofs, number, ...rest } = c;
  const record: CycleRecord = { version: 1, cycle: number, ...structuredClone(rest) };
  d.effects.push({ type: 'write-cycle', record });
}

/** The first item not yet built; the merge gate when there is none. */
export function nextItem(d: Draft): void {
  const s = d.state;
  const index = s.items.findIndex((i) => i.status !== 'refactored');
  s.repair = 0;
  s.failure = null;
  if (index === -1) {
    log(d, { type: 'phase.end', phase: 'build' });
    log(d, { type: 'phase.start', phase: 'merge' });
    enter(d, at.gate('merge', 'merge'));
    return;
  }
  const item = s.items[index]!;
  s.cycles += 1;
  const cycle = {
    number: s.cycles,
    item: item.id,
    ac: item.ac,
    testFiles: [],
    tests: [],
    red: null,
    green: null,
    refactor: null,
    review: null,
    rejections: [],
    repairs: 0,
    proofs: 0,
    timing: { wallMs: 0, agentMs: 0, suiteMs: 0, overheadMs: 0 },
  };
  setStep(d, at.turn('red', index, cycle));
  handoff(d, 'conductor', 'navigator', 'red');
}

/** Statuses survive a re-approved spec for items that keep their id. */
function mergeItems(previous: readonly Item[], next: readonly Item[]): Item[] {
  return next.map((item) => ({ ...item, status: previous.find((p) => p.id === item.id)?.status ?? 'pending' }));
}

function enterBuild(d: Draft, items: readonly Item[]): void {
  const s = d.state;
  s.items = mergeItems(s.items, items);
  log(d, { type: 'phase.end', phase: 'design' });
  log(d, { type: 'phase.start', phase: 'build' });
  if (s.passing === null) setStep(d, at.baseline());
  else nextItem(d);
}

function finish(d: Draft): void {
  log(d, { type: 'phase.end', phase: 'merge' });
  log(d, { type: 'phase.start', phase: 'done' });
  setStep(d, at.done());
}

export function passGate(d: Draft, gate: GateName, items: readonly Item[] | undefined): void {
  const s = d.state;
  const policy = policyOf(d);
  if (gate === 'spec') {
    enterBuild(d, items ?? s.items);
  } else if (gate === 'plan' || gate === 'test_list') {
    enterDesignStop(d, s.designStop + 1, 'conductor');
  } else if (gate === 'merge' && gateEnabled('deploy', policy.optionalGates)) {
    enter(d, at.gate('deploy', 'merge'));
  } else {
    finish(d);
  }
}

/** At a gate: pass it when approved (or proxy-approved), otherwise surface it and stop. */
export function atGate(d: Draft, gate: GateName, check: GateCheck, items: readonly Item[] | undefined): void {
  const s = d.state;
  const policy = policyOf(d);
  const itemsOk = gate !== 'spec' || (items !== undefined && items.length > 0);
  if (isApproved(check) && itemsOk) {
    passGate(d, gate, items);
    return;
  }
  if (policy.gateMode === 'proxy' && check.valid && itemsOk && (check.flags ?? []).length === 0) {
    const approval = { approver: 'proxy', at: d.at, hash: check.hash, proxy: true };
    d.effects.push({ type: 'record-approval', gate, approval });
    log(d, { type: 'gate.approved', gate, hash: check.hash, approver: 'proxy', proxy: true });
    passGate(d, gate, items);
    return;
  }
  place(d, at.gate(gate, s.phase === 'merge' ? 'merge' : 'design', 'awaiting-approval'));
  const problems = itemsOk ? check.problems : [...check.problems, 'the test list has no items'];
  // Flags do not stop a person approving (only proxy mode): they are told apart from problems.
  const flags = check.flags ?? [];
  const flagged = flags.length ? { flags } : {};
  if (s.surfaced[gate] !== check.hash) {
    s.surfaced[gate] = check.hash;
    log(d, { type: 'gate.surfaced', gate, hash: check.hash, problems, ...flagged });
  }
  d.effects.push({ type: 'surface-gate', gate, hash: check.hash, problems, ...flagged });
}

/** Gates the feature has already passed, in order. */
export function passedGates(d: Draft): GateName[] {
  const s = d.state;
  const policy = policyOf(d);
  const plan = designPlan(policy, s.userFacing);
  const passed: GateName[] = [];
  plan.forEach((stop, i) => {
    if (stop.kind === 'gate' && (s.phase !== 'design' || i < s.designStop)) passed.push(stop.gate);
  });
  if (s.phase === 'done' || (s.phase === 'merge' && s.gate === 'deploy')) passed.push('merge');
  if (s.phase === 'done' && gateEnabled('deploy', policy.optionalGates)) passed.push('deploy');
  return passed;
}

/** An approved gate whose artifacts changed sends the feature back to it. */
export function reopen(d: Draft, reopened: readonly GateName[]): boolean {
  const s = d.state;
  if (s.phase === 'done') return false;
  const passed = passedGates(d);
  const gate = passed.find((g) => reopened.includes(g));
  if (gate === undefined) return false;
  log(d, { type: 'gate.reopened', gate, reason: 'its artifacts changed after approval' });
  // A turn accepted but not yet proven keeps its commit: its record says the proof never ran.
  if (s.pendingTurn !== null) recordTurn(d, { ...s.pendingTurn, suite: `not proven: the ${gate} gate reopened first` });
  if (gate !== 'merge') {
    s.designStop = designPlan(policyOf(d), s.userFacing).findIndex(
      (stop) => stop.kind === 'gate' && stop.gate === gate,
    );
    if (s.phase !== 'design') {
      log(d, { type: 'phase.end', phase: s.phase });
      log(d, { type: 'phase.start', phase: 'design' });
    }
  }
  setStep(d, at.gate(gate, gate === 'merge' ? 'merge' : 'design'));
  return true;
}
