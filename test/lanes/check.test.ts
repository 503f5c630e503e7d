/**
 * The PR lane end to end on the embedded PostgreSQL 18: the example shop's scenarios as real git
 * repositories, real migrations, Squawk, schema snapshots and the shop's own jest suite.
 */
import { testPorts } from '../helpers/check-ports.js';
import { localGitRepo } from '../../src/git/repo.js';
import { loadConfig } from '../../src/config/load.js';
import type { ConsortConfig } from '../../src/config/schema.js';
import type { BranchProvider } from '../../src/ports/branch-provider.js';
import type { Log } from '../../src/ports/log.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { planCheck } from '../../src/lanes/check/plan.js';
import { check as checkLane, type CheckInput } from '../../src/lanes/check/run.js';
import { CheckReport } from '../../src/report/check-report.js';
import { resolveSides } from '../../src/cli/commands/check.js';
import { withDatabase } from '../../src/db/sql.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';

let t: TestProvider;
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => t?.cleanup());

async function check(
  repo: ScenarioRepo,
  tweak: (c: ConsortConfig) => ConsortConfig = (c) => c,
  extra: Partial<CheckInput> = {},
) {
  const { config, source } = await loadConfig(repo.dir);
  const cfg = tweak(config);
  const { base, head } = await resolveSides(localGitRepo, repo.dir, cfg, { base: 'main' }, () => undefined);
  const input: CheckInput = {
    workspace: repo.dir,
    config: cfg,
    configSource: source,
    base,
    head,
    pr: null,
    provider: t.provider,
    env: process.env,
    toolVersion: 'test',
    ...testPorts,
    ...extra,
  };
  const report = CheckReport.parse(await checkLane(input));
  return { report, input };
}

async function branchNames(): Promise<string[]> {
  return (await t.provider.list()).map((b) => b.name);
}

async function withRepo<T>(
  scenario: string | null,
  fn: (repo: ScenarioRepo) => Promise<T>,
  extraMigrations?: { file: string; content: string }[],
): Promise<T> {
  const repo = await scenarioRepo(scenario, extraMigrations ? { extraMigrations } : {});
  try {
    return await fn(repo);
  } finally {
    await repo.dispose();
  }
}

const noSuite = (c: ConsortConfig): ConsortConfig => ({ ...c, suite: { ...c.suite, command: 'true', reports: [] } });

