/**
 * Routing goldens for every phase: from a state reached on the happy path, one event, and the
 * exact step and effects the conductor must produce.
 */
import type { Effect } from '../../src/conductor/effects.js';
import type { ConductorEvent } from '../../src/conductor/events.js';
import { ConductorState, initialState, type Policy } from '../../src/conductor/state.js';
import { STEP_TABLE } from '../../src/conductor/steps.js';
import { stallGuard, transition, type Transition } from '../../src/conductor/transition.js';
import { pickExperiment } from '../../src/conductor/experiments.js';
import {
  action,
  BASE,
  experimented,
  FDIR,
  FEATURE,
  finished,
  gateChecked,
  happy,
  itemTest,
  OLD_TESTS,
  playUntil,
  policy,
  proved,
  ran,
  started,
  summary,
  testFileOf,
  turnFor,
} from './fixtures.js';

type Turn = Extract<Effect, { type: 'run-turn' }>;
type Prove = Extract<Effect, { type: 'prove' }>;

const atTurn = (role: string, step?: string) => (t: Transition) => {
  const a = action(t);
  return a?.type === 'run-turn' && a.turn.role === role && (step === undefined || a.turn.step === step);
};
const atProof = (purpose: string) => (t: Transition) =>
  action(t)?.type === 'prove' && (action(t) as Prove).purpose === purpose;
const atGate = (gate: string) => (t: Transition) =>
  action(t)?.type === 'check-gate' && (action(t) as Extract<Effect, { type: 'check-gate' }>).gate === gate;

function turnOf(t: Transition): Turn['turn'] {
  const a = action(t);
  if (a?.type !== 'run-turn') throw new Error(`expected a turn, got ${a?.type}`);
  return a.turn;
}
function proofOf(t: Transition): Prove {
  const a = action(t);
  if (a?.type !== 'prove') throw new Error(`expected a proof, got ${a?.type}`);
  return a;
}

interface Case {
  name: string;
  policy?: Partial<Policy>;
  /** Where the happy path stops before the event. */
  at: (t: Transition) => boolean;
  event: (t: Transition) => ConductorEvent;
  expect: Record<string, unknown>;
}

const T1_RED = [...OLD_TESTS, itemTest('T1', 'failed', { message: 'expected 1, got 2' })];

