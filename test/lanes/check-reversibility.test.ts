/**
 * Reversibility verdicts on a realistic CommonJS history (test/fixtures/histories/shop-cjs):
 * a SQL migration that reverses, a JS one whose down leaves `uuid-ossp` installed (so its up then
 * cannot run again), and a newest backfill declared irreversible (`exports.down = false`, in a
 * file name with a space). Against the server at 127.0.0.1:5432; "reset" recreates the database,
 * as the provider resets the throwaway branch to the baseline.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import { readMigrationSet } from '../../src/migrations/files.js';
import { proveReversibility } from '../../src/lanes/check/reversibility.js';
import { nodePgMigrate } from '../../src/migrations/runner.js';
import { pgSchemaReader } from '../../src/schema/reader.js';
import { applyOneByOne, reversibilityOutcome } from '../../src/lanes/check/reversibility-stage.js';
import { diffSchemas, isEmptyDiff } from '../../src/schema/diff.js';
import type { ApplyOptions } from '../../src/ports/migration-runner.js';
import { SYSTEM_PG_URL } from '../helpers/servers.js';

/** A node-pg-migrate SQL migration. */
const sql = (up: string, down: string) => `-- Up Migration\n${up}\n\n-- Down Migration\n${down}\n`;
/** A scratch folder with an empty migrations/ in it. */
async function migrationsDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-rev-'));
  await mkdir(path.join(dir, 'migrations'));
  return dir;
}
/** `fn` in a fresh folder holding an empty migrations/, removed afterwards. */
async function inMigrationsDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await migrationsDir();
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
/** migrations/<name>.sql in `dir`. */
const writeSql = (dir: string, name: string, up: string, down: string) =>
  writeFile(path.join(dir, 'migrations', `${name}.sql`), sql(up, down));

const HISTORY = path.join(process.cwd(), 'test/fixtures/histories/shop-cjs');

