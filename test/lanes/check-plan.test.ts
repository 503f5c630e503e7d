/**
 * The check lane's plan, without a database: what planCheck decides (the engine the run will use,
 * the baseline's name with it), what it cannot read (a missing seed file blocks the run instead of
 * throwing), and that runCheck executes the plan it is given through the ports it is given — the
 * blocked baseline stage fails as it always did, timed by the clock passed in, told to the log.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultConfig, type ConsortConfig } from '../../src/config/schema.js';
import { migrationSetFromEntries } from '../../src/migrations/files.js';
import { baselineName } from '../../src/lanes/check/baseline.js';
import { checkPlanJson, planCheck, type CheckRequest } from '../../src/lanes/check/plan.js';
import { runCheck } from '../../src/lanes/check/run.js';
import type { BranchProvider } from '../../src/ports/branch-provider.js';
import type { Clock } from '../../src/ports/clock.js';
import { lineLog } from '../../src/runtime/log.js';
import { CheckReport } from '../../src/report/check-report.js';
import { testPorts } from '../helpers/check-ports.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-check-plan-'));
  await mkdir(path.join(dir, '.git')); // the project's root: packages are not looked for above it
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const BASE = [
  { file: 'migrations/1700000000000_users.sql', content: '-- Up Migration\nCREATE TABLE users (id int);\n' },
];
const HEAD = [
  ...BASE,
  { file: 'migrations/1700000000001_orders.sql', content: '-- Up Migration\nCREATE TABLE orders (id int);\n' },
];

function request(config: ConsortConfig, base: CheckRequest['base'] = { ref: 'main', sha: null, migrations: BASE }) {
  return {
    workspace: dir,
    config,
    configSource: null,
    base,
    head: { ref: 'feature', sha: 'abcdef0123456789', migrations: HEAD },
    pr: 5,
    env: { PATH: process.env.PATH ?? '' },
    toolVersion: 'test',
  } satisfies CheckRequest;
}

it("names the baseline with the project's node-pg-migrate, as the run names it, and prints that plan", async () => {
  const pkg = path.join(dir, 'node_modules', 'node-pg-migrate');
  await mkdir(pkg, { recursive: true });
  await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name: 'node-pg-migrate', version: '7.9.1' }));
  await writeFile(path.join(pkg, 'index.js'), 'module.exports = {};\n');
  const config = defaultConfig();
  const plan = await planCheck(request(config), testPorts);
  const named = (engine?: { source: 'project' | 'bundled'; version: string }) =>
    baselineName({
      config,
      workspace: dir,
      base: migrationSetFromEntries(BASE),
      rebuild: false,
      baseSeed: null,
      ...(engine ? { engine: { ...engine, runner: undefined as never, dir: '' } } : {}),
    });
  expect(plan.baseline).toBe(await named({ source: 'project', version: '7.9.1' }));
  expect(plan.baseline).not.toBe(await named());
  expect(JSON.parse(JSON.stringify(checkPlanJson(plan)))).toEqual({
    ok: true,
    newMigrations: ['1700000000001_orders'],
    problems: [],
    warnings: [],
    base: { ref: 'main', sha: null },
    head: { ref: 'feature', sha: 'abcdef0123456789' },
    pr: 5,
    engine: { version: '7.9.1', source: 'project' },
    seed: 'none',
    baseline: plan.baseline,
    rebuildBaseline: false,
    branch: 'pr-5',
    temporaryBranches: ['pr-5-rev', 'pr-5-suite'],
    blocked: null,
  });
});

it('a seed file that cannot be read blocks the plan, and the run fails its baseline stage with the same error', async () => {
  const config: ConsortConfig = {
    ...defaultConfig(),
    database: { ...defaultConfig().database, seed: { kind: 'file', path: 'seed.sql' } },
  };
  // The base side carries no seed text: the workspace's file is read, and it is not there.
  const plan = await planCheck(request(config), testPorts);
  expect(plan).toMatchObject({ ok: true, baseline: null, blocked: { stage: 'baseline', reason: 'seed' } });
  const json = checkPlanJson(plan);
  expect(json.blocked).toEqual({
    stage: 'baseline',
    reason: 'seed',
    message: expect.stringMatching(/^Cannot read the seed file seed\.sql: ENOENT/),
    hint: 'Fix database.seed in the Consort configuration.',
  });

  // Enough of a provider for a run that stops at its baseline stage; anything more would be a bug here.
  const provider = {
    name: 'stub',
    get: () => Promise.resolve(undefined),
    capabilities: () => Promise.resolve({ provider: 'local', mode: 'copy', modeReason: 'stub', serverVersion: '18.0' }),
  } as unknown as BranchProvider;
  let ticks = 0;
  const clock: Clock = {
    now: () => new Date('2026-01-02T03:04:05.000Z'),
    // The run's first reading, then 250 ms later for good: the report's duration is 250, each stage's 0.
    monotonicMs: () => (ticks++ === 0 ? 1_000 : 1_250),
  };
  const lines: string[] = [];
  const report = CheckReport.parse(
    await runCheck(plan, { ...testPorts, provider, clock, log: lineLog((l) => lines.push(l)) }),
  );
  expect(report).toMatchObject({
    conclusion: 'error',
    startedAt: '2026-01-02T03:04:05.000Z',
    durationMs: 250,
    branch: null,
    error: { message: json.blocked!.message, hint: json.blocked!.hint },
  });
  expect(report.stages.plan).toMatchObject({ status: 'passed', newMigrations: ['1700000000001_orders'] });
  expect(report.stages.baseline).toMatchObject({ status: 'error', summary: json.blocked!.message, durationMs: 0 });
  expect(report.stages.migrations).toMatchObject({
    status: 'skipped',
    summary: 'not run: the check stopped on an error',
  });
  expect(lines).toContain('▸ baseline…');
  expect(lines.some((l) => l.startsWith(`  ! baseline: ${json.blocked!.message}`))).toBe(true);
});

it('base without the seed file yet is no block: nothing is seeded, and the plan says so', async () => {
  const config: ConsortConfig = {
    ...defaultConfig(),
    database: { ...defaultConfig().database, seed: { kind: 'file', path: 'seed.sql' } },
  };
  const plan = await planCheck(request(config, { ref: 'main', sha: null, migrations: BASE, seed: null }), testPorts);
  expect(plan.blocked).toBeNull();
  expect(plan.baseSeed).toBeNull();
  expect(checkPlanJson(plan)).toMatchObject({
    seed: 'file absent on base',
    baseline: expect.stringMatching(/^baseline-/),
  });
});