const CASES: Case[] = [
  // ---- design ----
  {
    name: 'design: an accepted spec hands over to the architect',
    at: atTurn('spec-author'),
    event: (t) => finished(turnFor(turnOf(t))),
    expect: {
      phase: 'design',
      step: 'design',
      effects: [
        'commit consort(spec-author): spec 001-phones',
        'append-turn accepted',
        'log turn.usage',
        'log artifact.written',
        'log handoff',
        'run-turn architect-reviewer/architecture',
      ],
    },
  },
  {
    name: 'design: a user-facing spec brings the ux-designer in next',
    at: atTurn('spec-author'),
    event: (t) => finished(turnFor(turnOf(t), { facts: { userFacing: true } })),
    expect: {
      step: 'design',
      effects: [
        'commit consort(spec-author): spec 001-phones',
        'append-turn accepted',
        'log turn.usage',
        'log artifact.written',
        'log handoff',
        'run-turn ux-designer/ux',
      ],
    },
  },
  {
    name: 'design: a missing artifact gets one informed retry',
    at: atTurn('architect-reviewer'),
    event: (t) =>
      finished(
        turnFor(turnOf(t), {
          changes: [],
          owed: [{ file: 'architecture.json', status: 'missing', problems: ['architecture.json is missing'] }],
        }),
      ),
    expect: {
      step: 'design',
      attempt: 1,
      effects: ['append-turn incomplete', 'log turn.usage', 'run-turn architect-reviewer/architecture #1'],
    },
  },
  {
    name: 'design: a write outside the role is refused and reverted',
    at: atTurn('dba'),
    event: (t) =>
      finished(
        turnFor(turnOf(t), {
          changes: [
            { path: `${FDIR}/db-design.json`, status: 'added' },
            { path: 'migrations/1_x.sql', status: 'added' },
          ],
        }),
      ),
    expect: {
      step: 'design',
      attempt: 1,
      effects: [
        `revert ${FDIR}/db-design.json,migrations/1_x.sql`,
        'append-turn refused',
        'log turn.usage',
        'run-turn dba/db-design #1',
      ],
    },
  },
  {
    name: "design: an agent may never write the conductor's records (gates.json)",
    at: atTurn('test-strategist'),
    event: (t) =>
      finished(
        turnFor(turnOf(t), {
          changes: [
            { path: `${FDIR}/test-list.json`, status: 'added' },
            { path: `${FDIR}/gates.json`, status: 'modified' },
          ],
        }),
      ),
    expect: {
      step: 'design',
      attempt: 1,
      effects: [
        `revert ${FDIR}/gates.json,${FDIR}/test-list.json`,
        'append-turn refused',
        'log turn.usage',
        'run-turn test-strategist/test-list #1',
      ],
    },
  },
  {
    name: 'design: a failed command after its retry escalates',
    policy: { retries: 0 },
    at: atTurn('dba'),
    event: (t) => finished(turnFor(turnOf(t), { changes: [], exit: { kind: 'failed', message: 'exit 2' } })),
    expect: {
      step: 'escalated',
      effects: ['append-turn failed', 'log turn.usage', 'log escalation', 'stop escalated'],
    },
  },
  {
    name: 'design: the last design role leads to the spec gate',
    at: atTurn('test-strategist'),
    event: (t) => finished(turnFor(turnOf(t))),
    expect: {
      step: 'gate',
      gate: 'spec',
      effects: [
        'commit consort(test-strategist): test-list 001-phones',
        'append-turn accepted',
        'log turn.usage',
        'log artifact.written',
        'check-gate spec',
      ],
    },
  },
  {
    name: 'design: the optional plan gate sits before the test-strategist',
    policy: { optionalGates: ['plan'] },
    at: atTurn('dba'),
    event: (t) => finished(turnFor(turnOf(t))),
    expect: {
      step: 'gate',
      gate: 'plan',
      effects: [
        'commit consort(dba): db-design 001-phones',
        'append-turn accepted',
        'log turn.usage',
        'log artifact.written',
        'check-gate plan',
      ],
    },
  },
  {
    name: 'design: the optional test_list gate follows the test-strategist',
    policy: { optionalGates: ['test_list'] },
    at: atTurn('test-strategist'),
    event: (t) => finished(turnFor(turnOf(t))),
    expect: {
      step: 'gate',
      gate: 'test_list',
      effects: [
        'commit consort(test-strategist): test-list 001-phones',
        'append-turn accepted',
        'log turn.usage',
        'log artifact.written',
        'check-gate test_list',
      ],
    },
  },
  // ---- gates ----
  {
    name: 'gate: without an approval a human is asked, and the run stops',
    at: atGate('spec'),
    event: () => gateChecked('spec', { approval: null }),
    expect: {
      step: 'awaiting-approval',
      gate: 'spec',
      effects: ['log gate.surfaced', 'surface-gate spec', 'stop awaiting-approval'],
    },
  },
  {
    name: 'gate: an approval of other content is no approval (fails closed)',
    at: atGate('spec'),
    event: () =>
      gateChecked('spec', {
        hash: 'sha256:new',
        approval: { approver: 'ada', at: 'x', hash: 'sha256:old', proxy: false },
      }),
    expect: {
      step: 'awaiting-approval',
      effects: ['log gate.surfaced', 'surface-gate spec', 'stop awaiting-approval'],
    },
  },
  {
    name: 'gate: an approved but invalid artifact set is not passed',
    at: atGate('spec'),
    event: () => gateChecked('spec', { valid: false, problems: ['test-list.json is missing'] }, undefined),
    expect: {
      step: 'awaiting-approval',
      effects: ['log gate.surfaced', 'surface-gate spec', 'stop awaiting-approval'],
    },
  },
  {
    name: 'gate: an approved spec starts the build with a baseline proof',
    at: atGate('spec'),
    event: () => gateChecked('spec'),
    expect: { phase: 'build', step: 'baseline', effects: ['log phase.end', 'log phase.start', 'prove baseline'] },
  },
  {
    name: 'gate: proxy mode approves valid artifacts itself, and logs it',
    policy: { gateMode: 'proxy' },
    at: atGate('spec'),
    event: () => gateChecked('spec', { approval: null }),
    expect: {
      phase: 'build',
      step: 'baseline',
      effects: [
        'record-approval spec by proxy',
        'log gate.approved',
        'log phase.end',
        'log phase.start',
        'prove baseline',
      ],
    },
  },
  {
    name: 'gate: proxy mode never approves invalid artifacts',
    policy: { gateMode: 'proxy' },
    at: atGate('spec'),
    event: () =>
      gateChecked(
        'spec',
        { approval: null, valid: false, problems: ['feature-spec.json: stories: too small'] },
        undefined,
      ),
    expect: {
      step: 'awaiting-approval',
      effects: ['log gate.surfaced', 'surface-gate spec', 'stop awaiting-approval'],
    },
  },
  // ---- build: baseline and RED ----
  {
    name: 'baseline: a green suite starts the first cycle with the navigator',
    at: atProof('baseline'),
    event: (t) => proved(proofOf(t), ran(OLD_TESTS)),
    expect: { step: 'red', item: 'T1', effects: ['log handoff', 'run-turn navigator/red T1'] },
  },
  {
    name: 'baseline: a red suite escalates (RED could not be told from a broken suite)',
    at: atProof('baseline'),
    event: (t) => proved(proofOf(t), ran([{ ...OLD_TESTS[0]!, state: 'failed' }, OLD_TESTS[1]!])),
    expect: { step: 'escalated', effects: ['log escalation', 'stop escalated'] },
  },
  {
    name: 'red: a new test is committed and proven',
    at: atTurn('navigator', 'red'),
    event: (t) => finished(turnFor(turnOf(t))),
    expect: { step: 'prove-red', effects: ['commit consort(navigator): red 001-phones/T1', 'prove red T1'] },
  },
  {
    name: 'red: the navigator may not touch application code',
    at: atTurn('navigator', 'red'),
    event: (t) =>
      finished(
        turnFor(turnOf(t), {
          changes: [
            { path: testFileOf('T1'), status: 'added' },
            { path: 'src/phones.js', status: 'added' },
          ],
        }),
      ),
    expect: {
      step: 'red',
      attempt: 1,
      effects: [
        'revert src/phones.js,test/t1.test.js',
        'append-turn refused',
        'log turn.usage',
        'run-turn navigator/red T1 #1',
      ],
    },
  },
  {
    name: 'red: a turn that changes no test owes one',
    at: atTurn('navigator', 'red'),
    event: (t) => finished(turnFor(turnOf(t), { changes: [] })),
    expect: {
      step: 'red',
      attempt: 1,
      effects: ['append-turn incomplete', 'log turn.usage', 'run-turn navigator/red T1 #1'],
    },
  },
  {
    name: 'red: proven red freezes the tests and hands over to the driver',
    at: atProof('red'),
    event: (t) => proved(proofOf(t), ran(T1_RED)),
    expect: {
      step: 'green',
      effects: [
        'append-turn accepted',
        'log turn.usage',
        'status T1=red',
        'log cycle.red',
        'write-cycle 1',
        'log handoff',
        'run-turn driver/green T1',
      ],
    },
  },
  {
    name: 'red: a born-green test goes back to the navigator',
    at: atProof('red'),
    event: (t) => proved(proofOf(t), ran([...OLD_TESTS, itemTest('T1', 'passed')])),
    expect: {
      step: 'red',
      attempt: 1,
      effects: [
        'revert test/t1.test.js',
        'append-turn rejected',
        'log turn.usage',
        'log cycle.rejected',
        'write-cycle 1',
        'run-turn navigator/red T1 #1',
      ],
    },
  },
  {
    name: 'red: born green is accepted when the policy allows it',
    policy: { rejectBornGreen: false },
    at: atProof('red'),
    event: (t) => proved(proofOf(t), ran([...OLD_TESTS, itemTest('T1', 'passed')])),
    expect: {
      step: 'green',
      effects: [
        'append-turn accepted',
        'log turn.usage',
        'status T1=red',
        'log cycle.red',
        'write-cycle 1',
        'log handoff',
        'run-turn driver/green T1',
      ],
    },
  },
  {
    name: 'red: a test file that does not load is red for the wrong reason',
    at: atProof('red'),
    event: (t) =>
      proved(
        proofOf(t),
        ran([
          ...OLD_TESTS,
          {
            id: `Test suite failed to run::${testFileOf('T1')}`,
            file: testFileOf('T1'),
            state: 'errored',
            loadError: true,
          },
        ]),
      ),
    expect: {
      step: 'red',
      attempt: 1,
      effects: [
        'revert test/t1.test.js',
        'append-turn rejected',
        'log turn.usage',
        'log cycle.rejected',
        'write-cycle 1',
        'run-turn navigator/red T1 #1',
      ],
    },
  },
  {
    name: 'red: breaking a test that passed before is a regression',
    at: atProof('red'),
    event: (t) =>
      proved(proofOf(t), ran([{ ...OLD_TESTS[0]!, state: 'failed' }, OLD_TESTS[1]!, itemTest('T1', 'failed')])),
    expect: {
      step: 'red',
      attempt: 1,
      effects: [
        'revert test/t1.test.js',
        'append-turn rejected',
        'log turn.usage',
        'log cycle.rejected',
        'write-cycle 1',
        'run-turn navigator/red T1 #1',
      ],
    },
  },
  {
    name: 'red: migrations that do not apply are for a human, not the navigator',
    at: atProof('red'),
    event: (t) =>
      proved(proofOf(t), { kind: 'broken', reason: 'migrations', message: 'x.sql failed', output: '', hashes: {} }),
    expect: {
      step: 'escalated',
      effects: [
        'append-turn rejected',
        'log turn.usage',
        'log cycle.rejected',
        'write-cycle 1',
        'log escalation',
        'stop escalated',
      ],
    },
  },
  // ---- GREEN ----
  {
    name: 'green: the driver may never change a test',
    at: atTurn('driver', 'green'),
    event: (t) =>
      finished(
        turnFor(turnOf(t), {
          changes: [
            { path: 'src/phones.js', status: 'added' },
            { path: testFileOf('T1'), status: 'modified' },
          ],
        }),
      ),
    expect: {
      step: 'green',
      attempt: 1,
      effects: [
        'revert src/phones.js,test/t1.test.js',
        'append-turn refused',
        'log turn.usage',
        'run-turn driver/green T1 #1',
      ],
    },
  },
  {
    name: 'green: a frozen test whose content changed is refused even when git shows no path',
    at: atTurn('driver', 'green'),
    event: (t) => finished(turnFor(turnOf(t), { hashes: { [testFileOf('T1')]: 'tampered' } })),
    expect: {
      step: 'green',
      attempt: 1,
      effects: ['revert src/phones.js', 'append-turn refused', 'log turn.usage', 'run-turn driver/green T1 #1'],
    },
  },
  {
    name: 'green: code is committed and proven on a fresh branch',
    at: atTurn('driver', 'green'),
    event: (t) => finished(turnFor(turnOf(t))),
    expect: { step: 'prove-green', effects: ['commit consort(driver): green 001-phones/T1', 'prove green T1'] },
  },
  {
    name: 'green: a red suite is a repair round with the failure in context',
    at: atProof('green'),
    event: (t) => proved(proofOf(t), ran(T1_RED)),
    expect: {
      step: 'green',
      repair: 1,
      effects: [
        'revert src/phones.js',
        'append-turn rejected',
        'log turn.usage',
        'log cycle.rejected',
        'write-cycle 1',
        'log cycle.repair',
        'run-turn driver/green T1',
      ],
    },
  },
  {
    name: 'green: out of repair rounds, a human',
    policy: { repairRounds: 0 },
    at: atProof('green'),
    event: (t) => proved(proofOf(t), ran(T1_RED)),
    expect: {
      step: 'escalated',
      effects: [
        'revert src/phones.js',
        'append-turn rejected',
        'log turn.usage',
        'log cycle.rejected',
        'write-cycle 1',
        'log escalation',
        'stop escalated',
      ],
    },
  },
  {
    name: 'green: a frozen test changed by the time of the proof escalates',
    at: atProof('green'),
    event: (t) =>
      proved(proofOf(t), ran([...OLD_TESTS, itemTest('T1', 'passed')], 0, { [testFileOf('T1')]: 'tampered' })),
    expect: {
      step: 'escalated',
      effects: [
        'revert src/phones.js',
        'append-turn rejected',
        'log turn.usage',
        'log cycle.rejected',
        'write-cycle 1',
        'log escalation',
        'stop escalated',
      ],
    },
  },
  {
    name: 'green: proven green goes to REFACTOR',
    at: atProof('green'),
    event: (t) => proved(proofOf(t), ran([...OLD_TESTS, itemTest('T1', 'passed')])),
    expect: {
      step: 'refactor',
      effects: [
        'append-turn accepted',
        'log turn.usage',
        'log cycle.green',
        'status T1=green',
        'write-cycle 1',
        'log handoff',
        'run-turn driver/refactor T1',
      ],
    },
  },
  // ---- REFACTOR and REVIEW ----
  {
    name: 'refactor: no change keeps the GREEN proof and goes to review',
    at: atTurn('driver', 'refactor'),
    event: (t) => finished(turnFor(turnOf(t), { changes: [] })),
    expect: {
      step: 'review',
      effects: [
        'append-turn accepted',
        'log turn.usage',
        'write-cycle 1',
        'log handoff',
        'run-turn navigator/review T1',
      ],
    },
  },
  {
    name: 'refactor: a change is proven again',
    at: atTurn('driver', 'refactor'),
    event: (t) => finished(turnFor(turnOf(t), { changes: [{ path: 'src/phones.js', status: 'modified' }] })),
    expect: {
      step: 'prove-refactor',
      effects: ['commit consort(driver): refactor 001-phones/T1', 'prove refactor T1'],
    },
  },
  {
    name: 'review: the navigator writes only its review',
    at: atTurn('navigator', 'review'),
    event: (t) =>
      finished(
        turnFor(turnOf(t), {
          changes: [
            { path: `${FDIR}/reviews/T1.json`, status: 'added' },
            { path: testFileOf('T1'), status: 'modified' },
          ],
        }),
      ),
    expect: {
      step: 'review',
      attempt: 1,
      effects: [
        `revert ${FDIR}/reviews/T1.json,test/t1.test.js`,
        'append-turn refused',
        'log turn.usage',
        'run-turn navigator/review T1 #1',
      ],
    },
  },
  {
    name: 'review: changes requested send the driver back to REFACTOR',
    at: atTurn('navigator', 'review'),
    event: (t) => finished(turnFor(turnOf(t), { facts: { review: { verdict: 'changes', notes: 'name it better' } } })),
    expect: {
      step: 'refactor',
      repair: 1,
      effects: [
        'commit consort(navigator): review 001-phones/T1',
        'append-turn accepted',
        'log turn.usage',
        'log cycle.review',
        'write-cycle 1',
        'log cycle.repair',
        'log handoff',
        'run-turn driver/refactor T1',
      ],
    },
  },
  {
    name: 'review: approval completes the item and starts the next',
    at: atTurn('navigator', 'review'),
    event: (t) => finished(turnFor(turnOf(t))),
    expect: {
      step: 'red',
      item: 'T2',
      effects: [
        'commit consort(navigator): review 001-phones/T1',
        'append-turn accepted',
        'log turn.usage',
        'log cycle.review',
        'status T1=refactored',
        'log cycle.refactored',
        'write-cycle 1',
        'log handoff',
        'run-turn navigator/red T2',
      ],
    },
  },
  // ---- merge ----
  {
    name: 'merge: an approved merge gate finishes the feature',
    at: atGate('merge'),
    event: () => gateChecked('merge'),
    expect: { phase: 'done', step: 'done', effects: ['log phase.end', 'log phase.start', 'stop done'] },
  },
  {
    name: 'merge: with the deploy gate enabled, deploy comes next',
    policy: { optionalGates: ['deploy'] },
    at: atGate('merge'),
    event: () => gateChecked('merge'),
    expect: { phase: 'merge', step: 'gate', gate: 'deploy', effects: ['check-gate deploy'] },
  },
  {
    name: 'merge: a spec changed after approval reopens it (fails closed)',
    at: atGate('merge'),
    event: () => gateChecked('merge', {}, undefined, ['spec']),
    expect: {
      phase: 'design',
      step: 'gate',
      gate: 'spec',
      effects: ['log gate.reopened', 'log phase.end', 'log phase.start', 'check-gate spec'],
    },
  },
];

