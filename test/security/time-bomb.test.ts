/**
 * A test whose verdict the implementation does not decide: the navigator's RED test fails on its
 * first run and passes on every later one (a marker it leaves where the next proof's suite finds
 * it; a `Date.now() > T` set for after RED works alike), and the driver's GREEN writes nothing the
 * test checks. Until 2026-12-05 GREEN was proven by GREEN's suite alone: green, with no
 * implementation. RED's tree is now proven again beside GREEN, at the same moment, and its
 * failing tests must fail there too: here the lane stops for a human instead, the turn reverted.
 */
import { fileURLToPath } from 'node:url';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/time-bomb-agent.mjs', import.meta.url));

const shop = useShopWithAgent(AGENT, 'quick', { markers: 'time-bomb' });

async function build(slug: string, experiments?: number) {
  const { r, lines, feature } = await runNewFeature(
    shop.repo.dir,
    shop.t.provider,
    slug,
    experiments ? { experiments } : {},
  );
  if (r.stop !== 'escalated') console.log(lines.join('\n'), r.message);
  return { r, store: new FeatureStore(shop.repo.dir, feature) };
}

const UNHELD =
  /the item's tests no longer fail without the implementation: on RED's tree, proven again beside GREEN, .*T1 stores a trimmed phone number .*\(passed\)/;

it('a RED test that passes on a later run, whatever the code, does not prove GREEN', async () => {
  const { r, store } = await build('phones');
  expect(r.stop).toBe('escalated');
  expect(r.message).toMatch(UNHELD);
  const turns = await store.turns();
  expect(turns.filter((x) => x.step === 'green').map((x) => x.verdict)).toEqual(['rejected']);
  const events = await store.events();
  expect(events.find((e) => e.type === 'cycle.rejected')).toMatchObject({ step: 'green', verdict: 'red-not-held' });
  expect(events.some((e) => e.type === 'cycle.green')).toBe(false);
}, 180_000);

it('nor does it prove competing GREEN attempts (--experiments)', async () => {
  const { r, store } = await build('mobiles', 2);
  expect(r.stop).toBe('escalated');
  expect(r.message).toMatch(UNHELD);
  const green = (await store.turns()).filter((x) => x.step === 'green');
  expect(green.map((x) => x.verdict)).toEqual(['rejected', 'rejected']);
  expect(green[0]!.reason).toMatch(UNHELD);
  expect((await store.events()).some((e) => e.type === 'cycle.green')).toBe(false);
}, 180_000);