async function withScratchDatabase<T>(fn: (url: string, reset: () => Promise<void>) => Promise<T>): Promise<T> {
  const name = `rev_${randomBytes(6).toString('hex')}`;
  const create = () =>
    withClient(SYSTEM_PG_URL, (a) => a.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE template0`));
  const drop = () =>
    withClient(SYSTEM_PG_URL, (a) => a.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
  await create();
  try {
    return await fn(withDatabase(SYSTEM_PG_URL, name), async () => {
      await drop();
      await create();
    });
  } finally {
    await drop();
  }
}

async function prove(withReset: boolean, history = HISTORY) {
  const migrations = await readMigrationSet(path.join(history, 'migrations'), { relativeTo: history });
  if (history === HISTORY)
    expect(migrations.map((m) => m.name)).toEqual([
      '1700000000000_create-orders',
      '1700000000001_public-ids',
      '1700000000002_backfill lowercase emails',
    ]);
  let resets = 0;
  const result = await withScratchDatabase((url, reset) =>
    proveReversibility({
      url,
      migrations,
      placement: { migrationsTable: 'pgmigrations' },
      headDir: { dir: path.join(history, 'migrations'), relativeTo: history },
      schemas: pgSchemaReader,
      runner: nodePgMigrate,
      ...(withReset
        ? {
            reset: async () => {
              resets++;
              await reset();
            },
          }
        : {}),
    }),
  );
  return { ...result, resets };
}

describe('reversibility verdicts on a CommonJS history', () => {
  it('keeps not-restored with its diff over the failing re-apply, reports the declared one, still checks the older ones', async () => {
    const result = await prove(true);
    const [orders, ids, backfill] = result.migrations;
    expect(backfill).toMatchObject({
      verdict: 'irreversible',
      file: 'migrations/1700000000002_backfill lowercase emails.js',
    });
    // The diff that explains it, and the re-apply failure after it: neither hides the other.
    expect(ids!.verdict).toBe('not-restored');
    expect(ids!.detail).toContain('+ extension "uuid-ossp"');
    expect(ids!.detail).toMatch(/up after down failed: .*uuid-ossp.*already exists/);
    // Checked on a fresh copy without the irreversible one; the extension left by the newer down is not blamed on it.
    expect(orders).toMatchObject({ verdict: 'reversible' });

    const outcome = reversibilityOutcome(result.migrations, false);
    expect(outcome.status).toBe('failed');
    expect(outcome.summary).toBe(
      '1 migration does not reverse: 1700000000001_public-ids (not-restored); 1 declared irreversible: 1700000000002_backfill lowercase emails',
    );
  });

  it('needs no fresh copy for a newest migration declared irreversible: the older ones are proven before it', async () => {
    const withReset = await prove(true);
    expect(withReset.resets).toBe(0);
    const result = await prove(false);
    expect(result.migrations).toEqual(withReset.migrations);
    expect(result.migrations.map((m) => m.verdict)).toEqual(['reversible', 'not-restored', 'irreversible']);
    // Two whole proofs: 16 s alone at load 4, past jest's 60 s default at load 12 (2026-12-02).
  }, 180_000);

  it('without a way to reset, reports the migrations a failing down kept from being checked as not checked, not as failures', async () => {
    await inMigrationsDir(async (dir) => {
      await writeSql(dir, '1700000000000_create-notes', 'CREATE TABLE notes (id int);', 'DROP TABLE notes;');
      await writeSql(
        dir,
        '1700000000001_add-body',
        'ALTER TABLE notes ADD COLUMN body text;',
        'ALTER TABLE notes DROP COLUMN no_such_column;',
      );
      const result = await prove(false, dir);
      expect(result.migrations.map((m) => m.verdict)).toEqual(['not-checked', 'down-failed']);
      expect(result.migrations[0]!.detail).toBe('not reached: a newer migration in this PR cannot be taken down');
      const outcome = reversibilityOutcome(result.migrations, false);
      expect(outcome.status).toBe('failed');
      expect(outcome.summary).toMatch(
        /^1 migration does not reverse: 1700000000001_add-body \(down-failed\); 1 not checked: 1700000000000_create-notes/,
      );
      // With a way to reset, the older one is proven on a fresh copy.
      const reset = await prove(true, dir);
      expect(reset.resets).toBe(1);
      expect(reset.migrations.map((m) => m.verdict)).toEqual(['reversible', 'down-failed']);
    });
  });
});

describe('a SQL migration without a down', () => {
  it('says which: no `-- Down Migration` section (node-pg-migrate refuses the rollback), or one with no statement', async () => {
    await inMigrationsDir(async (dir) => {
      await writeSql(dir, '1700000000000_a', 'CREATE TABLE a (id int);', 'DROP TABLE a;');
      await writeFile(
        path.join(dir, 'migrations', '1700000000001_b.sql'),
        '-- Up Migration\nCREATE TABLE b (id int);\n',
      );
      await writeSql(dir, '1700000000002_c', 'CREATE TABLE c (id int);', '-- nothing yet');
      const migrations = await readMigrationSet(path.join(dir, 'migrations'), { relativeTo: dir });
      const result = await withScratchDatabase((url) =>
        proveReversibility({
          url,
          migrations,
          placement: { migrationsTable: 'pgmigrations' },
          headDir: { dir: path.join(dir, 'migrations'), relativeTo: dir },
          schemas: pgSchemaReader,
          runner: nodePgMigrate,
        }),
      );
      expect(result.migrations.map((m) => [m.name, m.verdict, m.detail])).toEqual([
        ['1700000000000_a', 'reversible', undefined],
        [
          '1700000000001_b',
          'missing-down',
          'it has no `-- Down Migration` section, so node-pg-migrate refuses to roll it back; add one, or if that is intended declare it irreversible (`-- consort: irreversible`)',
        ],
        [
          '1700000000002_c',
          'missing-down',
          'its `-- Down Migration` section holds no statement; write the down, or if the migration cannot go down declare it irreversible (`-- consort: irreversible`)',
        ],
      ]);
    });
  });
});

describe('a JavaScript down that throws', () => {
  it('is a failed down that says where it threw and the declaration node-pg-migrate has for an irreversible one', async () => {
    await inMigrationsDir(async (dir) => {
      await writeSql(dir, '1700000000000_a', "CREATE TYPE mood AS ENUM ('ok');", 'DROP TYPE mood;');
      await writeFile(
        path.join(dir, 'migrations', '1700000000001_mood-meh.js'),
        [
          'exports.up = (pgm) => {',
          "  pgm.addTypeValue('mood', 'meh');",
          '};',
          'exports.down = () => {',
          "  throw new Error('Postgres cannot remove a value from an enum');",
          '};',
          '',
        ].join('\n'),
      );
      const result = await prove(true, dir);
      expect(result.migrations.map((m) => [m.name, m.verdict, m.detail])).toEqual([
        ['1700000000000_a', 'reversible', undefined],
        [
          '1700000000001_mood-meh',
          'down-failed',
          'its down threw at migrations/1700000000001_mood-meh.js:5: Postgres cannot remove a value from an enum. If the migration is meant to be irreversible, declare it so (`exports.down = false`) instead of throwing: the check then reports it as declared irreversible, and node-pg-migrate refuses to roll back past it',
        ],
      ]);
    });
  });
});

describe('a JavaScript down node-pg-migrate cannot infer', () => {
  it("names the file's call, not node-pg-migrate's internal name for it, and what to write", async () => {
    await inMigrationsDir(async (dir) => {
      await writeSql(dir, '1700000000000_a', 'CREATE TABLE orders (id int, owner text);', 'DROP TABLE orders;');
      await writeFile(
        path.join(dir, 'migrations', '1700000000001_orders-rls.js'),
        [
          'exports.up = (pgm) => {',
          "  pgm.alterTable('orders', { levelSecurity: 'ENABLE' });",
          "  pgm.createPolicy('orders', 'orders_owner', { using: 'owner = current_user' });",
          '};',
          '',
        ].join('\n'),
      );
      const result = await prove(true, dir);
      expect(result.migrations.map((m) => [m.name, m.verdict, m.detail])).toEqual([
        ['1700000000000_a', 'reversible', undefined],
        [
          '1700000000001_orders-rls',
          'missing-down',
          'node-pg-migrate cannot infer the down of pgm.alterTable() (node-pg-migrate calls it "pgm._alter()"): write a down that undoes the up, or if it cannot be undone declare it irreversible (`exports.down = false`)',
        ],
      ]);
    });
  });
});

describe('the re-apply after the downs', () => {
  it('is one request, and names the migration whose re-apply failed (data its down left behind)', async () => {
    await inMigrationsDir(async (dir) => {
      await writeSql(dir, '1700000000000_a', 'CREATE TABLE a (id int);', 'DROP TABLE a;');
      // Its down restores the schema but not the row its up wrote into a table from before the PR.
      await writeSql(
        dir,
        '1700000000001_b',
        "CREATE TABLE b (id int);\nINSERT INTO seen VALUES ('b');",
        'DROP TABLE b;',
      );
      await writeSql(dir, '1700000000002_c', 'CREATE TABLE c (id int);', 'DROP TABLE c;');
      const migrations = await readMigrationSet(path.join(dir, 'migrations'), { relativeTo: dir });
      const requests: { direction: string; count?: number }[] = [];
      const result = await withScratchDatabase(async (url) => {
        await withClient(url, (c) => c.query('CREATE TABLE seen (k text PRIMARY KEY)'));
        return proveReversibility({
          url,
          migrations,
          placement: { migrationsTable: 'pgmigrations' },
          headDir: { dir: path.join(dir, 'migrations'), relativeTo: dir },
          schemas: pgSchemaReader,
          runner: {
            apply: (options) => {
              requests.push({ direction: options.direction, ...(options.count ? { count: options.count } : {}) });
              return nodePgMigrate.apply(options);
            },
          },
        });
      });
      expect(result.migrations.map((m) => m.verdict)).toEqual(['reversible', 'reapply-failed', 'reversible']);
      expect(result.migrations[1]!.detail).toMatch(/^up after down failed: .*duplicate key/);
      // Up one at a time (a read after each), down one at a time, then up again all at once.
      expect(requests.map((r) => `${r.direction}${r.count ?? ''}`)).toEqual([
        'up1',
        'up1',
        'up1',
        'down1',
        'down1',
        'down1',
        'up3',
      ]);
    });
  });
});

/** The migrations applied one at a time (as the PR branch's migrations stage does), then proven from there. */
async function proveOnBranch(history: string, prepare?: (url: string) => Promise<void>) {
  const migrations = await readMigrationSet(path.join(history, 'migrations'), { relativeTo: history });
  const session = nodePgMigrate.open();
  const requests: string[] = [];
  let resets = 0;
  try {
    return await withScratchDatabase(async (url, reset) => {
      await prepare?.(url);
      const snapshot = () => pgSchemaReader.snapshot(url, { ignoreTables: ['pgmigrations'] });
      const headDir = { dir: path.join(history, 'migrations'), relativeTo: history };
      const stepped = await applyOneByOne({
        runner: session,
        options: { databaseUrl: url, ...headDir, migrationsTable: 'pgmigrations' },
        count: migrations.length,
        before: await snapshot(),
        snapshot,
      });
      expect(stepped.result.ok).toBe(true);
      expect(stepped.result.applied.map((m) => m.name)).toEqual(migrations.map((m) => m.name));
      expect(stepped.schemas).toHaveLength(migrations.length + 1);
      const result = await proveReversibility({
        url,
        migrations,
        placement: { migrationsTable: 'pgmigrations' },
        headDir,
        schemas: pgSchemaReader,
        applied: stepped.schemas,
        runner: {
          apply: (options: ApplyOptions, how?: { keep?: boolean; first?: boolean }) => {
            requests.push(`${options.direction}${options.count ?? ''}`);
            return session.apply(options, how);
          },
          release: (u) => session.release!(u),
        },
        reset: async () => {
          resets++;
          await reset();
          await prepare?.(url);
        },
      });
      // The branch holds every migration again, with the schema the first pass gave.
      const ran = await withClient(url, (c) => c.query<{ name: string }>('SELECT name FROM pgmigrations ORDER BY id'));
      const now = await snapshot();
      return {
        ...result,
        resets,
        requests,
        ran: ran.rows.map((r) => r.name),
        restored: isEmptyDiff(diffSchemas(stepped.schemas[migrations.length]!, now)),
      };
    });
  } finally {
    await session.close();
  }
}

describe('on a branch that holds the migrations already (the PR branch)', () => {
  it('goes down from there and up again, with no first ups of its own, and leaves them applied', async () => {
    await inMigrationsDir(async (dir) => {
      await writeSql(dir, '1700000000000_a', 'CREATE TABLE a (id int);', 'DROP TABLE a;');
      await writeSql(dir, '1700000000001_b', 'ALTER TABLE a ADD COLUMN b text;', 'ALTER TABLE a DROP COLUMN b;');
      // Its down forgets the sequence: the schema after it differs from before its up.
      await writeSql(dir, '1700000000002_c', 'CREATE TABLE c (id int);\nCREATE SEQUENCE c_ids;', 'DROP TABLE c;');
      const r = await proveOnBranch(dir);
      expect(r.migrations.map((m) => m.verdict)).toEqual(['reversible', 'reversible', 'not-restored']);
      expect(r.migrations[2]!.detail).toContain('c_ids');
      expect(r.migrations[2]!.detail).toMatch(/up after down failed: .*c_ids.*already exists/);
      // Down from the top, up again in one request (which fails on the sequence left behind), then,
      // on the branch reset to the baseline, the migrations applied again in one request.
      expect(r.requests).toEqual(['down1', 'down1', 'down1', 'up3', 'up3']);
      expect(r.resets).toBe(1);
      expect(r.ran).toEqual(['1700000000000_a', '1700000000001_b', '1700000000002_c']);
      expect(r.restored).toBe(true);
    });
  });

  it('needs nothing more when they reverse: a down each and one up', async () => {
    await inMigrationsDir(async (dir) => {
      await writeSql(dir, '1700000000000_a', 'CREATE TABLE a (id int);', 'DROP TABLE a;');
      await writeSql(dir, '1700000000001_b', 'ALTER TABLE a ADD COLUMN b text;', 'ALTER TABLE a DROP COLUMN b;');
      const r = await proveOnBranch(dir);
      expect(r.migrations.map((m) => m.verdict)).toEqual(['reversible', 'reversible']);
      expect(r.requests).toEqual(['down1', 'down1', 'up2']);
      expect([r.resets, r.restored]).toEqual([0, true]);
      expect(r.ran).toEqual(['1700000000000_a', '1700000000001_b']);
    });
  });

  it("names a down's DROP … IF EXISTS that dropped nothing (dropIndex given the name as its columns)", async () => {
    await inMigrationsDir(async (dir) => {
      await writeSql(dir, '1700000000000_a', 'CREATE TABLE a (id int, entity text);', 'DROP TABLE a;');
      // What node-pg-migrate's dropIndex('a', 'a_entity_idx', { ifExists: true }) sends: the name
      // taken as a column, so the index it drops is one that never existed.
      await writeSql(
        dir,
        '1700000000001_b',
        'CREATE INDEX a_entity_idx ON a (entity);',
        'DROP INDEX IF EXISTS "a_a_entity_idx_index";\nDROP TABLE IF EXISTS a;\nCREATE TABLE a (id int, entity text);\nCREATE INDEX a_entity_idx ON a (entity);',
      );
      const r = await proveOnBranch(dir);
      expect(r.migrations.map((m) => m.verdict)).toEqual(['reversible', 'not-restored']);
      const detail = r.migrations[1]!.detail!;
      expect(detail).toMatch(/^after down, the schema differs from before up:\n\+ index public\.a_entity_idx/);
      expect(detail).toContain(
        `its down's DROP INDEX IF EXISTS "a_a_entity_idx_index" dropped nothing: there was no index of that name`,
      );
      expect(detail).toContain('pass { name }');
      // The table it dropped existed: only the no-op is named.
      expect(detail).not.toContain('DROP TABLE');
    });
  });

  it('gives the verdicts a fresh copy gives (a failing down, a declared irreversible one) and puts the branch back', async () => {
    await inMigrationsDir(async (dir) => {
      await writeSql(dir, '1700000000000_create-notes', 'CREATE TABLE notes (id int);', 'DROP TABLE notes;');
      await writeSql(
        dir,
        '1700000000001_add-body',
        'ALTER TABLE notes ADD COLUMN body text;',
        'ALTER TABLE notes DROP COLUMN no_such_column;',
      );
      const failing = await proveOnBranch(dir);
      expect(failing.migrations.map((m) => m.verdict)).toEqual(['reversible', 'down-failed']);
      expect([failing.resets, failing.restored]).toEqual([1, true]);
      expect(failing.ran).toEqual(['1700000000000_create-notes', '1700000000001_add-body']);
    });
    // shop-cjs: a not-restored JS migration whose re-apply fails, under a newest one declared irreversible.
    const shop = await proveOnBranch(HISTORY);
    const fresh = await prove(true);
    expect(shop.migrations).toEqual(fresh.migrations);
    expect(shop.restored).toBe(true);
    expect(shop.ran).toHaveLength(3);
  }, 180_000);
});