describe('transition routing goldens', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const p = policy(c.policy);
    const before = playUntil(c.at, p);
    expect(c.at(before)).toBe(true);
    const after = transition(before.state, c.event(before));
    expect(summary(after)).toMatchObject(c.expect);
  });
});

describe('branches forked ahead of their proofs', () => {
  it("a GREEN turn names both branches its proof runs on: its own and RED's tree's beside it", () => {
    const green = playUntil(atTurn('driver', 'green'));
    const plan = turnOf(green);
    const proof = proofOf(transition(green.state, finished(turnFor(plan))));
    expect(proof).toMatchObject({ purpose: 'green', recheck: { branch: 'f001-t1-green-2-r' } });
    expect(plan.forkAhead).toEqual({ branch: proof.branch, use: 'proof', recheck: proof.recheck!.branch });
  });

  it('a navigator red turn forks its proof ahead, with nothing beside it', () => {
    const t = playUntil(atTurn('navigator', 'red'));
    const plan = turnOf(t);
    const proof = proofOf(transition(t.state, finished(turnFor(plan))));
    expect(proof.recheck ?? null).toBeNull();
    expect(plan.forkAhead).toEqual({ branch: proof.branch, use: 'proof' });
  });

  it("a driver refactor turn forks both its proof's branch and RED's tree's ahead", () => {
    // The REFACTOR turn starts from GREEN's tree, not RED's: the branch forked ahead for RED's tree is
    // kept at the proof only where it holds RED's tree's migrations (the lane's settleMigrations).
    const t = playUntil(atTurn('driver', 'refactor'));
    const plan = turnOf(t);
    const changes = [{ path: 'src/phones.js', status: 'modified' as const }];
    const proof = proofOf(transition(t.state, finished(turnFor(plan, { changes }))));
    expect(proof.recheck).toEqual({ commit: BASE, branch: `${proof.branch}-r` });
    expect(plan.forkAhead).toEqual({ branch: proof.branch, use: 'proof', recheck: proof.recheck!.branch });
  });
});

