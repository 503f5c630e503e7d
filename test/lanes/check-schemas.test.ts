/**
 * node-pg-migrate's schema settings (`migrations.schema`, `createSchema`, `migrationsSchema`,
 * `createMigrationsSchema`) through the PR lane on the embedded PostgreSQL 18: a project whose
 * migrations create tables with unqualified names in `app` (node-pg-migrate's --schema app
 * --create-schema) and record them in `meta.pgmigrations` (--migrations-schema meta
 * --create-migrations-schema), as a real git repository: base holds the first migration, the pull
 * request adds a SQL one and a JavaScript one (which runs in the migrations' child process). The
 * check, the App's promotion on merge, and the applied-migrations lookup.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promote } from '../../app/promote.js';
import { resolveSides } from '../../src/cli/commands/check.js';
import { loadConfig } from '../../src/config/load.js';
import { localGitRepo } from '../../src/git/repo.js';
import { appliedMigrations } from '../../src/lanes/check/baseline.js';
import { check as checkLane } from '../../src/lanes/check/run.js';
import { migrationPlacement } from '../../src/migrations/placement.js';
import { applyMigrations } from '../../src/migrations/runner.js';
import { CheckReport } from '../../src/report/check-report.js';
import { testPorts } from '../helpers/check-ports.js';
import { isolatedGit } from '../helpers/check-repo.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';

const git = isolatedGit;

const SETTINGS = {
  schema: 'app',
  createSchema: true,
  migrationsSchema: 'meta',
  createMigrationsSchema: true,
};

const BASE = {
  '1700000000000_customers.sql': `-- Up Migration
CREATE TABLE customers (id serial PRIMARY KEY, email text NOT NULL);
-- Down Migration
DROP TABLE customers;
`,
};
const PR = {
  '1700000000001_orders.sql': `-- Up Migration
CREATE TABLE orders (id serial PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers (id));
-- Down Migration
DROP TABLE orders;
`,
  '1700000000002_invoices.js': `exports.up = (pgm) => {
  pgm.createTable('invoices', { id: 'id', order_id: { type: 'integer', notNull: true, references: 'orders' } });
};
exports.down = (pgm) => {
  pgm.dropTable('invoices');
};
`,
};

let t: TestProvider;
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => t?.cleanup());

async function repository(): Promise<{ dir: string; dispose: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'consort-schemas-'));
  await mkdir(path.join(dir, 'migrations'));
  await writeFile(
    path.join(dir, 'consort.config.json'),
    JSON.stringify({ migrations: SETTINGS, suite: { command: 'true' } }, null, 2),
  );
  for (const [file, content] of Object.entries(BASE)) await writeFile(path.join(dir, 'migrations', file), content);
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  await git(dir, 'checkout', '-qb', 'feature');
  for (const [file, content] of Object.entries(PR)) await writeFile(path.join(dir, 'migrations', file), content);
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'the pull request');
  return { dir, dispose: () => rm(dir, { recursive: true, force: true }) };
}

describe('a project that migrates in its own schema and records in another', () => {
  it('checks the pull request in app, recorded in meta: reversible, and the diff shows the tables', async () => {
    const repo = await repository();
    try {
      const { config, source } = await loadConfig(repo.dir);
      const { base, head } = await resolveSides(localGitRepo, repo.dir, config, { base: 'main' }, () => undefined);
      const report = CheckReport.parse(
        await checkLane({
          ...testPorts,
          workspace: repo.dir,
          config,
          configSource: source,
          base,
          head,
          pr: 7,
          provider: t.provider,
          env: process.env,
          toolVersion: 'test',
        }),
      );
      expect(report.error).toBeUndefined();
      expect(report.stages.baseline).toMatchObject({ status: 'passed', applied: ['1700000000000_customers'] });
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [
          expect.objectContaining({ name: '1700000000001_orders' }),
          expect.objectContaining({ name: '1700000000002_invoices' }),
        ],
      });
      // Only the migrations' own statements are reported: node-pg-migrate's INSERT into
      // meta.pgmigrations is bookkeeping.
      expect(report.stages.migrations.applied.map((m) => m.statements)).toEqual([1, 1]);
      expect(report.stages.reversibility).toMatchObject({ status: 'passed' });
      expect(report.stages.reversibility.migrations.map((m) => m.verdict)).toEqual(['reversible', 'reversible']);
      // The schemas node-pg-migrate created are the baseline's already: only the tables are new.
      const diff = report.stages.schemaDiff.text ?? '';
      expect(diff).toContain('+ table app.orders');
      expect(diff).toContain('+ table app.invoices');
      expect(diff).not.toMatch(/pgmigrations|schema (app|meta)\b/);
      expect(report.stages.schemaDiff.summary).not.toBe('no schema changes');
      expect(report.conclusion).toBe('success');

      // On the PR branch the tables are in app and the record in meta, nothing in public.
      const url = await t.provider.connectionUri(report.branch!);
      const tables = await query<{ name: string }>(
        url,
        `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
          WHERE table_schema IN ('app', 'meta', 'public') ORDER BY 1`,
      );
      expect(tables.map((r) => r.name)).toEqual(['app.customers', 'app.invoices', 'app.orders', 'meta.pgmigrations']);
      const recorded = await query<{ name: string }>(url, 'SELECT name FROM meta.pgmigrations ORDER BY run_on, id');
      expect(recorded.map((r) => r.name)).toEqual([
        '1700000000000_customers',
        '1700000000001_orders',
        '1700000000002_invoices',
      ]);
      await t.provider.delete(report.branch!, { recursive: true, terminateConnections: true });
    } finally {
      await repo.dispose();
    }
  });

  it("the App's promotion on merge applies them in app, recorded in meta, after the parent's", async () => {
    const repo = await repository();
    const parent = 'schemas-parent';
    try {
      await t.provider.create({ name: parent, parent: 'main' });
      const { config } = await loadConfig(repo.dir);
      const placement = migrationPlacement(config.migrations);
      const dir = path.join(repo.dir, 'migrations');
      const url = await t.provider.connectionUri(parent);
      // The parent as base's deploy left it: the first migration, recorded in meta.
      expect((await applyMigrations({ databaseUrl: url, dir, direction: 'up', count: 1, ...placement })).ok).toBe(true);
      const outcome = await promote({
        provider: t.provider,
        parent,
        placement,
        dir,
        relativeTo: repo.dir,
        pr: 7,
        mergeSha: 'a'.repeat(40),
      });
      expect(outcome).toMatchObject({ kind: 'promoted', applied: ['1700000000001_orders', '1700000000002_invoices'] });
      expect(await query(url, `SELECT to_regclass('app.invoices') IS NOT NULL AS x`)).toEqual([{ x: true }]);
      expect(await appliedMigrations(url, placement)).toHaveLength(3);
    } finally {
      await t.provider.delete(parent, { recursive: true, terminateConnections: true }).catch(() => undefined);
      await repo.dispose();
    }
  });

  it('reads which migrations ran from the table in its own schema', async () => {
    const repo = await repository();
    const name = 'schemas-applied';
    try {
      await t.provider.create({ name, parent: 'main' });
      const url = await t.provider.connectionUri(name);
      const { config } = await loadConfig(repo.dir);
      const placement = migrationPlacement(config.migrations);
      expect(placement).toEqual({
        migrationsTable: 'pgmigrations',
        schema: ['app'],
        createSchema: true,
        migrationsSchema: 'meta',
        createMigrationsSchema: true,
        ignorePattern: '\\..*',
      });
      const dir = path.join(repo.dir, 'migrations');
      const r = await applyMigrations({ databaseUrl: url, dir, direction: 'up', ...placement });
      expect(r.ok).toBe(true);
      expect(await appliedMigrations(url, placement)).toEqual([
        '1700000000000_customers',
        '1700000000001_orders',
        '1700000000002_invoices',
      ]);
      // With migrationsSchema left out, node-pg-migrate's table is in the first schema: app.
      const inApp = { migrationsTable: 'pgmigrations', schema: ['app'], createSchema: true };
      expect(await appliedMigrations(url, inApp)).toEqual([]);
      const down = await applyMigrations({ databaseUrl: url, dir, direction: 'down', count: 3, ...placement });
      expect(down.ok).toBe(true);
      const up = await applyMigrations({ databaseUrl: url, dir, direction: 'up', count: 1, ...inApp });
      expect(up.ok).toBe(true);
      // Its INSERT into app.pgmigrations is node-pg-migrate's bookkeeping, not the migration's SQL.
      expect(up.applied).toEqual([
        expect.objectContaining({ sql: [expect.stringContaining('CREATE TABLE customers')] }),
      ]);
      expect(await appliedMigrations(url, inApp)).toEqual(['1700000000000_customers']);
      expect(await query(url, `SELECT to_regclass('app.pgmigrations') IS NOT NULL AS x`)).toEqual([{ x: true }]);
    } finally {
      await t.provider.delete(name, { recursive: true, terminateConnections: true }).catch(() => undefined);
      await repo.dispose();
    }
  });
});
