/**
 * The TDD lane's branches when the provider's admin is no superuser but a CREATEROLE + CREATEDB
 * role, as managed services hand out: the baseline is built and seeded, a cycle's sandbox and a
 * proof's fresh branch take the feature's new migration as the branch's own role (not the admin),
 * the URL handed to untrusted code reaches that branch only and has no admin powers, and the run's
 * end removes every branch it made.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { roleAdminTestProvider, type RoleAdminTestProvider } from '../helpers/role-admin.js';
import { asUser, query } from '../helpers/servers.js';
import { laneBranches } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
let t: RoleAdminTestProvider;
let repo: ScenarioRepo;
beforeAll(async () => {
  t = await roleAdminTestProvider('local');
  repo = await scenarioRepo(null);
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await t?.cleanup();
});

const userOf = (url: string) => decodeURIComponent(new URL(url).username);

it('builds, forks and migrates as the branch roles, hands out confined URLs, and cleans up', async () => {
  const { config } = await loadConfig(repo.dir);
  const baseCommit = (await exec('git', ['rev-parse', 'HEAD'], { cwd: repo.dir })).stdout.trim();
  // The feature's migration, as a driver writes it in the work tree (agents' code: never the admin's).
  await writeFile(
    path.join(repo.dir, 'migrations', '1730000900000_add_customer_phone.sql'),
    [
      '-- Up Migration',
      'ALTER TABLE customers ADD COLUMN phone text;',
      'CREATE TABLE migrated_by AS SELECT current_user::text AS who;',
      '-- Down Migration',
      'DROP TABLE migrated_by;',
      'ALTER TABLE customers DROP COLUMN phone;',
      '',
    ].join('\n'),
  );
  const branches = await laneBranches({ provider: t.provider, dir: repo.dir, config: config, baseCommit });
  try {
    const sandbox = await branches.sandbox('f001-sbx');
    expect(sandbox.migrations).toMatchObject({ ok: true });
    expect(sandbox.migrations.applied.map((m) => m.name)).toEqual(['1730000900000_add_customer_phone']);
    const proof = await branches.fresh('f001-proof');
    expect(proof.migrations).toMatchObject({ ok: true });

    const agentUrl = await branches.untrusted('f001-sbx', sandbox.url);
    const role = userOf(agentUrl);
    expect(role).not.toBe(userOf(t.adminUrl));
    await asUser(agentUrl, async (c) => {
      // The column the migration added, owned by the branch's role: it ran as that role.
      const { rows } = await c.query<{ owner: string; phone: boolean }>(
        `SELECT pg_get_userbyid(c.relowner) AS owner,
                EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = 'customers' AND column_name = 'phone') AS phone
           FROM pg_class c WHERE c.oid = 'customers'::regclass`,
      );
      expect(rows[0]).toEqual({ owner: role, phone: true });
      // Who ran the migration: the branch's role, not the admin.
      expect((await c.query('SELECT who FROM migrated_by')).rows).toEqual([{ who: role }]);
      // The seeded rows came with the baseline.
      expect((await c.query('SELECT count(*)::int AS n FROM customers')).rows[0].n).toBeGreaterThan(0);
      const me = await c.query(
        'SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user',
      );
      expect(me.rows[0]).toEqual({ rolsuper: false, rolcreatedb: false, rolcreaterole: false });
      await expect(c.query('CREATE DATABASE stolen')).rejects.toThrow(/permission denied/);
    });
    // Not the proof's branch, nor the baseline every fork starts from.
    const proofDb = (await t.provider.get(branches.providerName('f001-proof')))!.database;
    const other = new URL(agentUrl);
    other.pathname = `/${proofDb}`;
    await expect(asUser(other.toString(), (c) => c.query('SELECT 1'))).rejects.toThrow(
      /permission denied for database/,
    );
    const baselineDb = (await t.provider.get(await branches.baseline()))!.database;
    other.pathname = `/${baselineDb}`;
    await expect(asUser(other.toString(), (c) => c.query('SELECT 1'))).rejects.toThrow(
      /permission denied for database/,
    );
  } finally {
    branches.drop('f001-proof'); // as the lane drops a proof's branch once it is judged
    await branches.settle();
  }
  // Nothing the run made is left but the baseline (kept for the next run) and its parent.
  const left = (await t.provider.list()).map((b) => b.name).sort();
  expect(left.filter((n) => n.startsWith('f001'))).toEqual([]);
  const databases = await query<{ datname: string }>(
    t.superUrl,
    'SELECT datname FROM pg_database WHERE datname LIKE $1',
    [`${t.namespace}\\_f001%`],
  );
  expect(databases).toEqual([]);
}, 180_000);