describe('experiments: competing GREEN attempts', () => {
  const p = policy({ experiments: 3 });
  const atExperiments = (t: Transition) => action(t)?.type === 'run-experiments';
  const experimentsOf = (t: Transition) => {
    const a = action(t);
    if (a?.type !== 'run-experiments') throw new Error('expected experiments');
    return a;
  };

  it('asks for N driver turns, each with its own sandbox and proof branch', () => {
    const t = playUntil(atExperiments, p);
    expect(summary(t)).toMatchObject({
      step: 'green',
      item: 'T1',
      effects: [
        'append-turn accepted',
        'log turn.usage',
        'status T1=red',
        'log cycle.red',
        'write-cycle 1',
        'log handoff',
        'run-experiments 3x driver/green T1',
      ],
    });
    expect(experimentsOf(t).turns.map((x) => [x.id, x.branch, x.experiment])).toEqual([
      ['turn-0006', 'f001-t1-x1', { index: 1, of: 3, proofBranch: 'f001-t1-x1-green-2' }],
      ['turn-0007', 'f001-t1-x2', { index: 2, of: 3, proofBranch: 'f001-t1-x2-green-2' }],
      ['turn-0008', 'f001-t1-x3', { index: 3, of: 3, proofBranch: 'f001-t1-x3-green-2' }],
    ]);
  });

  it('adopts the green one with the fewest changed lines and goes on to REFACTOR', () => {
    const t = playUntil(atExperiments, p);
    const after = transition(
      t.state,
      experimented(experimentsOf(t), t.state, [
        { changedLines: 40 },
        { changedLines: 12 },
        { changedLines: 12, suiteMs: 900 },
      ]),
    );
    expect(summary(after)).toMatchObject({
      step: 'refactor',
      effects: [
        'append-turn rejected',
        'log turn.usage',
        'append-turn rejected',
        'log turn.usage',
        'append-turn accepted',
        'log turn.usage',
        'log cycle.experiments',
        'adopt-experiment 3',
        'status T1=green',
        'log cycle.green',
        'write-cycle 1',
        'log handoff',
        'run-turn driver/refactor T1',
      ],
    });
    const adopt = after.effects.find((e) => e.type === 'adopt-experiment');
    expect(adopt).toMatchObject({
      turn: 'turn-0008',
      message: 'consort(driver): green 001-phones/T1 (experiment 3 of 3)',
    });
    expect(after.state.cycle?.green).toMatchObject({ verdict: 'green', branch: 'f001-t1-x3-green-2' });
  });

  it('never picks an attempt that strayed out of scope, however small', () => {
    const t = playUntil(atExperiments, p);
    const plans = experimentsOf(t).turns;
    const stray = turnFor(plans[0]!, { changes: [{ path: testFileOf('T1'), status: 'modified' }] });
    const after = transition(
      t.state,
      experimented(experimentsOf(t), t.state, [
        { turn: stray, changedLines: 1 },
        { changedLines: 30 },
        { changedLines: 20 },
      ]),
    );
    expect(after.effects.find((e) => e.type === 'adopt-experiment')).toMatchObject({ index: 3 });
    expect(
      after.effects.filter((e) => e.type === 'append-turn').map((e) => e.type === 'append-turn' && e.record.verdict),
    ).toEqual(['refused', 'rejected', 'accepted']);
  });

  it('with no green attempt, repairs one turn at a time', () => {
    const t = playUntil(atExperiments, p);
    const red = ran([...OLD_TESTS, itemTest('T1', 'failed')]);
    const after = transition(
      t.state,
      experimented(experimentsOf(t), t.state, [
        { proof: red },
        { proof: null, turn: turnFor(experimentsOf(t).turns[1]!, { exit: { kind: 'failed', message: 'x' } }) },
        { proof: red },
      ]),
    );
    expect(summary(after)).toMatchObject({
      step: 'green',
      repair: 1,
      effects: expect.arrayContaining(['log cycle.rejected', 'log cycle.repair', 'run-turn driver/green T1']),
    });
    expect(after.state.failure?.tests).toEqual([expect.objectContaining({ id: 'phones::T1 works', state: 'failed' })]);
  });

  it('picks by lines, then suite time, then number', () => {
    expect(
      pickExperiment([
        { index: 1, changedLines: 5, suiteMs: 9 },
        { index: 2, changedLines: 3, suiteMs: 9 },
      ])?.index,
    ).toBe(2);
    expect(
      pickExperiment([
        { index: 1, changedLines: 3, suiteMs: 9 },
        { index: 2, changedLines: 3, suiteMs: 4 },
      ])?.index,
    ).toBe(2);
    expect(
      pickExperiment([
        { index: 2, changedLines: 3, suiteMs: 4 },
        { index: 1, changedLines: 3, suiteMs: 4 },
      ])?.index,
    ).toBe(1);
    expect(pickExperiment([])).toBeNull();
  });
});

