/**
 * migrations.timeout (src/lanes/check/time-limit.ts): a pull request's migration that never ends —
 * a statement that sleeps, one that waits on a lock another session holds, a JavaScript migration
 * whose promise never settles or that loops (its child's event loop held: the name comes from the
 * branch's migrations table) — fails the migrations stage once the limit passes, naming the
 * migration, the limit and the key that raises it; the run removes its temporary branches and
 * releases its run lock, so the next check of the same pull request runs at once. A down past the
 * limit fails reversibility the same way. On the run's shared embedded PostgreSQL 18, with a 2 s limit (counted from the first migration's start).
 */
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { cleanupPull } from '../../src/lanes/check/cleanup.js';
import type { MigrationRunner, MigrationSession } from '../../src/ports/migration-runner.js';
import { CheckReport } from '../../src/report/check-report.js';
import { testPorts } from '../helpers/check-ports.js';
import { checkBranch, checkRepo, commitBranch, CUSTOMERS_BASE, git, temporaryBranches } from '../helpers/check-repo.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';

let t: TestProvider;
let dir: string;
beforeAll(async () => {
  t = await localTestProvider();
  dir = await checkRepo('check-migrations-timeout', {
    'migrations/1700000000000_base.sql': CUSTOMERS_BASE,
    '.github/consort.yml': 'migrations:\n  dir: migrations\n  timeout: 2s\nsuite:\n  command: "true"\n',
  });
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t?.cleanup();
});

/** The lane's temporary branches still present. */
const temporary = () => temporaryBranches(t.provider);

/**
 * The migrations' port, where each database a migration request is about to run on first gets a
 * session of the test's own holding an ACCESS EXCLUSIVE lock on `customers` (as the role the
 * migrations run as, which owns it): the migration's INSERT waits on it, as behind live traffic.
 */
function lockingMigrations(held: pg.Client[]): MigrationRunner {
  const locked = new Set<string>();
  return {
    ...testPorts.migrations,
    open: (options) => {
      const session = testPorts.migrations.open(options);
      return Object.assign(Object.create(session) as MigrationSession, {
        apply: async (o: Parameters<MigrationSession['apply']>[0], how?: Parameters<MigrationSession['apply']>[1]) => {
          if (o.direction === 'up' && !locked.has(o.databaseUrl)) {
            locked.add(o.databaseUrl);
            const client = new pg.Client({ connectionString: o.databaseUrl });
            client.on('error', () => undefined); // ended with the suite's branch, which the run removes
            await client.connect();
            held.push(client);
            await client.query('BEGIN');
            await client.query('LOCK TABLE customers IN ACCESS EXCLUSIVE MODE');
          }
          return session.apply(o, how);
        },
      });
    },
  };
}

async function runCheck(branch: string, pr: number, migrations: MigrationRunner = testPorts.migrations) {
  const lines: string[] = [];
  const started = performance.now();
  const report = CheckReport.parse(
    await checkBranch(dir, branch, pr, t.provider, (l) => lines.push(l), {}, { migrations }),
  );
  return { report, log: lines.join('\n'), ms: performance.now() - started };
}

const LIMIT_SAID = expect.stringMatching(
  /(still running (down )?after|stopped with .* past) migrations\.timeout \(2s\)/,
);
const RAISE_SAID = expect.stringContaining('raise migrations.timeout');

