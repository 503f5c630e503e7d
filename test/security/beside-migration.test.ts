/**
 * RED's tree is proven again beside GREEN, at the same moment, so that a test whose verdict the
 * code does not decide (a time bomb) is caught: it must fail there too. Each proof applies its
 * migrations in a process of its own (the migration child), and until 2026-12-05 that process saw
 * every proof's tree: the driver's JS migration, applied in GREEN's proof, waited for RED's tree
 * beside it and left a file there that the navigator's time-bomb test fails on, so RED "held" and
 * GREEN was proven with no implementation. A proof's migration child now sees its own proof's tree
 * only, and neither proof of the pair runs any of the agents' code (its migrations, then its suite)
 * before both trees are made and covered (src/lanes/tdd/proof.ts `beforeCode`). Under bubblewrap.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ScenarioRepo } from '../../src/demo/scenarios.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';
import { shopRepoWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/beside-migration-agent.mjs', import.meta.url));

let t: TestProvider;
let repo: ScenarioRepo;
let markers: string;
beforeAll(async () => {
  t = await localTestProvider();
  markers = await mkdtemp(path.join(os.tmpdir(), 'consort-beside-migration-'));
  repo = await shopRepoWithAgent(`${AGENT} ${path.join(markers, 'armed')}`, '', 'quick');
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await rm(markers, { recursive: true, force: true });
  await t?.cleanup();
});

it("GREEN's migrations cannot write in RED's tree proven beside it", async () => {
  const { r, lines } = await runNewFeature(repo.dir, t.provider, 'phones');
  const log = lines.join('\n');
  if (log.includes('GREEN proven for T1')) console.log(log);
  // Until 2026-12-05 the lane ran to `done`: GREEN proven with no implementation.
  expect(log).not.toContain('GREEN proven for T1');
  expect(log).toMatch(/GREEN rejected for T1 \(red-not-held\)/);
  expect(r.stop).not.toBe('done');
}, 180_000);
