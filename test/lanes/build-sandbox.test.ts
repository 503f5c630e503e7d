/**
 * A cycle's sandbox is reused across its turns, but never after a turn that wrote a migration: the
 * agent may have applied it to the sandbox (run_suite, a shell) and the conductor may have reverted
 * the file, so the database would hold a change no file describes.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config/load.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { createBranches } from '../../src/lanes/tdd/database.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { tddAdapters, workspaceAt } from '../helpers/tdd.js';

const exec = promisify(execFile);
let t: TestProvider;
let repo: ScenarioRepo;
beforeAll(async () => {
  t = await localTestProvider();
  repo = await scenarioRepo(null);
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await t?.cleanup();
});

const phoneColumns = async (url: string) =>
  Number(
    (
      await query<{ n: string }>(
        url,
        "SELECT count(*) AS n FROM information_schema.columns WHERE table_name = 'customers' AND column_name = 'phone'",
      )
    )[0]!.n,
  );

it('keeps a sandbox between turns, and forks it afresh once invalidated', async () => {
  const { config } = await loadConfig(repo.dir);
  const baseCommit = (await exec('git', ['rev-parse', 'HEAD'], { cwd: repo.dir })).stdout.trim();
  const branches = createBranches({
    provider: t.provider,
    config,
    ws: await workspaceAt(repo.dir),
    git: tddAdapters.git,
    migrations: tddAdapters.migrations,
    schemas: tddAdapters.schemas,
    env: process.env,
    processes: localProcessRunner,
    baseCommit,
  });
  try {
    const first = await branches.sandbox('f001-sbx');
    expect(first.migrations.ok).toBe(true);
    // What an agent's own run of its new migration leaves behind, with the file since reverted.
    await query(first.url, 'ALTER TABLE customers ADD COLUMN phone text');
    expect(await phoneColumns((await branches.sandbox('f001-sbx')).url)).toBe(1); // reused as recorded
    branches.invalidate('f001-sbx');
    expect(await phoneColumns((await branches.sandbox('f001-sbx')).url)).toBe(0);
    branches.invalidate('no-such-sandbox'); // harmless
  } finally {
    await branches.settle();
  }
}, 120_000);