describe('a migration past migrations.timeout', () => {
  it.each([
    [
      'a SQL statement that sleeps',
      61,
      'migrations/1700000000001_sleep.sql',
      '-- Up Migration\nSELECT pg_sleep(3600);\n-- Down Migration\nSELECT 1;\n',
      false,
      /its statement was cancelled/,
    ],
    [
      'a statement waiting on a lock',
      62,
      'migrations/1700000000001_lock.sql',
      "-- Up Migration\nINSERT INTO customers VALUES (1, 'waits');\n-- Down Migration\nDELETE FROM customers;\n",
      true,
      /its statement was cancelled/,
    ],
    [
      'a JavaScript migration whose promise never settles',
      63,
      'migrations/1700000000001_hang.js',
      'exports.up = () => new Promise(() => {});\nexports.down = () => {};\n',
      false,
      /the process running it was ended|stopped with the migrations' process/,
    ],
    [
      'a JavaScript migration that loops',
      66,
      'migrations/1700000000001_loop.js',
      'exports.up = () => { for (;;); };\nexports.down = () => {};\n',
      false,
      /the process running it was ended|stopped with the migrations' process/,
    ],
  ])(
    '(%s) fails the migrations stage naming it, leaves no temporary branch, and the next check runs at once',
    async (_what, pr, file, text, lock, how) => {
      await git(dir, 'checkout', '-q', 'main');
      await commitBranch(dir, `slow-${pr}`, { [file]: text });
      const held: pg.Client[] = [];
      try {
        const first = await runCheck(`slow-${pr}`, pr, lock ? lockingMigrations(held) : testPorts.migrations);
        expect(first.report.conclusion).toBe('failure');
        const stage = first.report.stages.migrations;
        expect(stage).toMatchObject({ status: 'failed', failure: { file, message: LIMIT_SAID } });
        expect(stage.summary).toMatch(new RegExp(`^${file.replace(/[.]/g, '\\.')} failed: `));
        expect(stage.summary).toMatch(how);
        expect(stage.summary).toEqual(RAISE_SAID);
        // Ended at the limit (2 s), not at the migration's end: the stage took the limit and a cancel.
        expect(stage.durationMs).toBeLessThan(15_000);
        expect(first.report.stages.suite).toMatchObject({ status: 'skipped' });
        expect(await temporary()).toEqual([]);
        for (const c of held) await c.end().catch(() => undefined);
        held.length = 0;

        // The run lock was released: the next check of the pull request starts and ends at once
        // (the lock gone, the locked migration applies; the others run past the limit again).
        const second = await runCheck(`slow-${pr}`, pr);
        expect(second.report.stages.migrations.status).toBe(lock ? 'passed' : 'failed');
        expect(second.report.stages.migrations.durationMs).toBeLessThan(15_000);
        expect(await temporary()).toEqual([]);
        // The statement cancelled did not commit anything on the PR branch.
        if (!lock) {
          const url = await t.provider.connectionUri(`pr-${pr}`);
          expect(await query(url, 'SELECT count(*)::int AS n FROM pgmigrations')).toEqual([{ n: 1 }]);
        }
      } finally {
        for (const c of held) await c.end().catch(() => undefined);
        await cleanupPull(t.provider, pr);
      }
    },
    120_000,
  );

  const SLOW_DOWN = {
    'migrations/1700000000001_slow_down.sql':
      '-- Up Migration\nCREATE TABLE slow (id int);\n-- Down Migration\nSELECT pg_sleep(3600);\nDROP TABLE slow;\n',
  };
  it.each([
    ['on the PR branch (every new migration has a down)', 64, SLOW_DOWN],
    [
      "on reversibility's copy (one has no down)",
      65,
      { ...SLOW_DOWN, 'migrations/1700000000002_no_down.sql': '-- Up Migration\nCREATE TABLE no_down (id int);\n' },
    ],
  ])(
    'fails reversibility naming the migration whose down runs past it (%s)',
    async (_where, pr, files: Record<string, string>) => {
      await git(dir, 'checkout', '-q', 'main');
      await commitBranch(dir, `slow-down-${pr}`, files);
      try {
        const { report } = await runCheck(`slow-down-${pr}`, pr);
        expect(report.stages.migrations.status).toBe('passed');
        expect(report.stages.reversibility.status).toBe('failed');
        expect(report.stages.reversibility.migrations).toEqual(
          expect.arrayContaining([expect.objectContaining({ name: '1700000000001_slow_down', detail: LIMIT_SAID })]),
        );
        expect(report.stages.reversibility.durationMs).toBeLessThan(15_000);
        expect(await temporary()).toEqual([]);
      } finally {
        await cleanupPull(t.provider, pr);
      }
    },
    120_000,
  );
});
