/**
 * RED's tree is proven again beside GREEN, at the same moment, so that a test whose verdict the
 * code does not decide (a time bomb) is caught: it must fail there too. The two suites run side by
 * side, each in a tree of its own next to the repository — and until 2026-12-05 each could see the
 * other's: code GREEN's suite ran (the driver's, imported by an older test) waited for the report
 * RED's tree wrote and rewrote it with the item's test failing, and the feature was built with no
 * implementation. Each proof's tree is now covered for every other isolated command while it is
 * proven (src/process/isolate.ts), and neither suite of the pair starts before both trees are made
 * and covered (src/lanes/tdd/execute.ts, proveBeside). Under bubblewrap.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ScenarioRepo } from '../../src/demo/scenarios.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';
import { shopRepoWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/report-forger-agent.mjs', import.meta.url));

let t: TestProvider;
let repo: ScenarioRepo;
let markers: string;
beforeAll(async () => {
  t = await localTestProvider();
  markers = await mkdtemp(path.join(os.tmpdir(), 'consort-forged-report-'));
  repo = await shopRepoWithAgent(`${AGENT} ${path.join(markers, 'armed')}`, '', 'quick');
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await rm(markers, { recursive: true, force: true });
  await t?.cleanup();
});

it("GREEN's suite cannot rewrite the report of RED's tree proven beside it", async () => {
  const { r, lines } = await runNewFeature(repo.dir, t.provider, 'phones');
  const log = lines.join('\n');
  if (r.stop === 'done') console.log(log);
  expect(r.stop).not.toBe('done');
  expect(log).not.toContain('GREEN proven for T1');
  expect(log).toMatch(/GREEN rejected for T1 \(red-not-held\)/);
}, 180_000);
