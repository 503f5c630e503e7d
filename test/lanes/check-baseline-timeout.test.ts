/**
 * migrations.timeout on the base's own migrations as the baseline applies them (baseline.ts,
 * applyBase): a base migration that never ends fails the baseline once the base's limit passes,
 * naming it, the limit and where to raise it (the base branch's configuration: a pull request that
 * sets its own limit changes nothing for base's migrations); the run removes what it made and the
 * next check starts at once. A run cancelled while base's migrations apply ends them the same way
 * at once and concludes `cancelled`. On the run's shared embedded PostgreSQL 18, with a 2 s limit (counted from the first migration's start).
 */
import { rm } from 'node:fs/promises';
import { CheckCancelled } from '../../src/lanes/check/cancel.js';
import { cleanupPull } from '../../src/lanes/check/cleanup.js';
import type { MigrationRunner } from '../../src/ports/migration-runner.js';
import { CheckReport } from '../../src/report/check-report.js';
import { testPorts } from '../helpers/check-ports.js';
import { checkBranch, checkRepo, commitBranch, git } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

const CONFIG = (timeout: string) =>
  `migrations:\n  dir: migrations\n  timeout: ${timeout}\nsuite:\n  command: "true"\n`;

let t: TestProvider;
let dir: string;
beforeAll(async () => {
  t = await localTestProvider();
  dir = await checkRepo('check-baseline-timeout', {
    'migrations/1700000000000_base.sql':
      '-- Up Migration\nCREATE TABLE customers (id int);\n-- Down Migration\nDROP TABLE customers;\n',
    'migrations/1700000000001_hang.js': 'exports.up = () => new Promise(() => {});\nexports.down = () => {};\n',
    '.github/consort.yml': CONFIG('2s'),
  });
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t?.cleanup();
});

async function runCheck(
  branch: string,
  pr: number,
  options: { migrations?: MigrationRunner; signal?: AbortSignal } = {},
) {
  return CheckReport.parse(await checkBranch(dir, branch, pr, t.provider, () => undefined, {}, options));
}

describe("a base migration past the base's migrations.timeout", () => {
  it('fails the baseline naming it and the base branch as where to raise the limit, whatever the PR sets', async () => {
    await git(dir, 'checkout', '-q', 'main');
    // The pull request lifts the limit in its own configuration: not for base's migrations.
    await commitBranch(dir, 'lift', {
      '.github/consort.yml': CONFIG('1h'),
      'migrations/1700000000002_new.sql':
        '-- Up Migration\nCREATE TABLE t (id int);\n-- Down Migration\nDROP TABLE t;\n',
    });
    try {
      const first = await runCheck('lift', 91);
      expect(first.conclusion).toBe('failure');
      const stage = first.stages.baseline;
      expect(stage.status).toBe('failed');
      expect(stage.summary).toMatch(/^base's migration migrations\/1700000000001_hang\.js failed on the parent branch/);
      expect(stage.summary).toContain('still running after migrations.timeout (2s)');
      expect(stage.summary).not.toContain('npm ci');
      expect(stage.summary).toContain("raise migrations.timeout in the base branch's Consort configuration");
      expect(stage.durationMs).toBeLessThan(20_000);
      expect(first.stages.migrations.status).toBe('skipped');
      // Nothing held: the next check of the pull request runs (and stops) the same way at once.
      const second = await runCheck('lift', 91);
      expect(second.stages.baseline.status).toBe('failed');
      expect(second.stages.baseline.durationMs).toBeLessThan(20_000);
    } finally {
      await cleanupPull(t.provider, 91);
    }
  }, 120_000);
});

describe("a run cancelled while base's migrations apply", () => {
  it('ends a base migration that runs no statement at once and concludes cancelled', async () => {
    await git(dir, 'checkout', '-q', 'main');
    // No limit of the base's that would end it (the default, 30m): only the cancel does.
    await commitBranch(dir, 'no-limit', { '.github/consort.yml': CONFIG('30m') });
    await git(dir, 'checkout', '-q', 'main');
    await git(dir, 'merge', '-q', '--ff-only', 'no-limit');
    await commitBranch(dir, 'cancel-base', {
      'migrations/1700000000003_other.sql':
        '-- Up Migration\nCREATE TABLE u (id int);\n-- Down Migration\nDROP TABLE u;\n',
    });
    const controller = new AbortController();
    let abortedAt: number | undefined;
    let cancel: NodeJS.Timeout | undefined;
    const migrations: MigrationRunner = {
      ...testPorts.migrations,
      open: (o) => {
        const session = testPorts.migrations.open(o);
        return Object.assign(Object.create(session) as typeof session, {
          apply: (a: Parameters<typeof session.apply>[0], how?: Parameters<typeof session.apply>[1]) => {
            cancel ??= setTimeout(() => {
              abortedAt = performance.now();
              controller.abort(new CheckCancelled('SIGINT'));
            }, 1000);
            return session.apply(a, how);
          },
        });
      },
    };
    try {
      const report = await runCheck('cancel-base', 92, { migrations, signal: controller.signal }).finally(() =>
        clearTimeout(cancel),
      );
      expect(report.conclusion).toBe('cancelled');
      expect(report.cancelled).toEqual({ reason: 'SIGINT' });
      expect(report.stages.baseline).toMatchObject({ status: 'skipped', summary: 'cancelled' });
      expect(abortedAt).toBeDefined();
      expect(performance.now() - abortedAt!).toBeLessThan(15_000);
      // The half-built baseline was rolled back: no baseline branch is left.
      expect((await t.provider.list()).map((b) => b.name).filter((n) => n.startsWith('baseline'))).toEqual([]);
    } finally {
      await cleanupPull(t.provider, 92);
    }
  }, 120_000);
});