describe('example scenarios', () => {
  it('passes the clean change, keeps only the PR branch and a reusable baseline', () =>
    withRepo('clean', async (repo) => {
      const { report } = await check(repo);
      expect(report.conclusion).toBe('success');
      expect(report.stages.plan.newMigrations).toEqual(['1730000400000_add_customer_phone']);
      expect(report.stages.baseline).toMatchObject({ status: 'passed', seeded: true, reused: false });
      expect(report.stages.reversibility.migrations).toEqual([expect.objectContaining({ verdict: 'reversible' })]);
      expect(report.stages.schemaDiff.text).toContain('+ column public.customers.phone text');
      expect(report.stages.suite.tests).toMatchObject({ passed: 18, failed: 0 });
      const branch = report.branch!;
      expect(branch).toBe(`check-${repo.headSha.slice(0, 7)}`);
      expect((await branchNames()).filter((n) => !n.startsWith('baseline-')).sort()).toEqual([branch, 'main'].sort());
      // The PR branch really holds the migrated, seeded schema.
      const rows = await query(
        await t.provider.connectionUri(branch),
        'SELECT count(*)::int AS n FROM customers WHERE phone IS NULL',
      );
      expect(rows[0]!.n).toBeGreaterThan(100);
      // A second check on the same base forks straight from the baseline.
      const again = await check(repo, noSuite);
      expect(again.report.stages.baseline.reused).toBe(true);
      expect(again.report.conclusion).toBe('success');
      await t.provider.delete(branch);
    }));

  it('stops a NOT NULL column on a populated table at apply time, with file, statement and error', () =>
    withRepo('not-null', async (repo) => {
      const { report } = await check(repo);
      expect(report.conclusion).toBe('failure');
      expect(report.stages.migrations.failure).toMatchObject({
        file: 'migrations/1730000400000_add_customer_region.sql',
        code: '23502',
        message: expect.stringContaining('contains null values'),
      });
      expect(report.stages.migrations.failure!.statement).toContain('ADD COLUMN region text NOT NULL');
      expect(report.stages.lint.findings).toEqual([
        expect.objectContaining({ rule: 'adding-required-field', level: 'error', blocking: true, line: 5 }),
      ]);
      expect(report.stages.suite.status).toBe('skipped');
    }));

  it('refuses an out-of-order migration with the exact rename, touching no database', () =>
    withRepo('out-of-order', async (repo) => {
      const before = await branchNames();
      const { report } = await check(repo);
      expect(report.conclusion).toBe('failure');
      expect(report.stages.plan.problems).toEqual([
        expect.objectContaining({
          kind: 'order-conflict',
          suggestedFile: 'migrations/1730000300001_add_product_discontinued_at.sql',
        }),
      ]);
      expect(report.stages.baseline.status).toBe('skipped');
      expect(await branchNames()).toEqual(before);
    }));

  it('catches a down migration that does not restore the schema', () =>
    withRepo('bad-down', async (repo) => {
      const { report } = await check(repo, noSuite);
      expect(report.conclusion).toBe('failure');
      expect(report.stages.reversibility.migrations).toEqual([
        expect.objectContaining({
          verdict: 'not-restored',
          detail: expect.stringContaining('loyalty_tier'),
        }),
      ]);
      // Proven on the PR branch itself, which still holds the migration, recorded once (its columns
      // came back in another order, so the branch was reset and the migration applied again).
      expect(report.stages.schemaDiff.text).toContain('+ column public.customers.loyalty_tier text');
      const branch = report.branch!;
      const url = await t.provider.connectionUri(branch);
      expect(await query(url, "SELECT count(*)::int AS n FROM pgmigrations WHERE name LIKE '1730000400000%'")).toEqual([
        { n: 1 },
      ]);
      expect(
        (await query(url, 'SELECT count(*)::int AS n FROM customers WHERE loyalty_tier IS NULL'))[0]!.n,
      ).toBeGreaterThan(100);
      await t.provider.delete(branch);
    }));

  it('puts the PR branch back when a down leaves what the up cannot make again', () =>
    withRepo(
      null,
      async (repo) => {
        const { report } = await check(repo, noSuite);
        expect(report.conclusion).toBe('failure');
        expect(report.stages.migrations.status).toBe('passed');
        const [tags] = report.stages.reversibility.migrations;
        expect(tags).toMatchObject({ verdict: 'not-restored', detail: expect.stringContaining('tag_ids') });
        expect(tags!.detail).toMatch(/up after down failed: .*tag_ids.*already exists/);
        expect(report.stages.schemaDiff.text).toMatch(/\+ table public\.tags/);
        // Reset to the baseline and the migration applied again: seeded, migrated, recorded once.
        const url = await t.provider.connectionUri(report.branch!);
        expect(
          await query(url, "SELECT count(*)::int AS n FROM pgmigrations WHERE name = '1730000600000_tags'"),
        ).toEqual([{ n: 1 }]);
        expect(await query(url, "SELECT to_regclass('tags')::text AS t, to_regclass('tag_ids')::text AS s")).toEqual([
          { t: 'tags', s: 'tag_ids' },
        ]);
        expect((await query(url, 'SELECT count(*)::int AS n FROM customers'))[0]!.n).toBeGreaterThan(100);
        await t.provider.delete(report.branch!);
      },
      [
        {
          file: 'migrations/1730000600000_tags.sql',
          content:
            '-- Up Migration\nCREATE TABLE tags (id int);\nCREATE SEQUENCE tag_ids;\n-- Down Migration\nDROP TABLE tags;\n',
        },
      ],
    ));
});

