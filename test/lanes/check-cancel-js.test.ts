/**
 * A run cancelled while a JavaScript migration runs no statement — a promise that never settles, or
 * a loop that holds the migrations' child's event loop — ends within a couple of seconds (run.ts,
 * stopMigrations: the statements are cancelled, then the child is ended as migrations.timeout ends
 * it, time-limit.ts endRequests), concludes `cancelled` (not a failed migration), removes its
 * temporary branches, leaves no migrations' child running, and releases its run lock: the next
 * check of the pull request runs at once. Without it the run waited for the migration (here, for
 * the default 30m limit). On the run's shared embedded PostgreSQL 18.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { CheckCancelled } from '../../src/lanes/check/cancel.js';
import { cleanupPull } from '../../src/lanes/check/cleanup.js';
import type { MigrationRunner } from '../../src/ports/migration-runner.js';
import { CheckReport } from '../../src/report/check-report.js';
import { testPorts } from '../helpers/check-ports.js';
import { checkBranch, checkRepo, commitBranch, CUSTOMERS_BASE, git, temporaryBranches } from '../helpers/check-repo.js';
import { processesRunning } from '../helpers/processes.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';

let t: TestProvider;
let dir: string;
beforeAll(async () => {
  t = await localTestProvider();
  // No migrations.timeout: the default (30m) is what would end these migrations otherwise.
  dir = await checkRepo('check-cancel-js', {
    'migrations/1700000000000_base.sql': CUSTOMERS_BASE,
    '.github/consort.yml': 'migrations:\n  dir: migrations\nsuite:\n  command: "true"\n',
  });
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t?.cleanup();
});

/** The lane's temporary branches still present. */
const temporary = () => temporaryBranches(t.provider);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `check` of `branch` as pull request `pr`; `cancelAfterMs`: aborted that long after the PR branch's first up. */
async function runCheck(branch: string, pr: number, cancelAfterMs?: number) {
  const controller = new AbortController();
  let abortedAt: number | undefined;
  let cancel: NodeJS.Timeout | undefined;
  const migrations: MigrationRunner = {
    ...testPorts.migrations,
    open: (options) => {
      const session = testPorts.migrations.open(options);
      return Object.assign(Object.create(session) as typeof session, {
        apply: (o: Parameters<typeof session.apply>[0], how?: Parameters<typeof session.apply>[1]) => {
          const database = new URL(o.databaseUrl).pathname.slice(1);
          if (cancelAfterMs !== undefined && cancel === undefined && new RegExp(`pr.${pr}$`).test(database))
            cancel = setTimeout(() => {
              abortedAt ??= performance.now();
              controller.abort(new CheckCancelled('SIGTERM'));
            }, cancelAfterMs);
          return session.apply(o, how);
        },
      });
    },
  };
  const report = CheckReport.parse(
    await checkBranch(
      dir,
      branch,
      pr,
      t.provider,
      () => undefined,
      {},
      { migrations, signal: controller.signal },
    ).finally(() => clearTimeout(cancel)),
  );
  return { report, afterAbortMs: abortedAt === undefined ? undefined : performance.now() - abortedAt };
}

describe('a run cancelled while a JavaScript migration runs no statement', () => {
  it.each([
    ['whose promise never settles', 81, 'new Promise(() => {})'],
    ['that loops', 82, '(() => { for (;;); })()'],
  ])(
    '(%s) ends within seconds, concludes cancelled, leaves no temporary branch nor child, and the next check runs at once',
    async (_what, pr, body) => {
      // The migration marks its process (the migrations' child), so the test can tell it is gone.
      const marker = `consort-cancel-${randomBytes(6).toString('hex')}`;
      const file = 'migrations/1700000000001_stuck.js';
      await git(dir, 'checkout', '-q', 'main');
      await commitBranch(dir, `stuck-${pr}`, {
        [file]: `exports.up = (pgm) => { process.title = ${JSON.stringify(marker)}; return ${body}; };\nexports.down = () => {};\n`,
      });
      try {
        const first = await runCheck(`stuck-${pr}`, pr, 1000);
        expect(first.report.conclusion).toBe('cancelled');
        expect(first.report.cancelled).toEqual({ reason: 'SIGTERM' });
        // A cancelled run, not a migration that failed.
        expect(first.report.stages.migrations).toMatchObject({ status: 'skipped', summary: 'cancelled' });
        expect(first.afterAbortMs).toBeDefined();
        expect(first.afterAbortMs!).toBeLessThan(15_000);
        expect(await temporary()).toEqual([]);
        // The child that ran the migration is gone (it is killed a second after it is let go of).
        let left = await processesRunning(marker);
        for (let i = 0; i < 30 && left > 0; i++) {
          await sleep(100);
          left = await processesRunning(marker);
        }
        expect(left).toBe(0);
        // Nothing of the stuck migration was recorded on the PR branch.
        const url = await t.provider.connectionUri(`pr-${pr}`);
        expect(await query(url, 'SELECT count(*)::int AS n FROM pgmigrations')).toEqual([{ n: 1 }]);

        // The run lock was released: the next check of the pull request (the migration fixed) runs at once.
        await git(dir, 'checkout', '-q', `stuck-${pr}`);
        await commitBranch(
          dir,
          `fixed-${pr}`,
          { [file]: 'exports.up = () => {};\nexports.down = () => {};\n' },
          `stuck-${pr}`,
        );
        const second = await runCheck(`fixed-${pr}`, pr);
        expect(second.report.conclusion).toBe('success');
        expect(await temporary()).toEqual([]);
      } finally {
        await cleanupPull(t.provider, pr);
      }
    },
    120_000,
  );
});
