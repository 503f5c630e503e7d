/**
 * The conductor's step graph, written once: for every step, the events it accepts, what it does
 * with one (`on`, which may only lead to the steps in `next`), and the action it asks for (`act`,
 * a pure read of the state). `transition` dispatches through this table and refuses any move it
 * does not list; docs/tdd-lane.md's state diagram is generated from it (scripts/gen-conductor-diagram.mjs).
 *
 * `run.started` is accepted at every step, and the stall guard may stop any step that asks for an
 * action: what those may do is in ANY_STEP below.
 */
import { checkGate, cycleTurn, designTurn, greenTurns, prove, stop } from './actions.js';
import type { Effect } from './effects.js';
import type { ConductorEvent } from './events.js';
import { onExperiments } from './experiments.js';
import { type Draft, experimentsDue } from './moves.js';
import { atGate, reopen } from './progress.js';
import { onBaselineProof, onGreenProof, onRedProof } from './proof-steps.js';
import type { StateAt, Step } from './state.js';
import { onDesignTurn, onDriverTurn, onRedTurn, onReviewTurn } from './turns.js';

export type StepEventType = Exclude<ConductorEvent['type'], 'run.started'>;
type EventOf<T extends StepEventType> = Extract<ConductorEvent, { type: T }>;

export interface StepSpec<S extends Step = Step> {
  /** What the step is, for the generated documentation. */
  says: string;
  /** The events the step takes (besides `run.started`); any other is a driver bug and throws. */
  accepts: readonly StepEventType[];
  /** Handle an accepted event; false when it does not fit (another turn's id, another item). */
  on(d: Draft<StateAt<S>>, event: ConductorEvent): boolean;
  /** The effects the step asks for: exactly one action, or a stop. Reads the state; hands out nothing. */
  act(state: StateAt<S>): Effect[];
  /** The steps `on` may lead to, each with when. */
  next: Partial<Record<Step, string>>;
}

function step<S extends Step, E extends StepEventType = never>(spec: {
  says: string;
  accepts: readonly E[];
  on?: (d: Draft<StateAt<S>>, event: EventOf<E>) => boolean;
  act: (state: StateAt<S>) => Effect[];
  next: Partial<Record<Step, string>>;
}): StepSpec<S> {
  const on = spec.on ?? (() => false);
  return {
    says: spec.says,
    accepts: spec.accepts,
    act: spec.act,
    next: spec.next,
    on: (d, event) => on(d, event as EventOf<E>),
  };
}

const RETRY = 'refused, failed or incomplete: retry';
const HUMAN = 'out of retries';

