/**
 * The TDD lane applies a project's migrations with the node-pg-migrate the project installed, as
 * its deploy and `consort check` do, not with Consort's bundled one: the baseline, a cycle's
 * sandbox and a proof's fresh branch all run the project's engine (a fake 7.x that records each
 * run), resolved once for the run, and a proof's migration log says which engine it was.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { nodePgMigrate } from '../../src/migrations/runner.js';
import type { MigrationRunner } from '../../src/ports/migration-runner.js';
import { fakeProjectEngine } from '../helpers/fake-engine.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { laneBranches } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

let t: TestProvider;
let repo: ScenarioRepo;
beforeAll(async () => {
  [t, repo] = await Promise.all([localTestProvider(), scenarioRepo(null)]);
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await t?.cleanup();
});

it("applies the baseline's, the sandbox's and the proof's migrations with the project's node-pg-migrate, resolved once", async () => {
  const { config } = await loadConfig(repo.dir);
  const baseCommit = (await execFileAsync('git', ['rev-parse', 'HEAD'], { cwd: repo.dir })).stdout.trim();
  const engine = await fakeProjectEngine(repo.dir, '7.9.1-project');
  // The feature's migration, as a driver writes it.
  await writeFile(
    path.join(repo.dir, 'migrations', '1730000900000_add_customer_phone.sql'),
    '-- Up Migration\nALTER TABLE customers ADD COLUMN phone text;\n-- Down Migration\nALTER TABLE customers DROP COLUMN phone;\n',
  );
  let resolved = 0;
  const migrations: Pick<MigrationRunner, 'apply' | 'resolveEngine'> = {
    apply: nodePgMigrate.apply,
    async resolveEngine(workspace, options) {
      resolved += 1;
      return nodePgMigrate.resolveEngine(workspace, options);
    },
  };
  const branches = await laneBranches({ provider: t.provider, dir: repo.dir, config, baseCommit, migrations });
  try {
    const sandbox = await branches.sandbox('f001-sbx');
    expect(sandbox.migrations).toMatchObject({ ok: true });
    const proof = await branches.fresh('f001-proof');
    expect(proof.migrations).toMatchObject({ ok: true });
    expect(proof.migrations.applied.map((m) => m.name)).toEqual(['1730000900000_add_customer_phone']);
    // Every apply ran the project's engine: the baseline's (base's migrations), the sandbox's and the proof's.
    const uses = await engine.uses();
    expect(uses.length).toBeGreaterThanOrEqual(3);
    expect(uses.every((u) => u.startsWith('up '))).toBe(true);
    expect(proof.migrations.log).toContain(
      "consort: migrations applied with node-pg-migrate 7.9.1-project (the project's)",
    );
    expect(branches.engine()).toBe("node-pg-migrate 7.9.1-project (the project's)");
    expect(
      await query(proof.url, "SELECT count(*)::int AS n FROM information_schema.columns WHERE column_name = 'phone'"),
    ).toEqual([{ n: 1 }]);
    expect(resolved).toBe(1);
  } finally {
    await branches.settle();
  }
}, 120_000);