describe('run.started', () => {
  it('starts a new feature with the first design role', () => {
    const t = transition(initialState(FEATURE), started());
    expect(summary(t)).toMatchObject({
      phase: 'design',
      step: 'design',
      effects: ['log phase.start', 'log handoff', 'run-turn spec-author/spec'],
    });
  });

  it('re-checks a gate that was waiting for approval', () => {
    const waiting = transition(playUntil(atGate('spec')).state, gateChecked('spec', { approval: null }));
    expect(waiting.state.step).toBe('awaiting-approval');
    expect(summary(transition(waiting.state, started()))).toMatchObject({ step: 'gate', effects: ['check-gate spec'] });
  });

  it('keeps an escalated feature stopped unless asked to retry, then resumes where it stopped', () => {
    const p = policy({ retries: 0 });
    const esc = transition(
      playUntil(atTurn('dba'), p).state,
      finished(
        turnFor(turnOf(playUntil(atTurn('dba'), p)), { changes: [], exit: { kind: 'timeout', message: 'slow' } }),
      ),
    );
    expect(esc.state.step).toBe('escalated');
    expect(summary(transition(esc.state, started(p)))).toMatchObject({
      step: 'escalated',
      effects: ['stop escalated'],
    });
    expect(summary(transition(esc.state, started(p, { retry: true })))).toMatchObject({
      step: 'design',
      attempt: 0,
      effects: ['log escalation', 'run-turn dba/db-design'],
    });
  });

  it('reopens a passed gate whose artifacts changed since approval', () => {
    const building = playUntil(atTurn('driver', 'green'));
    const t = transition(building.state, started(policy(), { reopened: ['spec'] }));
    expect(summary(t)).toMatchObject({
      phase: 'design',
      step: 'gate',
      gate: 'spec',
      effects: ['log gate.reopened', 'log phase.end', 'log phase.start', 'check-gate spec'],
    });
    // Approved again, the build goes on from the first item not done, and the baseline is not re-run.
    const resumed = transition(t.state, gateChecked('spec'));
    expect(summary(resumed)).toMatchObject({ phase: 'build', step: 'red', item: 'T1' });
  });

  it('reopening a gate before a proof ran records the turn it would have judged', () => {
    const proving = playUntil(atProof('green'));
    const t = transition(proving.state, started(policy(), { reopened: ['spec'] }));
    expect(summary(t)).toMatchObject({
      phase: 'design',
      step: 'gate',
      gate: 'spec',
      effects: [
        'log gate.reopened',
        'append-turn accepted',
        'log turn.usage',
        'log phase.end',
        'log phase.start',
        'check-gate spec',
      ],
    });
    expect(t.effects.find((e) => e.type === 'append-turn')).toMatchObject({
      record: { step: 'green', suite: 'not proven: the spec gate reopened first' },
    });
    expect(t.state.pendingTurn).toBeNull();
  });

  it('ignores a reopened gate the feature has not passed yet', () => {
    const t = transition(playUntil(atTurn('dba')).state, started(policy(), { reopened: ['spec', 'merge'] }));
    expect(summary(t)).toMatchObject({ step: 'design', effects: ['run-turn dba/db-design'] });
  });
});