export const STEP_TABLE: { readonly [S in Step]: StepSpec<S> } = {
  design: step<'design', 'turn.finished'>({
    says: "a design role's turn (spec-author, architect-reviewer, dba, test-strategist, ux-designer)",
    accepts: ['turn.finished'],
    on: (d, e) => onDesignTurn(d, e.turn),
    act: designTurn,
    next: { design: `accepted: the next role · ${RETRY}`, gate: 'accepted: a gate is next', escalated: HUMAN },
  }),
  gate: step<'gate', 'gate.checked'>({
    says: 'check a gate: its artifacts, their hash, the approval',
    accepts: ['gate.checked'],
    on: (d, e) => {
      if (e.gate !== d.state.gate) return false;
      if (!reopen(d, e.reopened)) atGate(d, e.gate, e.check, e.items);
      return true;
    },
    act: checkGate,
    next: {
      'awaiting-approval': 'not approved (proxy mode approves valid, unflagged artifacts)',
      design: 'plan or test_list passed',
      baseline: 'spec passed, first build',
      red: 'spec passed again: the first item not done',
      gate: 'merge passed with deploy next · an approved gate reopened · nothing left to build',
      done: 'merge (or deploy) passed',
    },
  }),
  'awaiting-approval': step<'awaiting-approval'>({
    says: 'stopped until a person approves the gate (`consort approve`, `/consort approve`)',
    accepts: [],
    act: stop,
    next: {},
  }),
  baseline: step<'baseline', 'proof.finished'>({
    says: 'the conductor runs the suite once: it must be green before the first cycle',
    accepts: ['proof.finished'],
    on: (d, e) => onBaselineProof(d, e),
    act: prove('baseline'),
    next: { red: 'green: the first item', gate: 'green, nothing left to build', escalated: 'red or broken' },
  }),
  red: step<'red', 'turn.finished'>({
    says: "the navigator's RED turn: a new or changed test for the item",
    accepts: ['turn.finished'],
    on: (d, e) => onRedTurn(d, e.turn),
    act: cycleTurn('navigator', 'red'),
    next: { 'prove-red': 'a test changed: committed', red: RETRY, escalated: HUMAN },
  }),
  'prove-red': step<'prove-red', 'proof.finished'>({
    says: 'the conductor proves RED on a fresh branch: the new tests fail by an assertion, the rest still pass',
    accepts: ['proof.finished'],
    on: (d, e) => onRedProof(d, e),
    act: prove('red'),
    next: {
      green: 'red: tests frozen',
      red: 'born green, wrong reason, regression: retry',
      escalated: `broken suite · ${HUMAN}`,
    },
  }),
  green: step<'green', 'turn.finished' | 'experiments.finished'>({
    says: "the driver's GREEN turn (or N competing ones: `experiments`)",
    accepts: ['turn.finished', 'experiments.finished'],
    // Competing attempts come back together; a single turn then does not fit, and vice versa.
    on: (d, e) =>
      e.type === 'turn.finished'
        ? !experimentsDue(d.state) && onDriverTurn(d, e.turn)
        : onExperiments(d, e.results, e.recheck),
    act: greenTurns,
    next: {
      'prove-green': 'code changed: committed',
      green: `${RETRY} · no experiment green: repair`,
      refactor: 'an experiment is green: adopted',
      escalated: 'out of retries or repair rounds',
    },
  }),
  'prove-green': step<'prove-green', 'proof.finished'>({
    says: 'the conductor proves GREEN on a fresh branch: the whole suite passes, frozen tests untouched',
    accepts: ['proof.finished'],
    on: (d, e) => onGreenProof(d, e),
    act: prove('green'),
    next: {
      refactor: 'green',
      green: 'red: a repair round',
      escalated: "tampered or broken · RED's tree green too · out of repair rounds",
    },
  }),
  refactor: step<'refactor', 'turn.finished'>({
    says: "the driver's REFACTOR turn",
    accepts: ['turn.finished'],
    on: (d, e) => onDriverTurn(d, e.turn),
    act: cycleTurn('driver', 'refactor'),
    next: {
      'prove-refactor': 'code changed: committed',
      review: 'nothing changed: GREEN still holds',
      refactor: RETRY,
      escalated: HUMAN,
    },
  }),
  'prove-refactor': step<'prove-refactor', 'proof.finished'>({
    says: 'the conductor proves the REFACTOR green',
    accepts: ['proof.finished'],
    on: (d, e) => onGreenProof(d, e),
    act: prove('refactor'),
    next: { review: 'green', refactor: 'red: a repair round', escalated: 'tampered or broken · out of repair rounds' },
  }),
  review: step<'review', 'turn.finished'>({
    says: "the navigator's REVIEW of the item",
    accepts: ['turn.finished'],
    on: (d, e) => onReviewTurn(d, e.turn),
    act: cycleTurn('navigator', 'review'),
    next: {
      red: 'approved: the next item',
      gate: 'approved: the last item, the merge gate',
      refactor: 'changes asked: a repair round',
      review: RETRY,
      escalated: 'out of retries or repair rounds',
    },
  }),
  escalated: step<'escalated'>({
    says: 'stopped for a person: what went wrong is in the escalation',
    accepts: [],
    act: stop,
    next: {},
  }),
  stalled: step<'stalled'>({
    says: 'stopped: the same action was asked for twice (a conductor bug)',
    accepts: [],
    act: stop,
    next: {},
  }),
  done: step<'done'>({ says: 'built, with its gates approved', accepts: [], act: stop, next: {} }),
};

/** What may happen at any step: `run.started` (a person starting a run) and the stall guard. */
export const ANY_STEP = {
  start: '`run.started` on a new feature: the first design stop',
  approval: '`run.started` at `awaiting-approval`: back to `gate`, which checks the gate again',
  resume: '`run.started --retry` at `escalated` or `stalled`: back to the step it stopped at',
  reopen: '`run.started` past an approved gate whose artifacts changed: back to that `gate`',
  fresh:
    '`run.started` anywhere else: the step is entered afresh, with new ids (the last run may have half-done its action)',
  stall:
    'the stall guard, at any step that asks for an action: `stalled` when a turn id or proof branch is asked for again, or a gate check from the same state',
} as const;
