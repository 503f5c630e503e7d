/**
 * The conductor: `transition(state, event) -> { state, effects }`, pure. The lane driver persists
 * the state, performs the effects and feeds each action's result back as the next event; nothing
 * here reads a file, a clock or a database, so every routing decision is table-testable.
 *
 * Each step's events, moves and action are in one table (steps.ts). An event the current step
 * does not accept (a turn nobody asked for, a proof of another item), or a move the table does not
 * list, is a driver or conductor bug and throws; the property tests rely on that.
 */
import { ConsortError } from '../core/errors.js';
import { turnId } from './actions.js';
import { actionKey, type ActionEffect, type Effect, isAction } from './effects.js';
import type { ConductorEvent, EffectTiming } from './events.js';
import { allocate, at, type Draft, draftOf, enter, log, place, policyOf } from './moves.js';
import { enterDesignStop, reopen } from './progress.js';
import { ConductorState as StateSchema, type ConductorState, type Position } from './state.js';
import { STEP_TABLE } from './steps.js';

export interface Transition {
  state: ConductorState;
  effects: Effect[];
}

function addTiming(d: Draft, t: EffectTiming): void {
  const c = d.state.cycle;
  if (c === null) return;
  c.timing.wallMs += t.totalMs;
  c.timing.agentMs += t.agentMs;
  c.timing.suiteMs += t.suiteMs;
  c.timing.overheadMs += Math.max(0, t.totalMs - t.agentMs - t.suiteMs);
}

/** Back to the step an escalation stopped at, with its fields; a stop that cannot resume is a bug. */
function resume(d: Draft): void {
  const s = d.state;
  if (s.escalation === null) return;
  const resumed = StateSchema.safeParse({ ...s, step: s.escalation.step, escalation: null });
  if (!resumed.success)
    throw new ConsortError('internal', `The ${s.step} feature cannot resume at ${s.escalation.step}.`, {
      hint: 'Run `consort status` and report this.',
    });
  log(d, { type: 'escalation', kind: 'resumed', step: s.escalation.step, reason: s.escalation.reason });
  s.attempt = 0;
  s.repair = 0;
  const { step, phase, gate, current, cycle, pendingTurn } = resumed.data;
  place(d, { step, phase, gate, current, cycle, pendingTurn, escalation: null } as Position);
}

/**
 * A run starts: the first design stop of a new feature; a stopped one resumes (escalated or
 * stalled only with --retry); a reopened gate takes over; otherwise the step is entered afresh,
 * with new ids, as the previous run may have half-done its action.
 */
function onRunStarted(d: Draft, event: Extract<ConductorEvent, { type: 'run.started' }>): void {
  const s = d.state;
  const first = s.policy === null;
  s.policy = event.policy;
  // A new run is a person's decision, not a loop: the stall guard starts afresh.
  s.lastAction = null;
  if (first) {
    log(d, { type: 'phase.start', phase: 'design' });
    enterDesignStop(d, 0, 'conductor');
    return;
  }
  if (s.step === 'escalated' || s.step === 'stalled') {
    if (!event.retry) return;
    resume(d);
  }
  if (reopen(d, event.reopened)) return;
  if (s.step === 'awaiting-approval') enter(d, at.gate(s.gate, s.phase));
  else allocate(s);
}

function fingerprint(state: ConductorState): string {
  const { lastAction: _last, ...rest } = state;
  return JSON.stringify(rest);
}

/** The turn ids and the proof branch an action carries (a gate check carries neither). */
function idsOf(action: ActionEffect): { turn: number; proof: string | null } {
  const number = (id: string) => Number(/(\d+)$/.exec(id)?.[1] ?? 0);
  switch (action.type) {
    case 'run-turn':
      return { turn: number(action.turn.id), proof: null };
    case 'run-experiments':
      return {
        turn: Math.min(...action.turns.map((t) => number(t.id))),
        proof: action.turns[0]?.experiment?.proofBranch ?? null,
      };
    case 'prove':
      return { turn: 0, proof: action.branch };
    case 'check-gate':
      return { turn: 0, proof: null };
  }
}

/**
 * Stall guard: an action asked for twice is a bug that stops the run. Ids are handed out only on
 * entering a step, so a turn id or proof branch asked for again means a step took an event and
 * did not move on; a gate check, which carries no id, is a stall when asked again from the same state.
 */
export function stallGuard(d: Draft): void {
  const action = d.effects.find(isAction);
  if (action === undefined) return;
  const key = actionKey(action);
  const print = fingerprint(d.state);
  const last = d.state.lastAction;
  const ids = idsOf(action);
  let reason: string | null = null;
  if (last !== null && last.key === key && last.fingerprint === print)
    reason = `stall: ${key} was asked for twice with no change of state`;
  else if (last !== null && ids.turn > 0 && ids.turn <= last.turn)
    reason = `stall: ${turnId(ids.turn)} was asked for again (no step handed out a new turn)`;
  else if (last !== null && ids.proof !== null && ids.proof === last.proof)
    reason = `stall: the proof on ${ids.proof} was asked for again (no step handed out a new proof)`;
  if (reason !== null) {
    d.effects = d.effects.filter((e) => !isAction(e));
    const step = d.state.step;
    Object.assign(d.state, { step: 'stalled', escalation: { reason, step, at: d.at } });
    log(d, { type: 'escalation', kind: 'stalled', step, reason });
    d.effects.push({ type: 'stop', reason: 'stalled', message: reason });
    return;
  }
  d.state.lastAction = {
    key,
    fingerprint: print,
    turn: Math.max(ids.turn, last?.turn ?? 0),
    proof: ids.proof ?? last?.proof ?? null,
  };
}

/** A table entry as the dispatcher sees it: the entry for the state's own step. */
interface AnyStep {
  accepts: readonly string[];
  on(d: Draft, event: ConductorEvent): boolean;
  act(state: ConductorState): Effect[];
  next: Partial<Record<string, string>>;
}
const specOf = (state: ConductorState) => STEP_TABLE[state.step] as unknown as AnyStep;

function unexpected(state: ConductorState, event: ConductorEvent): never {
  throw new ConsortError(
    'internal',
    `The conductor did not expect ${event.type} at step ${state.step}${state.gate ? ` (${state.gate})` : ''}.`,
    {
      hint: 'The run state and the driver disagree; run `consort status` and report this.',
    },
  );
}

export function transition(state: ConductorState, event: ConductorEvent): Transition {
  const d = draftOf(state, event.at);
  if (event.type === 'run.started') {
    onRunStarted(d, event);
  } else {
    policyOf(d);
    const spec = specOf(state);
    if (!spec.accepts.includes(event.type)) unexpected(state, event);
    addTiming(d, event.timing);
    if (!spec.on(d, event)) unexpected(state, event);
    if (!(d.state.step in spec.next)) {
      throw new ConsortError(
        'internal',
        `The conductor moved from ${state.step} to ${d.state.step} on ${event.type}, a move its step table does not list.`,
        {
          hint: 'Report this: src/conductor/steps.ts and the handler disagree.',
        },
      );
    }
  }
  d.effects.push(...specOf(d.state).act(d.state));
  stallGuard(d);
  return { state: d.state, effects: d.effects };
}
