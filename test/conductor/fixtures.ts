/** Builders for conductor events: what a driver would feed back, as plain data. */
import { defaultConfig } from '../../src/config/schema.js';
import { type ActionEffect, type Effect, isAction, type TurnPlan } from '../../src/conductor/effects.js';
import type {
  ConductorEvent,
  ExperimentResult,
  GateCheck,
  ProofOutcome,
  ProofTest,
  TurnOutcome,
} from '../../src/conductor/events.js';
import { OWED } from '../../src/conductor/roles.js';
import type { ConductorState, GateName, Item, Policy } from '../../src/conductor/state.js';
import { initialState } from '../../src/conductor/state.js';
import { transition, type Transition } from '../../src/conductor/transition.js';
import { isDesignRole } from '../../src/conductor/moves.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';

export const FEATURE = '001-phones';
export const FDIR = `.consort/features/${FEATURE}`;
export const AT = '2030-01-01T00:00:00.000Z';
export const BASE = 'b'.repeat(40);
export const TIMING = { totalMs: 1000, agentMs: 600, suiteMs: 300 };

export function policy(over: Partial<Policy> = {}): Policy {
  return { ...buildPolicy(defaultConfig(), FEATURE), ...over };
}

export const ITEMS: Item[] = [
  { id: 'T1', ac: 'AC1', kind: 'behavior', title: 'stores a phone', status: 'pending' },
  { id: 'T2', ac: 'AC2', kind: 'behavior', title: 'rejects a malformed phone', status: 'pending' },
];

export function started(
  p: Policy = policy(),
  extra: Partial<Extract<ConductorEvent, { type: 'run.started' }>> = {},
): ConductorEvent {
  return { type: 'run.started', at: AT, policy: p, reopened: [], retry: false, ...extra };
}

export function testFileOf(item: string): string {
  return `test/${item.toLowerCase()}.test.js`;
}

/** A successful outcome for a planned turn, overridable. */
export function turnFor(plan: TurnPlan, over: Partial<TurnOutcome> = {}): TurnOutcome {
  const base: TurnOutcome = {
    id: plan.id,
    role: plan.role,
    step: plan.step,
    item: plan.item?.id ?? null,
    attempt: plan.attempt,
    backend: 'command',
    model: null,
    startedAt: AT,
    durationMs: 600,
    usage: { inputTokens: 10, outputTokens: 20 },
    exit: { kind: 'done' },
    summary: 'done',
    base: BASE,
    changes: [],
    hashes: Object.fromEntries(plan.frozen.map((f) => [f, `h:${f}`])),
    owed: [],
    facts: {},
    branch: plan.branch,
    context: { bytes: 100, sha256: 'c'.repeat(64) },
  };
  if (isDesignRole(plan.role)) {
    const file = OWED[plan.role];
    base.changes = [{ path: `${FDIR}/${file}`, status: 'added' }];
    base.owed = [{ file, status: 'valid', problems: [] }];
    if (plan.role === 'spec-author') base.facts = { userFacing: false };
  } else if (plan.step === 'red') {
    base.changes = [{ path: testFileOf(plan.item!.id), status: 'added' }];
  } else if (plan.step === 'green') {
    base.changes = [{ path: 'src/phones.js', status: 'modified' }];
  } else if (plan.step === 'review') {
    base.changes = [{ path: `${FDIR}/reviews/${plan.item!.id}.json`, status: 'added' }];
    base.owed = [{ file: `reviews/${plan.item!.id}.json`, status: 'valid', problems: [] }];
    base.facts = { review: { verdict: 'approve', notes: 'fine' } };
  }
  return { ...base, ...over };
}

export function finished(turn: TurnOutcome): ConductorEvent {
  return { type: 'turn.finished', at: AT, turn, timing: TIMING };
}

export const OLD_TESTS: ProofTest[] = [
  { id: 'customers::creates', file: 'test/customers.test.js', state: 'passed' },
  { id: 'orders::places', file: 'test/orders.test.js', state: 'passed' },
];

export function ran(
  tests: ProofTest[],
  exitCode: number | null = tests.some((t) => t.state !== 'passed' && t.state !== 'skipped') ? 1 : 0,
  hashes: Record<string, string | null> = {},
): ProofOutcome {
  return { kind: 'ran', exitCode, tests, summary: `${tests.length} tests`, output: 'suite output', hashes };
}

export function proved(effect: Extract<Effect, { type: 'prove' }>, outcome: ProofOutcome): ConductorEvent {
  const hashes = { ...Object.fromEntries(effect.hash.map((f) => [f, `h:${f}`])), ...outcome.hashes };
  return {
    type: 'proof.finished',
    at: AT,
    purpose: effect.purpose,
    item: effect.item,
    branch: effect.branch,
    outcome: { ...outcome, hashes },
    timing: TIMING,
  };
}

export function itemTest(item: string, state: ProofTest['state'], extra: Partial<ProofTest> = {}): ProofTest {
  return { id: `phones::${item} works`, file: testFileOf(item), state, ...extra };
}

