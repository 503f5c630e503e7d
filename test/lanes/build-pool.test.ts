/**
 * The TDD lane's forks of its baseline come from a warm pool of it (build.branchPool), filled in the
 * background, and the run leaves neither pool copies nor branches behind but the baseline itself.
 * With `branchPool: 0` every fork is a copy, as before pools.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config/load.js';
import type { ConsortConfig } from '../../src/config/schema.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { createBranches } from '../../src/lanes/tdd/database.js';
import type { BranchRecord } from '../../src/ports/branch-provider.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { tddAdapters, workspaceAt } from '../helpers/tdd.js';

const exec = promisify(execFile);
let t: TestProvider;
let repo: ScenarioRepo;
let config: ConsortConfig;
let baseCommit: string;
/** Every branch `create` made, as it reported it. */
const created: BranchRecord[] = [];
beforeAll(async () => {
  t = await localTestProvider();
  repo = await scenarioRepo(null);
  config = (await loadConfig(repo.dir)).config;
  baseCommit = (await exec('git', ['rev-parse', 'HEAD'], { cwd: repo.dir })).stdout.trim();
  const create = t.provider.create.bind(t.provider);
  t.provider.create = async (options) => {
    const made = await create(options);
    created.push(made);
    return made;
  };
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await t?.cleanup();
});
beforeEach(() => {
  created.length = 0;
});

/** Pool copies on the server, whatever the catalog says. */
async function poolDatabases(): Promise<string[]> {
  const rows = await query<{ datname: string }>(
    t.adminUrl,
    'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
    [`${t.namespace}_consort_pool_`],
  );
  return rows.map((r) => r.datname);
}

const leftovers = async () =>
  (await t.provider.list()).map((b) => b.name).filter((n) => n !== 'main' && !n.startsWith('baseline-'));

it('hands its forks out of a pool of the baseline, and drops the pool at the end of the run', async () => {
  const branches = createBranches({
    provider: t.provider,
    config,
    ws: await workspaceAt(repo.dir),
    git: tddAdapters.git,
    env: process.env,
    processes: localProcessRunner,
    baseCommit,
  });
  try {
    const baseline = await branches.baseline();
    expect(config.build.branchPool).toBe(2);
    await t.provider.settled(); // the background fill: two copies of the baseline
    expect(await t.provider.poolStatus(baseline)).toEqual([{ template: baseline, size: 2, ready: 2 }]);
    expect(await poolDatabases()).toHaveLength(2);

    // A turn's sandbox, a proof's branch forked ahead, and one forked when the proof needs it.
    const sandbox = await branches.sandbox('f001-sbx');
    expect(sandbox.migrations.ok).toBe(true);
    branches.prefork('f001-p1', 'proof');
    const early = await branches.fresh('f001-p1');
    await t.provider.settled();
    const late = await branches.fresh('f001-p2');
    expect(created.filter((b) => b.parent === baseline).map((b) => [b.name, b.pooled])).toEqual([
      ['f001-sbx', true],
      ['f001-p1', true],
      ['f001-p2', true],
    ]);
    expect(branches.forks()).toEqual({ made: 3, pooled: 3 });
    // A handout is the baseline as seeded, with the workspace's migrations applied.
    for (const { url } of [sandbox, early, late])
      expect(await query(url, 'SELECT count(*)::int AS n FROM customers')).toEqual([{ n: 300 }]);
    branches.drop('f001-p1');
    branches.drop('f001-p2');
  } finally {
    await branches.settle();
  }
  expect(await leftovers()).toEqual([]);
  expect(await t.provider.poolStatus()).toEqual([]);
  expect(await poolDatabases()).toEqual([]);
}, 120_000);

it('copies every fork when the pool is off (build.branchPool: 0)', async () => {
  const off = { ...config, build: { ...config.build, branchPool: 0 } };
  const branches = createBranches({
    provider: t.provider,
    processes: localProcessRunner,
    config: off,
    ws: await workspaceAt(repo.dir),
    git: tddAdapters.git,
    env: process.env,
    baseCommit,
  });
  try {
    const baseline = await branches.baseline();
    await branches.sandbox('f002-sbx');
    await branches.fresh('f002-p1');
    expect(created.filter((b) => b.parent === baseline).map((b) => b.pooled)).toEqual([false, false]);
    expect(await t.provider.poolStatus()).toEqual([]);
    expect(await poolDatabases()).toEqual([]);
    branches.drop('f002-p1');
  } finally {
    await branches.settle();
  }
  expect(await leftovers()).toEqual([]);
}, 120_000);
