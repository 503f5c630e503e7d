/**
 * The PR lane end to end on each emulated cloud provider: the example shop's clean change as a
 * real git repository, its migrations applied for real on the local PostgreSQL through the
 * emulated endpoints, Squawk, schema snapshots and a cheap suite command — exactly what the CLI,
 * the Action and the App run with `--provider lakebase` or `--provider neon`.
 */
import { testPorts } from '../helpers/check-ports.js';
import { localGitRepo } from '../../src/git/repo.js';
import { loadConfig } from '../../src/config/load.js';
import type { ConsortConfig } from '../../src/config/schema.js';
import { scenarioRepo } from '../../src/demo/scenarios.js';
import { resolveSides } from '../../src/cli/commands/check.js';
import { check as checkLane } from '../../src/lanes/check/run.js';
import { CheckReport } from '../../src/report/check-report.js';
import { createLakebaseProvider } from '../../src/branches/lakebase/provider.js';
import { parseLakebaseSettings } from '../../src/branches/lakebase/settings.js';
import { createNeonProvider } from '../../src/branches/neon/provider.js';
import { parseNeonSettings } from '../../src/branches/neon/settings.js';
import type { BranchProvider } from '../../src/ports/branch-provider.js';
import { fastClock } from '../emulators/clock.js';
import { LakebaseEmulator } from '../emulators/lakebase.js';
import { NeonEmulator } from '../emulators/neon.js';
import { attempt, query } from '../helpers/servers.js';

const cheapSuite = (c: ConsortConfig): ConsortConfig => ({
  ...c,
  suite: { ...c.suite, command: 'test -n "$DATABASE_URL" && test -n "$PGPASSWORD"', reports: [] },
});

async function checkClean(provider: BranchProvider, pr: number) {
  const repo = await scenarioRepo('clean');
  try {
    const { config, source } = await loadConfig(repo.dir);
    const cfg = cheapSuite(config);
    const { base, head } = await resolveSides(localGitRepo, repo.dir, cfg, { base: 'main' }, () => undefined);
    return CheckReport.parse(
      await checkLane({
        ...testPorts,
        workspace: repo.dir,
        config: cfg,
        configSource: source,
        base,
        head,
        pr,
        provider,
        env: process.env,
        toolVersion: 'test',
      }),
    );
  } finally {
    await repo.dispose();
  }
}

/** Where the PR's code ran with the provider's own credentials, the report says so in each stage's summary. */
const UNCONFINED = /ran with the neon provider's own credentials \(it could not make a role confined to the branch/;
const STAGES = ['baseline', 'migrations', 'reversibility', 'suite'] as const;

async function expectCleanPasses(
  provider: BranchProvider,
  beforeSecondRun: () => void = () => undefined,
): Promise<CheckReport> {
  const report = await checkClean(provider, 7);
  expect(report.error).toBeUndefined();
  expect(report.conclusion).toBe('success');
  expect(report.branchMode).toBe('native');
  expect(report.stages.baseline).toMatchObject({ status: 'passed', seeded: true, reused: false });
  expect(report.stages.migrations.applied.map((m) => m.name)).toEqual(['1730000400000_add_customer_phone']);
  expect(report.stages.reversibility.migrations).toEqual([expect.objectContaining({ verdict: 'reversible' })]);
  expect(report.stages.schemaDiff.text).toContain('+ column public.customers.phone text');
  expect(report.stages.suite.status).toBe('passed');
  // Only main, the baseline and the PR branch remain; the migrated column is really there.
  const names = (await provider.list()).map((b) => b.name).sort();
  expect(names.filter((n) => !n.startsWith('baseline-'))).toEqual(['main', 'pr-7']);
  const rows = await query(
    await provider.connectionUri('pr-7'),
    'SELECT count(*)::int AS n FROM customers WHERE phone IS NULL',
  );
  expect(rows[0]!.n).toBeGreaterThan(100);
  // main was never written to.
  expect(await query(await provider.connectionUri('main'), "SELECT to_regclass('customers') AS t")).toEqual([
    { t: null },
  ]);
  // A second check on the same base reuses the prepared baseline (and makes pr-7-suite again; the
  // migration reverses on pr-7 itself).
  beforeSecondRun();
  const again = await checkClean(provider, 7);
  expect(again.conclusion).toBe('success');
  expect(again.stages.baseline.reused).toBe(true);
  return report;
}

/** Two full checks each (the second re-creates pr-7-suite through lost answers) on real databases. */
const TWO_CHECKS_MS = 300_000;