export function gateChecked(
  gate: GateName,
  check: Partial<GateCheck> = {},
  items: Item[] | undefined = gate === 'spec' ? ITEMS : undefined,
  reopened: GateName[] = [],
): ConductorEvent {
  const hash = check.hash ?? `sha256:${gate}`;
  return {
    type: 'gate.checked',
    at: AT,
    gate,
    reopened,
    timing: TIMING,
    check: { valid: true, problems: [], hash, approval: { approver: 'ada', at: AT, hash, proxy: false }, ...check },
    ...(items ? { items } : {}),
  };
}

export function action(t: Transition): ActionEffect | undefined {
  return t.effects.find(isAction);
}

export function passingRun(s: ConductorState, item: string): ProofOutcome {
  const done = s.items.filter((i) => i.id !== item && i.status !== 'pending').map((i) => itemTest(i.id, 'passed'));
  return ran([...OLD_TESTS, ...done, itemTest(item, 'passed')]);
}

/** Results of competing GREEN attempts: each green and in scope unless said otherwise. */
export function experimented(
  a: Extract<Effect, { type: 'run-experiments' }>,
  s: ConductorState,
  over: Partial<ExperimentResult>[] = [],
): ConductorEvent {
  const results = a.turns.map((plan, i): ExperimentResult => {
    const proof = passingRun(s, plan.item!.id);
    return {
      turn: turnFor(plan),
      proof: { ...proof, hashes: Object.fromEntries(plan.frozen.map((f) => [f, `h:${f}`])) },
      changedLines: 10 * (i + 1),
      suiteMs: 1000,
      ...over[i],
    };
  });
  return { type: 'experiments.finished', at: AT, results, timing: TIMING };
}

/** The happy answer to whatever the conductor asks for. */
export function happy(t: Transition): ConductorEvent | undefined {
  const a = action(t);
  if (a === undefined) return undefined;
  if (a.type === 'run-turn') return finished(turnFor(a.turn));
  if (a.type === 'check-gate') return gateChecked(a.gate);
  if (a.type === 'run-experiments') return experimented(a, t.state);
  const s = t.state;
  const item = a.item;
  const done = s.items.filter((i) => i.id !== item && i.status !== 'pending').map((i) => itemTest(i.id, 'passed'));
  if (a.purpose === 'baseline') return proved(a, ran(OLD_TESTS));
  if (a.purpose === 'red')
    return proved(a, ran([...OLD_TESTS, ...done, itemTest(item!, 'failed', { message: 'expected 1, got 2' })]));
  return proved(a, ran([...OLD_TESTS, ...done, itemTest(item!, 'passed')]));
}

/** Play the happy path from a fresh feature until `stop` says so (or nothing is asked). */
export function playUntil(
  stop: (t: Transition) => boolean,
  p: Policy = policy(),
  answer: (t: Transition) => ConductorEvent | undefined = happy,
): Transition {
  let t = transition(initialState(FEATURE), started(p));
  for (let i = 0; i < 500 && !stop(t); i++) {
    const event = answer(t);
    if (event === undefined) return t;
    t = transition(t.state, event);
  }
  return t;
}

export function summary(t: Transition): Record<string, unknown> {
  return {
    phase: t.state.phase,
    step: t.state.step,
    gate: t.state.gate,
    item: t.state.current >= 0 ? t.state.items[t.state.current]?.id : null,
    attempt: t.state.attempt,
    repair: t.state.repair,
    effects: t.effects.map(describeEffect),
  };
}

export function describeEffect(e: Effect): string {
  switch (e.type) {
    case 'run-turn':
      return `run-turn ${e.turn.role}/${e.turn.step}${e.turn.item ? ` ${e.turn.item.id}` : ''}${e.turn.attempt ? ` #${e.turn.attempt}` : ''}`;
    case 'prove':
      return `prove ${e.purpose}${e.item ? ` ${e.item}` : ''}`;
    case 'check-gate':
      return `check-gate ${e.gate}`;
    case 'run-experiments':
      return `run-experiments ${e.turns.length}x driver/green ${e.turns[0]?.item?.id ?? ''}`;
    case 'adopt-experiment':
      return `adopt-experiment ${e.index}`;
    case 'commit':
      return `commit ${e.message}`;
    case 'revert':
      return `revert ${e.paths.join(',')}`;
    case 'append-turn':
      return `append-turn ${e.record.verdict}`;
    case 'write-cycle':
      return `write-cycle ${e.record.cycle}`;
    case 'set-item-status':
      return `status ${e.item}=${e.status}`;
    case 'record-approval':
      return `record-approval ${e.gate} by ${e.approval.approver}`;
    case 'log':
      return `log ${e.event.type}`;
    case 'surface-gate':
      return `surface-gate ${e.gate}`;
    case 'stop':
      return `stop ${e.reason}`;
  }
}

export type { ConductorState };