describe('reversibilityOutcome', () => {
  const m = (name: string, verdict: Parameters<typeof reversibilityOutcome>[0][number]['verdict']) => ({
    name,
    file: `migrations/${name}.js`,
    verdict,
  });

  it('passes a declared-irreversible newest migration when the older ones reverse', () => {
    const o = reversibilityOutcome([m('1_a', 'reversible'), m('2_b', 'irreversible')], false);
    expect(o).toMatchObject({
      status: 'passed',
      summary: '1 migration reverses cleanly; 1 declared irreversible: 2_b',
    });
  });

  it('fails it when the configuration requires downs', () => {
    const o = reversibilityOutcome([m('1_a', 'reversible'), m('2_b', 'irreversible')], true);
    expect(o).toMatchObject({ status: 'failed' });
    expect(o.summary).toMatch(
      /^1 migration does not reverse: 2_b \(irreversible\); 1 declared irreversible \(reversibility.requireDown: true\)/,
    );
  });

  it('counts only checked-and-failed migrations as not reversing', () => {
    const o = reversibilityOutcome([m('1_a', 'not-checked'), m('2_b', 'down-failed'), m('3_c', 'missing-down')], false);
    expect(o.summary).toMatch(
      /^2 migrations do not reverse: 2_b \(down-failed\), 3_c \(missing-down\); 1 not checked: 1_a/,
    );
  });
});