describe('consort check on emulated cloud providers', () => {
  it(
    'lakebase: the clean change passes, migrations applied on real databases',
    async () => {
      const emu = await new LakebaseEmulator({
        clientId: 'sp-consort',
        clientSecret: 'oauth-secret-1234',
        opPolls: 2,
      }).start();
      const provider = createLakebaseProvider(parseLakebaseSettings(emu.env('m2m')), {
        clock: fastClock(),
        sslMode: 'disable',
      });
      try {
        // The second run meets lost answers: creates that succeed but answer 504 or drop the connection.
        await expectCleanPasses(provider, () => {
          emu.server.fail({ method: 'POST', path: /\/branches$/, status: 504, afterHandling: true });
          emu.server.fail({ method: 'POST', path: /\/branches$/, status: 0, afterHandling: true, drop: true });
        });
        expect(emu.server.pendingFaults()).toBe(0);
        // The emulator soft-deletes unless told to purge: nothing Consort deleted may still hold its id.
        expect(emu.softDeleted()).toEqual([]);
        const visible = (await provider.list()).map((b) => (b.name === 'main' ? 'production' : b.name));
        expect(
          emu
            .live()
            .filter((id) => !id.startsWith('consort-stage-'))
            .sort(),
        ).toEqual(visible.sort()); // no duplicate, nothing leaked
      } finally {
        await provider.close();
        await emu.stop();
      }
    },
    TWO_CHECKS_MS,
  );

  // The owner with CREATEDB only (no role confined to the branch can be made) runs the full check
  // here; the owner with CREATEROLE (Neon's) below, and a superuser owner (the emulator's default) in
  // test/branches/neon/*.test.ts.
  it(
    "neon with an owner role that has createdb only: the clean change passes, migrations applied on real databases, and the report says where the PR's code ran with the owner's credentials",
    async () => {
      const emu = await new NeonEmulator({ opPolls: 2, owner: 'createdb' }).start();
      const provider = createNeonProvider(parseNeonSettings(emu.env()), { clock: fastClock() });
      try {
        // Both on the one branch the second run makes (pr-7-suite): refused, then made but unanswered.
        const report = await expectCleanPasses(provider, () => {
          emu.server.fail({ method: 'POST', path: /\/branches$/, status: 500 });
          emu.server.fail({ method: 'POST', path: /\/branches$/, status: 504, afterHandling: true });
        });
        for (const stage of STAGES)
          expect([stage, UNCONFINED.test(report.stages[stage].summary)]).toEqual([stage, true]);
        expect(emu.server.pendingFaults()).toBe(0);
        expect(emu.byName('pr-7')).toBeDefined();
        const names = [...emu.branches.values()].map((b) => b.name).filter((n) => !n.startsWith('consort-stage-'));
        expect(names.sort()).toEqual((await provider.list()).map((b) => b.name).sort()); // no duplicate, nothing leaked
      } finally {
        await provider.close();
        await emu.stop();
      }
    },
    TWO_CHECKS_MS,
  );

  it(
    "neon with an owner role that has createrole only: the clean change passes, the PR's code confined to its branch",
    async () => {
      const emu = await new NeonEmulator({ owner: 'createrole' }).start();
      const provider = createNeonProvider(parseNeonSettings(emu.env()), { clock: fastClock() });
      try {
        const report = await checkClean(provider, 8);
        expect(report.conclusion).toBe('success');
        for (const stage of STAGES)
          expect([stage, UNCONFINED.test(report.stages[stage].summary)]).toEqual([stage, false]);
        // After the check the PR branch stays for people to look at: `consort branch url pr-8` (the
        // owner's URL) reads its tables, and so does its own confined role.
        const owner = await provider.connectionUri('pr-8');
        const count = 'SELECT count(*)::int AS n FROM customers WHERE phone IS NULL';
        expect(await attempt(owner, count)).toMatch(/^allowed: \[\{"n":[1-9]/);
        // Asking again re-keys the role the check made (a CREATEROLE owner may not touch SUPERUSER & co.).
        const confined = await provider.confinedUri('pr-8');
        expect(confined).not.toBeNull();
        expect(await attempt(confined!, count)).toMatch(/^allowed: \[\{"n":[1-9]/);
        expect(await attempt(confined!, 'ALTER TABLE customers ADD COLUMN note text')).toBe('allowed: []');
        expect(await attempt(owner, 'SELECT note FROM customers LIMIT 1')).toMatch(/^allowed: \[\{"note":null\}\]/);
        expect(await attempt(confined!, 'CREATE TABLE later (id int)')).toBe('allowed: []');
        expect(await attempt(owner, 'SELECT count(*)::int AS n FROM later')).toBe('allowed: [{"n":0}]');
      } finally {
        await provider.close();
        await emu.stop();
      }
    },
    TWO_CHECKS_MS,
  );
});