describe('a refused turn', () => {
  const strayGreen = (t: Transition) =>
    finished(
      turnFor(turnOf(t), {
        changes: [
          { path: 'src/phones.js', status: 'modified' },
          { path: testFileOf('T1'), status: 'modified' },
        ],
      }),
    );

  it('is recorded as what was refused and why; the retry prompt is kept for the agent', () => {
    const t = playUntil(atTurn('driver', 'green'));
    const next = transition(t.state, strayGreen(t));
    const writes = policy().writes.driver.join(', ');
    const record = next.effects.find((e) => e.type === 'append-turn');
    expect(record).toMatchObject({
      record: {
        role: 'driver',
        verdict: 'refused',
        refused: [testFileOf('T1')],
        reason: `the driver changed ${testFileOf('T1')} (tests cannot change in GREEN) at green T1, where it may change only ${writes} (never a test): the turn was refused and its changes reverted`,
      },
    });
    expect(next.state.note).toBe(
      `your previous turn was refused and reverted: it changed ${testFileOf('T1')} (tests cannot change in GREEN). The driver may change only: ${writes} (never a test)`,
    );
  });

  it('out of retries, escalates with the record, not the prompt', () => {
    const p = policy({ retries: 0 });
    const t = playUntil(atTurn('driver', 'green'), p);
    const next = transition(t.state, strayGreen(t));
    expect(next.state.step).toBe('escalated');
    expect(next.state.escalation?.reason).toMatch(
      /^the driver changed .* the turn was refused and its changes reverted \(after 1 attempt\)$/,
    );
  });
});

