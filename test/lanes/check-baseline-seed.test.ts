/**
 * The baseline's seed (database.seed) under the limit and the cancel of the baseline it builds
 * (baseline.ts, runSeed): a seed command past the base's migrations.timeout has its process group
 * killed and the baseline fails naming the command, the limit and where to raise it; a seed file
 * past it has its statement cancelled; a run cancelled while the seed command runs kills it at once
 * and concludes `cancelled`. Each leaves no baseline behind, so the next check builds it afresh.
 * On the run's shared embedded PostgreSQL 18, with a 1 s limit.
 */
import { rm } from 'node:fs/promises';
import { CheckCancelled } from '../../src/lanes/check/cancel.js';
import { cleanupPull } from '../../src/lanes/check/cleanup.js';
import { CheckReport } from '../../src/report/check-report.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { checkBranch, checkRepo, commitBranch, CUSTOMERS_BASE, git } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

const CONFIG = (timeout: string, seed: string) =>
  `migrations:\n  dir: migrations\n  timeout: ${timeout}\ndatabase:\n  seed:\n    ${seed}\nsuite:\n  command: "true"\n`;
const NEW_MIGRATION = {
  'migrations/1700000000002_new.sql': '-- Up Migration\nCREATE TABLE t (id int);\n-- Down Migration\nDROP TABLE t;\n',
};
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

let t: TestProvider;
let dir: string;
/** main as committed first: each test that moves main puts it back. */
let start: string;
beforeAll(async () => {
  t = await localTestProvider();
  dir = await checkRepo('check-baseline-seed', {
    'migrations/1700000000000_base.sql': CUSTOMERS_BASE,
    'db/seed.sql': 'SELECT pg_sleep(600);\n',
    '.github/consort.yml': CONFIG('1s', 'command: sleep 987'),
  });
  start = (await git(dir, 'rev-parse', 'main')).stdout.trim();
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t?.cleanup();
});

const runCheck = async (branch: string, pr: number, signal?: AbortSignal) =>
  CheckReport.parse(await checkBranch(dir, branch, pr, t.provider, () => undefined, ENV, signal ? { signal } : {}));

/** Processes of this machine whose command line is `command` (a seed the test started). */
async function running(command: string): Promise<string[]> {
  const { stdout } = await execFileAsync('ps', ['-eo', 'pid=,args=']);
  return stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.endsWith(` ${command}`));
}

const baselines = async () => (await t.provider.list()).map((b) => b.name).filter((n) => n.startsWith('baseline'));

describe("a seed past the base's migrations.timeout", () => {
  it('kills a seed command, fails the baseline naming it, the limit and the key, and leaves no baseline', async () => {
    await git(dir, 'checkout', '-q', 'main');
    // The pull request lifts the limit in its own configuration: not for the baseline.
    await commitBranch(dir, 'seed-limit', {
      ...NEW_MIGRATION,
      '.github/consort.yml': CONFIG('1h', 'command: sleep 987'),
    });
    try {
      for (let run = 0; run < 2; run++) {
        const report = await runCheck('seed-limit', 81);
        expect(report.conclusion).toBe('failure');
        const stage = report.stages.baseline;
        expect(stage.status).toBe('failed');
        expect(stage.summary).toContain('The seed command `sleep 987` was still running after migrations.timeout (1s)');
        expect(stage.summary).toContain("raise migrations.timeout in the base branch's Consort configuration");
        expect(stage.durationMs).toBeLessThan(10_000);
        expect(await running('sleep 987')).toEqual([]);
        expect(await baselines()).toEqual([]);
      }
    } finally {
      await cleanupPull(t.provider, 81);
    }
  }, 120_000);

  it("cancels a seed file's statement", async () => {
    await git(dir, 'checkout', '-q', 'main');
    await commitBranch(dir, 'seed-file', { '.github/consort.yml': CONFIG('1s', 'file: db/seed.sql') });
    await git(dir, 'checkout', '-q', 'main');
    await git(dir, 'merge', '-q', '--ff-only', 'seed-file');
    await commitBranch(dir, 'seed-file-pr', NEW_MIGRATION);
    try {
      const report = await runCheck('seed-file-pr', 82);
      const stage = report.stages.baseline;
      expect(stage.status).toBe('failed');
      expect(stage.summary).toContain('The seed file db/seed.sql was still running after migrations.timeout (1s)');
      expect(stage.durationMs).toBeLessThan(10_000);
      expect(await baselines()).toEqual([]);
    } finally {
      await git(dir, 'checkout', '-q', 'main');
      await git(dir, 'reset', '-q', '--hard', start);
      await cleanupPull(t.provider, 82);
    }
  }, 120_000);
});

describe('a run cancelled while the seed command runs', () => {
  it('kills its process group at once, concludes cancelled and leaves no baseline', async () => {
    await git(dir, 'checkout', '-q', 'main');
    // No limit of the base's that would end it (the default, 30m): only the cancel does.
    await commitBranch(dir, 'seed-no-limit', { '.github/consort.yml': CONFIG('30m', 'command: sleep 988') });
    await git(dir, 'checkout', '-q', 'main');
    await git(dir, 'merge', '-q', '--ff-only', 'seed-no-limit');
    await commitBranch(dir, 'seed-cancel', NEW_MIGRATION);
    const controller = new AbortController();
    let abortedAt: number | undefined;
    // Aborted once the seed is seen running.
    const watch = setInterval(() => {
      void running('sleep 988').then((found) => {
        if (found.length === 0 || controller.signal.aborted) return;
        abortedAt = performance.now();
        controller.abort(new CheckCancelled('SIGINT'));
      });
    }, 200);
    try {
      const report = await runCheck('seed-cancel', 83, controller.signal).finally(() => clearInterval(watch));
      expect(abortedAt).toBeDefined();
      expect(performance.now() - abortedAt!).toBeLessThan(15_000);
      expect(report.conclusion).toBe('cancelled');
      expect(report.stages.baseline).toMatchObject({ status: 'skipped', summary: 'cancelled' });
      expect(await running('sleep 988')).toEqual([]);
      expect(await baselines()).toEqual([]);
    } finally {
      await git(dir, 'checkout', '-q', 'main');
      await git(dir, 'reset', '-q', '--hard', start);
      await cleanupPull(t.provider, 83);
    }
  }, 120_000);
});
