/**
 * A TDD run cancelled while its baseline is built (`consort run`'s Ctrl-C, the Action's runner
 * signal: BuildLaneInput.signal) stops as `interrupted` at once: the base migration that holds the
 * build has its statement cancelled, and the half-built baseline is rolled back. On the example
 * shop with a base migration that sleeps ten minutes, on the run's shared embedded PostgreSQL 18.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { createFeature } from '../../src/lanes/tdd/feature.js';
import { laneCancelledWhileRunning } from '../helpers/cancel.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';
import { shopConfigWithAgent } from '../helpers/shop-agent.js';
import { workspaceAt } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/pr-agent.mjs', import.meta.url));
// Marked as this file's: other files sleep on the run's shared server too (check-baseline-seed's
// seed is a pg_sleep(600)), and a watch that saw theirs would cancel this run before its own.
const SLEEP = `SELECT pg_sleep(600) /* build-baseline-cancel ${randomBytes(6).toString('hex')} */`;

let t: TestProvider;
let repo: ScenarioRepo;
beforeAll(async () => {
  t = await localTestProvider();
  repo = await scenarioRepo(null, {
    baseFiles: [
      { file: '.github/consort.yml', content: await shopConfigWithAgent(AGENT) },
      {
        file: 'migrations/1730000400000_slow.sql',
        content: `-- Up Migration\n${SLEEP};\n-- Down Migration\nSELECT 1;\n`,
      },
    ],
  });
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await t?.cleanup();
});

it('stops as interrupted at once, with no baseline left', async () => {
  const { config } = await loadConfig(repo.dir);
  const ws = await workspaceAt(repo.dir);
  const { feature } = await createFeature(ws, 'phones', 'Phone numbers.');
  // Aborted once the base migration is seen sleeping (the first turn's sandbox builds the baseline).
  const { result, sinceCancel } = await laneCancelledWhileRunning(t, { workspace: ws, config, feature }, SLEEP);
  expect(sinceCancel).toBeDefined();
  expect(sinceCancel!).toBeLessThan(10_000);
  expect(result.stop).toBe('interrupted');
  expect((await t.provider.list()).map((b) => b.name).filter((n) => n.startsWith('baseline'))).toEqual([]);
}, 180_000);