describe('bad input ends in a failing report or a clear error, leaving only the PR branch', () => {
  it('a migration with a syntax error', () =>
    withRepo(
      null,
      async (repo) => {
        const { report } = await check(repo, noSuite);
        expect(report.conclusion).toBe('failure');
        expect(report.stages.migrations.failure).toMatchObject({
          code: '42601',
          line: 3,
          file: 'migrations/1730000500000_broken.sql',
        });
        expect(report.stages.lint.findings.some((f) => f.rule === 'syntax-error')).toBe(true);
        expect((await branchNames()).filter((n) => n.endsWith('-rev') || n.endsWith('-suite'))).toEqual([]);
      },
      [
        {
          file: 'migrations/1730000500000_broken.sql',
          content:
            '-- Up Migration\nCREATE TABLE ok (id bigint);\nCREATE TABEL broken (id bigint);\n-- Down Migration\nDROP TABLE ok;\n',
        },
      ],
    ));

  it.each([
    ['a suite command that does not exist', { command: 'consort-no-such-command --run' }, /not found/],
    ['a suite that hangs', { command: 'sleep 60', timeout: '1s' }, /timed out after 1s/],
    ['a suite that prints megabytes and fails', { command: 'yes consort | head -c 5000000; exit 3' }, /exit 3/],
    [
      'malformed JUnit',
      { command: 'printf "<testsuites><testsuite" > junit.xml', reports: ['junit.xml'] },
      /JUnit report is unusable/,
    ],
    ['missing JUnit', { command: 'true', reports: ['reports/*.xml'] }, /JUnit report is unusable/],
  ])('%s', (_label, suite, summary) =>
    withRepo(null, async (repo) => {
      const { report } = await check(repo, (c) => ({ ...c, suite: { ...c.suite, reports: [], ...suite } }));
      expect(report.conclusion).toBe('failure');
      expect(report.stages.suite.status).toBe('failed');
      expect(report.stages.suite.summary).toMatch(summary);
      expect(report.stages.suite.outputTail.length).toBeLessThanOrEqual(8000);
      expect((await branchNames()).filter((n) => n.endsWith('-suite') || n.endsWith('-rev'))).toEqual([]);
    }),
  );

  it('the suite sees DATABASE_URL and PG* of a fresh branch of its own, and its writes do not reach the PR branch', () =>
    withRepo(null, async (repo) => {
      const cmd =
        'psql "$DATABASE_URL" -Atc "select current_database()" > db.txt && test "$PGDATABASE" = "$(cat db.txt)" && psql -Atc "delete from order_lines"';
      const { report } = await check(repo, (c) => ({ ...c, suite: { ...c.suite, command: cmd, reports: [] } }));
      expect(report.stages.suite).toMatchObject({ status: 'passed' });
      const left = await query(
        await t.provider.connectionUri(report.branch!),
        'SELECT count(*)::int AS n FROM order_lines',
      );
      expect(left[0]!.n).toBe(1200);
    }));

  it("gives a pull request's branch the configuration's database.ttl, so `branch gc` removes it", () =>
    withRepo('clean', async (repo) => {
      const withTtl = (c: ConsortConfig): ConsortConfig => noSuite({ ...c, database: { ...c.database, ttl: '3h' } });
      const ttlOf = async () => {
        const branch = await t.provider.get('pr-31');
        expect(branch?.expiresAt).toBeInstanceOf(Date);
        return branch!.expiresAt!.getTime() - Date.now();
      };
      try {
        expect((await check(repo, withTtl, { pr: 31 })).report.conclusion).toBe('success');
        expect(Math.abs((await ttlOf()) - 3 * 3_600_000)).toBeLessThan(60_000);
        // Two hours pass; the next check counts the ttl from itself (a reset would keep the old expiry).
        await query(
          withDatabase(t.adminUrl, 'consort_catalog'),
          "UPDATE consort.branches SET expires_at = expires_at - interval '2 hours' WHERE namespace = $1 AND name = 'pr-31'",
          [t.namespace],
        );
        expect(Math.abs((await ttlOf()) - 3_600_000)).toBeLessThan(60_000);
        expect((await check(repo, withTtl, { pr: 31 })).report.conclusion).toBe('success');
        expect(Math.abs((await ttlOf()) - 3 * 3_600_000)).toBeLessThan(60_000);
      } finally {
        await t.provider.delete('pr-31', { recursive: true, terminateConnections: true });
      }
    }));

  it('dry run plans without touching any database', () =>
    withRepo('clean', async (repo) => {
      const before = await branchNames();
      const { config, source } = await loadConfig(repo.dir);
      const { base, head } = await resolveSides(localGitRepo, repo.dir, config, { base: 'main' }, () => undefined);
      const plan = await planCheck(
        {
          workspace: repo.dir,
          config,
          configSource: source,
          base,
          head,
          pr: 12,
          env: process.env,
          toolVersion: 'test',
        },
        testPorts,
      );
      expect(plan).toMatchObject({
        ok: true,
        newMigrations: ['1730000400000_add_customer_phone'],
        branches: { branch: 'pr-12' },
        baseline: expect.stringMatching(/^baseline-[0-9a-f]{12}$/),
      });
      expect(await branchNames()).toEqual(before);
    }));
});