describe('guards', () => {
  it('refuses events that do not fit the step', () => {
    const t = playUntil(atTurn('spec-author'));
    const wrongProof: ConductorEvent = {
      type: 'proof.finished',
      at: 'x',
      purpose: 'green',
      item: 'T1',
      branch: 'b',
      outcome: ran([]),
      timing: { totalMs: 0, agentMs: 0, suiteMs: 0 },
    };
    expect(() => transition(t.state, wrongProof)).toThrow(/did not expect proof.finished at step design/);
    const staleTurn = finished({ ...turnFor(turnOf(t)), id: 'turn-0099' });
    expect(() => transition(t.state, staleTurn)).toThrow(expect.objectContaining({ code: 'internal' }));
    expect(() => transition(t.state, gateChecked('spec'))).toThrow(/did not expect gate.checked/);
  });

  it('stops a stall: the same action planned twice from the same state', () => {
    const t = playUntil(atGate('spec'));
    const check: Effect = { type: 'check-gate', gate: 'spec' };
    // Planned once from this state: recorded, and the action goes out.
    const first = { state: structuredClone(t.state), effects: [check], at: 'x' };
    first.state.lastAction = null;
    stallGuard(first);
    expect(first.state.lastAction).toMatchObject({ key: 'check-gate:spec' });
    expect(first.effects).toEqual([check]);
    // Planned again with nothing changed: the action is withheld and the run stops.
    const second = { state: structuredClone(first.state), effects: [check], at: 'y' };
    stallGuard(second);
    expect(second.state.step).toBe('stalled');
    expect(second.effects.map((e) => e.type)).toEqual(['log', 'stop']);
    expect(second.state.escalation?.reason).toMatch(/stall: check-gate:spec was asked for twice/);
    // The same action after a real change of state is fine.
    const third = { state: { ...structuredClone(first.state), attempt: 1 }, effects: [check], at: 'z' };
    stallGuard(third);
    expect(third.state.step).toBe('gate');
  });

  it('needs a run.started before anything else', () => {
    expect(() => transition(initialState(FEATURE), gateChecked('spec'))).toThrow(
      expect.objectContaining({ code: 'internal' }),
    );
  });

  it('counts conductor overhead per cycle: everything but agent and suite time', () => {
    const t = playUntil(atTurn('navigator', 'review'));
    const timing = t.state.cycle!.timing;
    // Every event of the cycle so far: 1000 ms total, 600 agent, 300 suite.
    expect(timing.overheadMs).toBe(timing.wallMs - timing.agentMs - timing.suiteMs);
    expect(timing.overheadMs / timing.wallMs).toBeCloseTo(0.1);
  });

  it('plays a whole feature on the happy path in order', () => {
    const steps: string[] = [];
    playUntil(
      (t) => {
        steps.push(`${t.state.step}${t.state.gate ? `:${t.state.gate}` : ''}`);
        return false;
      },
      policy(),
      happy,
    );
    expect(steps.filter((s, i) => s !== steps[i - 1])).toEqual([
      'design',
      'gate:spec',
      'baseline',
      'red',
      'prove-red',
      'green',
      'prove-green',
      'refactor',
      'review',
      'red',
      'prove-red',
      'green',
      'prove-green',
      'refactor',
      'review',
      'gate:merge',
      'done',
    ]);
  });
});

