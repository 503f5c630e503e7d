/**
 * Apply what the project's deploy applies: the project's installed node-pg-migrate runs when it
 * has one, and the report says which version ran; the bundled one only when it has none. The
 * "project" here is a directory with its own node_modules/node-pg-migrate (a copy of the package
 * with its version marked), placed where its dependencies still resolve.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runner as bundledRunner } from 'node-pg-migrate';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import { bundledEngine, describeEngine, resolveEngine } from '../../src/migrations/engine.js';
import { applyMigrations } from '../../src/migrations/runner.js';
import { SYSTEM_PG_URL } from '../helpers/servers.js';

const BUNDLED_DIR = path.join(process.cwd(), 'node_modules/node-pg-migrate');

describe('resolveEngine', () => {
  let project: string;
  beforeAll(async () => {
    project = path.join(process.cwd(), 'node_modules/.cache', `consort-engine-${randomBytes(4).toString('hex')}`);
    const pkgDir = path.join(project, 'node_modules/node-pg-migrate');
    await mkdir(path.dirname(pkgDir), { recursive: true });
    await cp(BUNDLED_DIR, pkgDir, { recursive: true });
    const pkg = JSON.parse(await readFile(path.join(pkgDir, 'package.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(path.join(pkgDir, 'package.json'), JSON.stringify({ ...pkg, version: '9.0.0-project.1' }));
    await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'commonjs', dependencies: { 'node-pg-migrate': '9.0.0-project.1' } }));
    await mkdir(path.join(project, 'migrations'));
    await writeFile(path.join(project, 'migrations/1700000000000_orders.js'),
      "exports.up = (pgm) => { pgm.createTable('orders', { id: 'id', email: { type: 'text', notNull: true } }); pgm.createIndex('orders', 'email'); };\n");
  });
  afterAll(async () => {
    await rm(project, { recursive: true, force: true });
  });

  it('uses the bundled one when the project has none, and says so', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'consort-no-npm-'));
    try {
      const engine = await resolveEngine(empty);
      expect(engine).toMatchObject({ source: 'bundled', version: '9.0.0' });
      expect(engine.runner).toBe(bundledRunner);
      expect(describeEngine(engine)).toBe('node-pg-migrate 9.0.0 (bundled with Consort)');
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it("runs the project's own copy and reports its version", async () => {
    const engine = await resolveEngine(project);
    expect(engine).toMatchObject({ source: 'project', version: '9.0.0-project.1', dir: path.join(project, 'node_modules/node-pg-migrate') });
    expect(engine.runner).not.toBe((await bundledEngine()).runner);
    expect(describeEngine(engine)).toBe("node-pg-migrate 9.0.0-project.1 (the project's)");

    const db = `engine_${randomBytes(6).toString('hex')}`;
    await withClient(SYSTEM_PG_URL, (a) => a.query(`CREATE DATABASE ${quoteIdent(db)} TEMPLATE template0`));
    try {
      const url = withDatabase(SYSTEM_PG_URL, db);
      const r = await applyMigrations({ databaseUrl: url, dir: path.join(project, 'migrations'), relativeTo: project, direction: 'up', migrationsTable: 'pgmigrations', engine });
      expect(r.ok).toBe(true);
      // The capture works through the project's runner too: lint and the report see the SQL it sent.
      expect(r.applied.map((m) => m.sql.some((s) => /CREATE INDEX/.test(s)))).toEqual([true]);
      const rows = await withClient(url, async (c) => (await c.query<{ name: string }>('SELECT name FROM pgmigrations')).rows);
      expect(rows).toEqual([{ name: '1700000000000_orders' }]);
    } finally {
      await withClient(SYSTEM_PG_URL, (a) => a.query(`DROP DATABASE IF EXISTS ${quoteIdent(db)} WITH (FORCE)`));
    }
  });
});