describe('removing the temporary branches', () => {
  /** A log that keeps each level's lines. */
  const recordingLog = () => {
    const lines = { debug: [] as string[], info: [] as string[], warn: [] as string[], error: [] as string[] };
    const log: Log = {
      debug: (m) => lines.debug.push(m),
      info: (m) => lines.info.push(m),
      warn: (m) => lines.warn.push(m),
      error: (m) => lines.error.push(m),
    };
    return { lines, log };
  };

  it('is routine, so the log says it only at debug level', () =>
    withRepo('clean', async (repo) => {
      const { lines, log } = recordingLog();
      const { report } = await check(repo, noSuite, { pr: 33, log });
      try {
        expect(report.conclusion).toBe('success');
        expect([...lines.info, ...lines.warn, ...lines.error].filter((l) => /temporary/i.test(l))).toEqual([]);
        expect(lines.debug).toContain('Removed temporary branches: pr-33-suite');
        expect((await branchNames()).filter((n) => n.startsWith('pr-33-'))).toEqual([]);
      } finally {
        await t.provider.delete('pr-33', { recursive: true, terminateConnections: true });
      }
    }));

  it('keeps them with --keep-branches, says so, and the next check of the branch removes them', () =>
    withRepo('clean', async (repo) => {
      const { lines, log } = recordingLog();
      try {
        const { report } = await check(repo, noSuite, { pr: 35, log, keepBranches: true });
        expect(report.conclusion).toBe('success');
        expect(lines.info).toContain(
          'Kept the temporary branch pr-35-suite (--keep-branches); the next check of pr-35 removes it first.',
        );
        expect(await branchNames()).toContain('pr-35-suite');
        expect((await check(repo, noSuite, { pr: 35 })).report.conclusion).toBe('success');
        expect((await branchNames()).filter((n) => n.startsWith('pr-35-'))).toEqual([]);
      } finally {
        await t.provider.delete('pr-35', { recursive: true, terminateConnections: true });
      }
    }));

  it('warns about one it could not remove, and the next check of the branch removes it', () =>
    withRepo('clean', async (repo) => {
      const { lines, log } = recordingLog();
      // The provider refuses to drop the suite's branch once; everything else is the real provider.
      let refuse = true;
      const provider = new Proxy(t.provider, {
        get(target, prop) {
          if (prop === 'delete')
            return (name: string, options?: Parameters<BranchProvider['delete']>[1]) => {
              if (refuse && name === 'pr-34-suite') {
                refuse = false;
                return Promise.reject(new Error('the server refused'));
              }
              return target.delete(name, options);
            };
          const value = Reflect.get(target, prop, target) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      try {
        expect((await check(repo, noSuite, { pr: 34, log, provider })).report.conclusion).toBe('success');
        expect(lines.warn).toEqual([
          'Could not remove the temporary branch pr-34-suite: the server refused (the next check of pr-34 removes it first)',
        ]);
        expect(await branchNames()).toContain('pr-34-suite');
        expect((await check(repo, noSuite, { pr: 34, provider })).report.conclusion).toBe('success');
        expect((await branchNames()).filter((n) => n.startsWith('pr-34-'))).toEqual([]);
      } finally {
        await t.provider.delete('pr-34', { recursive: true, terminateConnections: true });
      }
    }));
});
