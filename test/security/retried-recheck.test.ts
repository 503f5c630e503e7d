/**
 * RED's tree is proven again beside GREEN (src/lanes/tdd/execute.ts proveBeside), and a RED test
 * that passes there stops the lane for a human, GREEN's turn reverted (red-not-held). Until
 * 2026-12-05 the step it stopped at was GREEN's proof, whose recheck was named by the pending turn's
 * base only: `consort run --retry` — what a person runs after a stop they take for a flake — proved
 * HEAD again, now RED's own commit (the turn was reverted), with no recheck, and the navigator's
 * test that passes on every later run (a marker it left) proved that GREEN: the item went green with
 * nothing implemented. A GREEN proof is now always followed by RED's tree beside it, and a retry after
 * a reverted turn runs the turn again.
 */
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { runBuildLane } from '../../src/lanes/tdd/index.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature, tddAdapters, workspaceAt } from '../helpers/tdd.js';
import type { Effect } from '../../src/conductor/effects.js';
import { transition, type Transition } from '../../src/conductor/transition.js';
import {
  action,
  BASE,
  finished,
  itemTest,
  OLD_TESTS,
  playUntil,
  policy,
  proved,
  ran,
  started,
  turnFor,
} from '../conductor/fixtures.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/time-bomb-agent.mjs', import.meta.url));

const shop = useShopWithAgent(AGENT, 'quick', { markers: 'retried-recheck' });

it('a retry after RED did not hold beside GREEN does not prove GREEN without RED beside it', async () => {
  const { r, lines, feature } = await runNewFeature(shop.repo.dir, shop.t.provider, 'phones');
  if (r.stop !== 'escalated') console.log(lines.join('\n'), r.message);
  expect(r.stop).toBe('escalated');
  const { config } = await loadConfig(shop.repo.dir);
  const again: string[] = [];
  const retried = await runBuildLane({
    workspace: await workspaceAt(shop.repo.dir),
    ...tddAdapters,
    config,
    feature,
    provider: shop.t.provider,
    env: process.env,
    gateMode: 'proxy',
    retry: true,
    log: (l) => again.push(l),
  });
  if (retried.stop !== 'escalated') console.log(again.join('\n'), retried.message);
  expect(retried.stop).toBe('escalated');
  const events = await new FeatureStore(shop.repo.dir, feature).events();
  expect(events.some((e) => e.type === 'cycle.green')).toBe(false);
}, 240_000);

type Prove = Extract<Effect, { type: 'prove' }>;
const atGreenProof = (t: Transition) => action(t)?.type === 'prove' && (action(t) as Prove).purpose === 'green';
const proofOf = (t: Transition): Prove => action(t) as Prove;
const RED_BESIDE = ran([...OLD_TESTS, itemTest('T1', 'passed')]);

describe('the conductor, on a retry of a stopped GREEN proof', () => {
  it("a GREEN proof that could not be judged is proven again beside RED's tree", () => {
    const t = playUntil(atGreenProof);
    expect(proofOf(t).recheck).toEqual({ commit: BASE, branch: `${proofOf(t).branch}-r` });
    const broken = transition(
      t.state,
      proved(proofOf(t), { kind: 'broken', reason: 'no-report', message: 'no report', output: '', hashes: {} }),
    );
    expect(broken.state.step).toBe('escalated');
    const retried = transition(broken.state, started(policy(), { retry: true }));
    expect(proofOf(retried)).toMatchObject({ purpose: 'green', recheck: { commit: BASE } });
  });

  it('a GREEN turn reverted because RED did not hold beside it is run again, not its reverted tree proven', () => {
    const t = playUntil(atGreenProof);
    const unheld = transition(t.state, { ...proved(proofOf(t), RED_BESIDE), recheck: RED_BESIDE } as never);
    expect(unheld.state.step).toBe('escalated');
    const retried = transition(unheld.state, started(policy(), { retry: true }));
    const next = action(retried);
    expect(next?.type).toBe('run-turn');
    expect(next?.type === 'run-turn' && next.turn.step).toBe('green');
    // and its proof, once it is done, has RED's tree beside it
    const again = transition(retried.state, finished(turnFor((next as Extract<Effect, { type: 'run-turn' }>).turn)));
    expect(proofOf(again).recheck?.commit).toBe(BASE);
  });
});