describe('the step table', () => {
  it('act only reads: asked twice, a step asks for the same thing and hands out no id', () => {
    const seen = new Set<string>();
    for (const p of [policy(), policy({ experiments: 2 })]) {
      playUntil((t) => {
        const s = structuredClone(t.state);
        const act = (STEP_TABLE[s.step] as unknown as { act(x: ConductorState): Effect[] }).act;
        expect(act(s)).toEqual(act(s));
        expect(s).toEqual(t.state);
        seen.add(s.step);
        return false;
      }, p);
    }
    expect([...seen]).toEqual(
      expect.arrayContaining([
        'design',
        'gate',
        'baseline',
        'red',
        'prove-red',
        'green',
        'prove-green',
        'refactor',
        'review',
        'done',
      ]),
    );
  });

  it('stops a turn asked for again, even when the state around it changed', () => {
    const t = playUntil(atTurn('driver', 'green'));
    const again = { state: { ...structuredClone(t.state), note: 'something changed' }, effects: [action(t)!], at: 'y' };
    stallGuard(again);
    expect(again.state.step).toBe('stalled');
    expect(again.effects.map((e) => e.type)).toEqual(['log', 'stop']);
    expect(again.state.escalation?.reason).toMatch(/stall: turn-0006 was asked for again/);
  });

  it('stops a proof asked for again, even when the state around it changed', () => {
    const t = playUntil(atProof('green'));
    const again = { state: { ...structuredClone(t.state), attempt: 1 }, effects: [action(t)!], at: 'y' };
    stallGuard(again);
    expect(again.state.step).toBe('stalled');
    expect(again.state.escalation?.reason).toMatch(/stall: the proof on f001-t1-green-2 was asked for again/);
    // Resumed with --retry, the proof runs again on a new branch.
    const resumed = transition(again.state, started(policy(), { retry: true }));
    expect(proofOf(resumed).branch).toBe('f001-t1-green-3');
  });

  it('makes illegal states unrepresentable', () => {
    const s = initialState(FEATURE);
    expect(ConductorState.safeParse(s).success).toBe(true);
    expect(ConductorState.safeParse({ ...s, step: 'red', phase: 'build' }).success).toBe(false);
    expect(ConductorState.safeParse({ ...s, step: 'gate' }).success).toBe(false);
    expect(ConductorState.safeParse({ ...s, step: 'gate', gate: 'spec' }).success).toBe(true);
    const building = playUntil(atTurn('driver', 'green')).state;
    expect(ConductorState.safeParse(building).success).toBe(true);
    expect(ConductorState.safeParse({ ...building, cycle: null }).success).toBe(false);
    expect(ConductorState.safeParse({ ...building, current: -1 }).success).toBe(false);
    // A stop must be resumable: escalated at `red` keeps the cycle that `red` needs.
    const escalated = { ...building, step: 'escalated', escalation: { reason: 'x', step: 'red', at: 'y' } };
    expect(ConductorState.safeParse(escalated).success).toBe(true);
    expect(ConductorState.safeParse({ ...escalated, cycle: null }).success).toBe(false);
    expect(ConductorState.safeParse({ ...escalated, escalation: { reason: 'x', step: 'done', at: 'y' } }).success).toBe(
      false,
    );
  });

  it('reads a state file that kept the last cycle at a reopened gate', () => {
    const building = playUntil(atTurn('driver', 'green')).state;
    const legacy = { ...building, phase: 'design', step: 'gate', gate: 'spec' };
    expect(ConductorState.parse(legacy)).toMatchObject({ step: 'gate', gate: 'spec', cycle: null, current: -1 });
  });

  it('refuses a move the table does not list', () => {
    const t = playUntil(atTurn('navigator', 'red'));
    const next = STEP_TABLE.red.next as Record<string, string>;
    const saved = next['prove-red']!;
    delete next['prove-red'];
    try {
      expect(() => transition(t.state, finished(turnFor(turnOf(t))))).toThrow(
        /moved from red to prove-red on turn.finished, a move its step table does not list/,
      );
    } finally {
      next['prove-red'] = saved;
    }
    expect(summary(transition(t.state, finished(turnFor(turnOf(t)))))).toMatchObject({ step: 'prove-red' });
  });

  it('refuses a single GREEN turn when competing attempts were asked for', () => {
    const t = playUntil((x) => action(x)?.type === 'run-experiments', policy({ experiments: 2 }));
    const a = action(t);
    if (a?.type !== 'run-experiments') throw new Error('expected experiments');
    expect(() => transition(t.state, finished(turnFor(a.turns[1]!)))).toThrow(
      /did not expect turn.finished at step green/,
    );
  });
});
