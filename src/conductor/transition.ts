/**
 * The conductor: `transition(state, event) -> { state, effects }`, pure. The lane driver persists
 * the state, performs the effects and feeds each action's result back as the next event; nothing
 * here reads a file, a clock or a database, so every routing decision is table-testable.
 *
 * An event that does not fit the current step (a turn nobody asked for, a proof of another item)
 * is a driver bug and throws; the property tests rely on that.
 */
import { ConsortError } from '../core/errors.js';
import { actionKey, type Effect, isAction } from './effects.js';
import type { ConductorEvent, EffectTiming } from './events.js';
import { act, type Draft, draftOf, log, policyOf } from './moves.js';
import { atGate, enterDesignStop, reopen } from './progress.js';
import { onExperiments } from './experiments.js';
import { onProof } from './proof-steps.js';
import type { ConductorState } from './state.js';
import { onTurn } from './turns.js';

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

function onRunStarted(d: Draft, event: Extract<ConductorEvent, { type: 'run.started' }>): void {
  const s = d.state;
  const first = s.policy === null;
  s.policy = event.policy;
  // A new run is a person's decision, not a loop: the stall guard starts afresh.
  s.lastAction = null;
  if (first) {
    log(d, { type: 'phase.start', phase: 'design' });
    enterDesignStop(d, 0, 'conductor');
  }
  if (s.step === 'escalated' || s.step === 'stalled') {
    if (!event.retry || s.escalation === null) return;
    log(d, { type: 'escalation', kind: 'resumed', step: s.escalation.step, reason: s.escalation.reason });
    s.step = s.escalation.step;
    s.escalation = null;
    s.attempt = 0;
    s.repair = 0;
  }
  if (reopen(d, event.reopened)) return;
  if (s.step === 'awaiting-approval') s.step = 'gate';
}

function fingerprint(state: ConductorState): string {
  const { lastAction: _last, ...rest } = state;
  return JSON.stringify(rest);
}

/** Stall guard: the same action planned twice from the same state is a bug that stops the run. */
export function stallGuard(d: Draft): void {
  const action = d.effects.find(isAction);
  if (action === undefined) return;
  const key = actionKey(action);
  const print = fingerprint(d.state);
  const last = d.state.lastAction;
  if (last !== null && last.key === key && last.fingerprint === print) {
    d.effects = d.effects.filter((e) => !isAction(e));
    const reason = `stall: ${key} was asked for twice with no change of state`;
    d.state.escalation = { reason, step: d.state.step, at: d.at };
    d.state.step = 'stalled';
    log(d, { type: 'escalation', kind: 'stalled', step: d.state.escalation.step, reason });
    d.effects.push({ type: 'stop', reason: 'stalled', message: reason });
    return;
  }
  d.state.lastAction = { key, fingerprint: print };
}

function unexpected(state: ConductorState, event: ConductorEvent): never {
  throw new ConsortError('internal', `The conductor did not expect ${event.type} at step ${state.step}${state.gate ? ` (${state.gate})` : ''}.`, {
    hint: 'The run state and the driver disagree; run `consort status` and report this.',
  });
}

export function transition(state: ConductorState, event: ConductorEvent): Transition {
  const d = draftOf(state, event.at);
  if (event.type !== 'run.started') {
    policyOf(d);
    addTiming(d, event.timing);
  }
  switch (event.type) {
    case 'run.started':
      onRunStarted(d, event);
      break;
    case 'turn.finished':
      if (!onTurn(d, event.turn)) unexpected(state, event);
      break;
    case 'proof.finished':
      if (!onProof(d, event.purpose, event.item, event.branch, event.outcome)) unexpected(state, event);
      break;
    case 'experiments.finished':
      if (!onExperiments(d, event.results)) unexpected(state, event);
      break;
    case 'gate.checked':
      if (d.state.step !== 'gate' || d.state.gate !== event.gate) unexpected(state, event);
      if (!reopen(d, event.reopened)) atGate(d, event.gate, event.check, event.items);
      break;
  }
  act(d);
  stallGuard(d);
  return { state: d.state, effects: d.effects };
}
