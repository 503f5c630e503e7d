/**
 * A TDD run cancelled while a turn's sandbox is migrated (the feature's migrations, applied after
 * the baseline is built: database.ts, migrate) stops as `interrupted` at once, as one cancelled
 * while its baseline is built does (build-baseline-cancel.test.ts): the migration's statement is
 * cancelled and the run's end drops the sandbox. On the example shop with a feature migration that
 * sleeps ten minutes, on the run's shared embedded PostgreSQL 18.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { createFeature } from '../../src/lanes/tdd/feature.js';
import { laneCancelledWhileRunning, runningStatements } from '../helpers/cancel.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';
import { shopConfigWithAgent } from '../helpers/shop-agent.js';
import { workspaceAt } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/pr-agent.mjs', import.meta.url));
// Marked as this file's: other files sleep on the run's shared server too.
const SLEEP = `SELECT pg_sleep(600) /* build-sandbox-cancel ${randomBytes(6).toString('hex')} */`;

let t: TestProvider;
let repo: ScenarioRepo;
beforeAll(async () => {
  t = await localTestProvider();
  repo = await scenarioRepo(null, {
    baseFiles: [{ file: '.github/consort.yml', content: await shopConfigWithAgent(AGENT) }],
  });
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await t?.cleanup();
});

it("stops as interrupted at once when cancelled during a sandbox's migrations, leaving no branch but the baseline it built", async () => {
  const { config } = await loadConfig(repo.dir);
  const ws = await workspaceAt(repo.dir);
  const { feature } = await createFeature(ws, 'phones', 'Phone numbers.');
  // The feature's own migration, after its base commit: the baseline holds the base's, the sandbox gets this one.
  await writeFile(
    path.join(repo.dir, config.migrations.dir, '1730000400000_slow.sql'),
    `-- Up Migration\n${SLEEP};\n-- Down Migration\nSELECT 1;\n`,
  );
  await execFileAsync('git', ['add', '-A'], { cwd: repo.dir });
  await execFileAsync(
    'git',
    ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', 'commit', '-qm', 'slow migration'],
    { cwd: repo.dir },
  );
  const before = await t.provider.list();
  const { result, sinceCancel } = await laneCancelledWhileRunning(t, { workspace: ws, config, feature }, SLEEP);
  expect(sinceCancel).toBeDefined();
  expect(sinceCancel!).toBeLessThan(15_000);
  expect(result.stop).toBe('interrupted');
  // Nothing sleeps on: the statement was cancelled, not left to the server.
  expect(await runningStatements(t.adminUrl, SLEEP)).toBe(0);
  // The run's end dropped its sandbox: only the baseline it built is new.
  const made = (await t.provider.list()).filter((b) => !before.some((o) => o.name === b.name)).map((b) => b.name);
  expect(made.filter((n) => !n.startsWith('baseline'))).toEqual([]);
}, 180_000);
