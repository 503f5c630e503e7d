/**
 * The PR lane under cancellation, overlap and faults, on the example shop's real history (four
 * migrations, a seed of a few hundred rows, the clean change adding a column) on the run's shared
 * embedded PostgreSQL 18: a cancelled run kills its suite's process group and removes its
 * temporary branches; a run removes what a killed one left; overlapping runs of one pull request
 * take turns (the newest wins) and runs of one commit do not collide; sessions the lane ends are
 * named; a catalog row without its database is rebuilt; the stage that failed is the one reported.
 */
import { lineLog } from '../../src/runtime/log.js';
import { testPorts } from '../helpers/check-ports.js';
import { localGitRepo } from '../../src/git/repo.js';
import { access, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { createPostgresProvider } from '../../src/branches/postgres-provider.js';
import { runCli } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config/load.js';
import type { ConsortConfig } from '../../src/config/schema.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { resolveSides } from '../../src/cli/commands/check.js';
import { CheckCancelled } from '../../src/lanes/check/cancel.js';
import { cleanupPull } from '../../src/lanes/check/cleanup.js';
import { check as checkLane, type CheckInput } from '../../src/lanes/check/run.js';
import { createWorkdir } from '../../src/lanes/check/workdir.js';
import type { BranchProvider } from '../../src/ports/branch-provider.js';
import { CheckReport } from '../../src/report/check-report.js';
import { processesRunning, uniqueSleep } from '../helpers/processes.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';

let t: TestProvider;
let repo: ScenarioRepo;
beforeAll(async () => {
  t = await localTestProvider();
  repo = await scenarioRepo('clean');
});
afterAll(async () => {
  await repo?.dispose();
  await t?.cleanup();
});

const withSuite =
  (command: string) =>
  (c: ConsortConfig): ConsortConfig => ({ ...c, suite: { ...c.suite, command, reports: [], timeout: '2m' } });
const quickSuite = withSuite('true');

async function check(tweak: (c: ConsortConfig) => ConsortConfig, extra: Partial<CheckInput> = {}) {
  const { config, source } = await loadConfig(repo.dir);
  const cfg = tweak(config);
  const { base, head } = await resolveSides(localGitRepo, repo.dir, cfg, { base: 'main' }, () => undefined);
  const lines: string[] = [];
  const report = CheckReport.parse(
    await checkLane({
      ...testPorts,
      workspace: repo.dir,
      config: cfg,
      configSource: source,
      base,
      head,
      pr: null,
      provider: t.provider,
      env: process.env,
      toolVersion: 'test',
      log: lineLog((l) => lines.push(l)),
      ...extra,
    }),
  );
  return { report, log: lines.join('\n') };
}

const names = async (): Promise<string[]> => (await t.provider.list()).map((b) => b.name).sort();
const leaked = async (): Promise<string[]> => (await names()).filter((n) => n.endsWith('-rev') || n.endsWith('-suite'));

describe('cancel', () => {
  it('kills the suite process group, removes temporary branches, concludes cancelled; the next run passes', async () => {
    const controller = new AbortController();
    // The suite starts a grandchild that would outlive a plain kill of the shell (found by its
    // argument: the suite runs in a PID namespace where one can be made, so its `$!` is not ours).
    const sleep = uniqueSleep(300);
    const suite = `sleep ${sleep} & echo started; wait`;
    const { report } = await check(withSuite(suite), {
      pr: 21,
      signal: controller.signal,
      onSuiteOutput: (chunk) => {
        if (chunk.includes('started')) controller.abort(new CheckCancelled('SIGTERM'));
      },
    });
    expect(report.conclusion).toBe('cancelled');
    expect(report.cancelled).toEqual({ reason: 'SIGTERM' });
    expect(report.stages.suite).toMatchObject({ status: 'skipped', summary: 'cancelled' });
    expect(report.stages.migrations.status).toBe('passed');
    expect(await processesRunning(sleep)).toBe(0);
    expect(await leaked()).toEqual([]);
    const again = await check(quickSuite, { pr: 21 });
    expect(again.report.conclusion).toBe('success');
    await cleanupPull(t.provider, 21);
  });

  it('removes the leftovers of a killed run (pr-N-rev, pr-N-suite) instead of failing with "already exists"', async () => {
    // What a run killed with -9 in the middle of its side-by-side stages leaves (their parents do not matter here).
    await t.provider.create({ name: 'pr-22-rev' });
    await t.provider.create({ name: 'pr-22-suite' });
    const { report, log } = await check(quickSuite, { pr: 22 });
    expect(report.error).toBeUndefined();
    expect(report.conclusion).toBe('success');
    expect(log).toContain('Removed pr-22-rev, pr-22-suite: left by an earlier run that did not finish.');
    expect(await leaked()).toEqual([]);
    await cleanupPull(t.provider, 22);
  });
});

describe('overlap', () => {
  it('two runs of one pull request: the newer wins, the older concludes cancelled, nothing leaks', async () => {
    let started!: () => void;
    const suiteStarted = new Promise<void>((resolve) => (started = resolve));
    const older = check(withSuite('echo started; sleep 60'), {
      pr: 23,
      onSuiteOutput: (c) => c.includes('started') && started(),
    });
    await suiteStarted;
    const newer = await check(quickSuite, { pr: 23 });
    const old = await older;
    expect(old.report.conclusion).toBe('cancelled');
    expect(old.report.cancelled?.reason).toBe('superseded by a newer run of pr-23');
    expect(newer.report.conclusion).toBe('success');
    expect(newer.report.stages.suite.status).toBe('passed');
    expect(await leaked()).toEqual([]);
    await cleanupPull(t.provider, 23);
  });

  it('runs without a pull request on one commit take turns, and both pass', async () => {
    const [a, b] = await Promise.all([check(quickSuite), check(quickSuite)]);
    expect([a.report.conclusion, b.report.conclusion]).toEqual(['success', 'success']);
    expect(a.report.branch).toBe(b.report.branch);
    expect(await leaked()).toEqual([]);
    await t.provider.delete(a.report.branch!, { recursive: true });
  });
});

describe('sessions', () => {
  it('a re-check ends a session on its own PR branch and names it in the log', async () => {
    expect((await check(quickSuite, { pr: 24 })).report.conclusion).toBe('success');
    const client = new pg.Client({
      connectionString: await t.provider.connectionUri('pr-24'),
      application_name: 'psql-of-a-reviewer',
    });
    client.on('error', () => undefined);
    await client.connect();
    const ended = new Promise<void>((resolve) => client.on('end', () => resolve()));
    const { report, log } = await check(quickSuite, { pr: 24 });
    expect(report.conclusion).toBe('success');
    expect(log).toMatch(/Disconnected 1 session from branch "pr-24": psql-of-a-reviewer \(pid \d+, user postgres/);
    await ended;
    await client.end().catch(() => undefined);
    await cleanupPull(t.provider, 24);
  });

  it('a session on the parent stops a new baseline with the session named and a hint check can follow', async () => {
    const client = new pg.Client({
      connectionString: await t.provider.connectionUri('main'),
      application_name: 'app-on-main',
    });
    await client.connect();
    try {
      // A seed no baseline has yet: the baseline must be forked from main now.
      const { report } = await check(
        (c) => quickSuite({ ...c, database: { ...c.database, seed: { kind: 'command', command: 'true' } } }),
        { pr: 25 },
      );
      expect(report.conclusion).toBe('error');
      expect(report.stages.baseline.status).toBe('error');
      expect(report.error!.message).toContain('app-on-main');
      expect(report.error!.hint).toContain('Close those connections and re-run the check');
      expect(report.error!.hint).not.toContain('--terminate-connections');
    } finally {
      await client.end();
    }
  });
});

describe('catalog drift', () => {
  it('a baseline whose database was dropped by hand is rebuilt; list shows drift and gc repairs it', async () => {
    const first = await check(quickSuite, { pr: 26 });
    const baseline = first.report.stages.baseline.name!;
    const record = (await t.provider.get(baseline))!;
    await query(t.adminUrl, `DROP DATABASE "${record.database}" WITH (FORCE)`);
    expect(await t.provider.drift()).toEqual([
      { name: baseline, problem: 'database-missing', database: record.database },
    ]);
    expect(await t.provider.get(baseline)).toBeUndefined();
    const { report } = await check(quickSuite, { pr: 26 });
    expect(report.error).toBeUndefined();
    expect(report.conclusion).toBe('success');
    expect(report.stages.baseline).toMatchObject({ status: 'passed', reused: false, seeded: true });
    expect(await t.provider.drift()).toEqual([]);

    // A PR branch's database dropped by hand: gc forgets the row, and nothing else.
    await query(t.adminUrl, `DROP DATABASE "${(await t.provider.get('pr-26'))!.database}" WITH (FORCE)`);
    expect((await t.provider.drift()).map((d) => d.name)).toEqual(['pr-26']);
    const gc = await t.provider.gc();
    expect(gc.repaired).toContain('pr-26');
    expect(await t.provider.drift()).toEqual([]);
    expect(await names()).toContain(baseline);
  });

  it('`consort branch list` names the drift on stderr and `branch gc` repairs it', async () => {
    const namespace = `d${randomBytes(4).toString('hex')}`;
    const provider = createPostgresProvider({ url: t.adminUrl, namespace });
    try {
      await provider.create({ name: 'feature-x' });
      await provider.create({ name: 'feature-x-try', parent: 'feature-x' });
      await query(t.adminUrl, `DROP DATABASE "${(await provider.get('feature-x'))!.database}" WITH (FORCE)`);
      const cli = async (...args: string[]) => {
        let out = '';
        let err = '';
        const code = await runCli(
          ['--provider', 'postgres', '--namespace', namespace, 'branch', ...args],
          {
            out: (s) => {
              out += `${s}\n`;
            },
            err: (s) => {
              err += `${s}\n`;
            },
          },
          { ...process.env, CONSORT_POSTGRES_URL: t.adminUrl },
        );
        return { code, out, err };
      };
      const list = await cli('list');
      expect(list.code).toBe(0);
      expect(list.err).toContain('Drift: branch "feature-x" is in the catalog but its database');
      expect(list.out).not.toMatch(/^feature-x /m);
      const gc = await cli('gc');
      expect(gc.out).toContain('Repaired (interrupted operations, branches whose database was gone): feature-x');
      expect((await cli('list')).err).toBe('');
      // The child's database was intact: it stays, now a child of main.
      expect(await provider.get('feature-x-try')).toMatchObject({ parent: 'main' });
    } finally {
      for (const b of await provider.list())
        if (b.name !== 'main') await provider.delete(b.name, { recursive: true }).catch(() => undefined);
      await provider.close();
    }
  });
});

describe('the stage that failed is the stage reported', () => {
  it('a suite branch that cannot be made is a suite error, not a schema diff error', async () => {
    const failing: BranchProvider = Object.create(t.provider, {
      create: {
        value: async (o: Parameters<BranchProvider['create']>[0]) => {
          if (o.name.endsWith('-suite')) throw new Error('disk full while copying the suite branch');
          return t.provider.create(o);
        },
      },
    });
    const { report } = await check(quickSuite, { pr: 27, provider: failing });
    expect(report.conclusion).toBe('error');
    expect(report.stages.suite).toMatchObject({ status: 'error', summary: 'disk full while copying the suite branch' });
    expect(report.stages.schemaDiff.status).toBe('skipped');
    expect(report.stages.lint.status).not.toBe('error');
    expect(report.stages.reversibility.status).toBe('passed');
    expect(await leaked()).toEqual([]);
    await cleanupPull(t.provider, 27);
  });
});

describe("the suite's branch", () => {
  // What the suite is given: its own database and role, the PR's migration applied (the new column), the seed.
  const probe = withSuite(
    `psql "$DATABASE_URL" -Atc "select current_database() || ' ' || current_user || ' ' || count(phone) || ' ' || count(*) from customers" > suite-probe.txt`,
  );
  const probed = async () => {
    const file = path.join(repo.dir, 'suite-probe.txt');
    const seen = (await readFile(file, 'utf8')).trim().split(' ');
    await rm(file);
    return seen;
  };

  it("is made beside the PR branch (a copy of the baseline, the PR's migrations applied as its role), not copied from it", async () => {
    const parents: Record<string, string | undefined> = {};
    const tracing: BranchProvider = Object.create(t.provider, {
      create: {
        value: async (o: Parameters<BranchProvider['create']>[0]) => {
          parents[o.name] = o.parent;
          return t.provider.create(o);
        },
      },
    });
    const { report } = await check(probe, { pr: 31, provider: tracing });
    expect(report.stages.suite).toMatchObject({ status: 'passed' });
    expect(parents['pr-31-suite']).toBe(report.stages.baseline.name);
    const [database, user, phones, customers] = await probed();
    expect(database).toMatch(/pr.31.suite/);
    expect(user).toBe(`${database}_role`);
    expect([phones, Number(customers) > 0]).toEqual(['0', true]);
    expect(await leaked()).toEqual([]);
    await cleanupPull(t.provider, 31);
  });

  it('is a fresh child of the PR branch when it could not be made beside it', async () => {
    let refused = 0;
    const parents: (string | undefined)[] = [];
    const once: BranchProvider = Object.create(t.provider, {
      create: {
        value: async (o: Parameters<BranchProvider['create']>[0]) => {
          if (o.name.endsWith('-suite')) {
            parents.push(o.parent);
            if (refused++ === 0) throw new Error('no room for the suite branch just now');
          }
          return t.provider.create(o);
        },
      },
    });
    const { report } = await check(probe, { pr: 32, provider: once });
    expect(report.stages.suite).toMatchObject({ status: 'passed' });
    expect(parents).toEqual([report.stages.baseline.name, 'pr-32']);
    const [database, user, phones] = await probed();
    expect([database, user, phones]).toEqual([expect.stringMatching(/pr.32.suite/), `${database}_role`, '0']);
    expect(await leaked()).toEqual([]);
    await cleanupPull(t.provider, 32);
  });
});

describe('scratch directories', () => {
  it("each run has its own (0700), removed at the end; a killed run's is swept by the next", async () => {
    const workspace = await mkdtemp(path.join(os.tmpdir(), 'consort-ws-'));
    try {
      await mkdir(path.join(workspace, 'node_modules'));
      const parent = path.join(workspace, 'node_modules', '.cache', 'consort');
      const [a, b] = await Promise.all([
        createWorkdir(workspace, localGitRepo),
        createWorkdir(workspace, localGitRepo),
      ]);
      expect(a.root).not.toBe(b.root);
      expect(path.dirname(a.root)).toBe(parent);
      expect((await stat(a.root)).mode & 0o777).toBe(0o700);
      // What a run killed with -9 leaves: its pid is gone.
      const dead = path.join(parent, 'consort-check-999999999-abcdef');
      await mkdir(dead);
      await a.dispose();
      await expect(access(a.root)).rejects.toThrow();
      const c = await createWorkdir(workspace, localGitRepo);
      await expect(access(dead)).rejects.toThrow();
      await access(b.root); // a live run's directory stays
      await Promise.all([b.dispose(), c.dispose()]);
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  });
});

describe('cleanup', () => {
  it("removes a pull request's branches, the baseline's child pr-N-rev included, and no other PR's", async () => {
    // As a run leaves them: pr-28 and pr-280 from a baseline, pr-28-rev from the baseline, pr-28-suite from pr-28.
    const baseline = 'baseline-cleanup';
    await t.provider.create({ name: baseline });
    await t.provider.create({ name: 'pr-28', parent: baseline });
    await t.provider.create({ name: 'pr-28-rev', parent: baseline });
    await t.provider.create({ name: 'pr-28-suite', parent: 'pr-28' });
    await t.provider.create({ name: 'pr-280', parent: baseline });
    expect((await cleanupPull(t.provider, 28)).sort()).toEqual(['pr-28', 'pr-28-rev', 'pr-28-suite']);
    expect((await names()).filter((n) => n.startsWith('pr-28'))).toEqual(['pr-280']);
    await t.provider.delete(baseline, { recursive: true });
  });
});
