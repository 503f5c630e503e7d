/**
 * GREEN's proof proves RED's tree again beside it, so a RED test that passes on a later run whatever
 * the code does not prove a GREEN that implements nothing (test/security/time-bomb.test.ts). Until
 * 2026-12-05 REFACTOR's proof had nothing beside it: a navigator's test that checks the code on its
 * first three runs (RED's proof, the GREEN pair) and passes from the fourth on — a run count kept
 * outside the tree, or a `Date.now() > T` set for after GREEN — let the driver's REFACTOR take the
 * implementation out again, and the feature was built with none. RED's tree is now proven beside
 * REFACTOR too, and the item's tests must still fail there.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import type { ScenarioRepo } from '../../src/demo/scenarios.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';
import { shopRepoWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/late-bomb-agent.mjs', import.meta.url));

let t: TestProvider;
let repo: ScenarioRepo;
let markers: string;
beforeAll(async () => {
  t = await localTestProvider();
  markers = await mkdtemp(path.join(os.tmpdir(), 'consort-late-bomb-'));
  repo = await shopRepoWithAgent(`${AGENT} ${path.join(markers, 'runs')}`, '', 'quick');
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await rm(markers, { recursive: true, force: true });
  await t?.cleanup();
});

it('a RED test that passes from a later run on, whatever the code, does not prove a REFACTOR that removes the implementation', async () => {
  const { r, lines, feature } = await runNewFeature(repo.dir, t.provider, 'phones');
  if (r.stop !== 'escalated') console.log(lines.join('\n'), r.message);
  expect(r.stop).toBe('escalated');
  expect(r.message).toMatch(/RED's tree, proven again beside/);
  const events = await new FeatureStore(repo.dir, feature).events();
  expect(events.some((e) => e.type === 'cycle.green' && e.purpose === 'green')).toBe(true);
  expect(events.find((e) => e.type === 'cycle.rejected')).toMatchObject({ step: 'refactor', verdict: 'red-not-held' });
  expect(events.some((e) => e.type === 'cycle.green' && e.purpose === 'refactor')).toBe(false);
}, 180_000);
