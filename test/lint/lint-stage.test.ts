/**
 * The lint stage on a realistic CommonJS history (test/fixtures/histories/lint-cjs), with real
 * squawk and real PostgreSQL: rules about locking live tables do not block on a table or
 * materialized view the PR creates (notes that say why), NOT VALID advice for a PRIMARY KEY does
 * not block, the same rules on a live table still do, and findings in a JS migration land on
 * the `pgm.*` call that sent the statement, never on the `eslint-disable` line.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConsortConfigSchema } from '../../src/config/schema.js';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import { lintStage } from '../../src/lanes/check/lint-stage.js';
import { squawkLinter } from '../../src/lint/squawk.js';
import { readRelations } from '../../src/lint/context.js';
import { readMigrationSet } from '../../src/migrations/files.js';
import { applyMigrations } from '../../src/migrations/runner.js';
import { SYSTEM_PG_URL } from '../helpers/servers.js';

const HISTORY = path.join(process.cwd(), 'test/fixtures/histories/lint-cjs');
const JS = 'migrations/1700000000001_audit-and-reporting.js';
const SQL = 'migrations/1700000000002_backfill.sql';

async function lintHistory(history = HISTORY) {
  const DIR = path.join(history, 'migrations');
  const name = `lint_${randomBytes(6).toString('hex')}`;
  await withClient(SYSTEM_PG_URL, (a) => a.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE template0`));
  try {
    const url = withDatabase(SYSTEM_PG_URL, name);
    const all = await readMigrationSet(DIR, { relativeTo: history });
    // The base: the first migration only.
    const base = await applyMigrations({
      databaseUrl: url,
      dir: DIR,
      relativeTo: history,
      direction: 'up',
      count: 1,
      migrationsTable: 'pgmigrations',
    });
    expect(base.ok).toBe(true);
    const relations = await withClient(url, readRelations);
    const pr = await applyMigrations({
      databaseUrl: url,
      dir: DIR,
      relativeTo: history,
      direction: 'up',
      migrationsTable: 'pgmigrations',
    });
    if (!pr.ok) throw new Error(pr.failed.error.message);
    const version = await withClient(
      url,
      async (db) => (await db.query<{ v: string }>('SHOW server_version')).rows[0]!.v,
    );
    return lintStage(squawkLinter, ConsortConfigSchema.parse({}), all.slice(1), pr.applied, version, relations);
  } finally {
    await withClient(SYSTEM_PG_URL, (a) => a.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
  }
}

/** SQL migrations (up sections; the first one is the base) in a folder of their own, linted as lintHistory does. */
async function lintSql(files: Record<string, string>) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-lint-sql-'));
  try {
    await mkdir(path.join(dir, 'migrations'));
    for (const [file, sql] of Object.entries(files))
      await writeFile(path.join(dir, file), `-- Up Migration\n${sql}\n\n-- Down Migration\nSELECT 1;\n`);
    return await lintHistory(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('lint stage on objects the PR creates', () => {
  let result: Awaited<ReturnType<typeof lintHistory>>;
  beforeAll(async () => {
    result = await lintHistory();
  }, 120_000);

  const at = (file: string, rule: string) => result.findings.filter((f) => f.file === file && f.rule === rule);

  it('notes, not blocks, a serial primary key added to a table created a few lines earlier', () => {
    const serial = at(JS, 'adding-serial-primary-key-field');
    expect(serial).toHaveLength(1);
    expect(serial[0]).toMatchObject({
      blocking: false,
      line: 10,
      note: 'audit_log does not exist on the base: this PR creates it, so no live table is locked',
    });
    const sqlSerial = at(SQL, 'adding-serial-primary-key-field');
    expect(sqlSerial).toEqual([
      expect.objectContaining({
        line: 3,
        blocking: false,
        note: expect.stringContaining('refunds does not exist on the base'),
      }),
    ]);
  });

  it('notes the index on a materialized view created in the same migration', () => {
    const index = at(JS, 'require-concurrent-index-creation').find((f) => f.line === 16);
    expect(index).toMatchObject({
      blocking: false,
      level: 'warning',
      note: expect.stringContaining('order_totals does not exist on the base'),
    });
  });

  it('still blocks the same rule on the live table, pointing at its pgm call', () => {
    const live = at(JS, 'require-concurrent-index-creation').find((f) => f.line === 19);
    expect(live).toMatchObject({ blocking: true, level: 'error' });
    expect(live!.note).toBeUndefined();
    expect(at(JS, 'require-concurrent-index-creation')).toHaveLength(2);
    expect(result.status).toBe('failed');
  });

  it('does not block NOT VALID advice for a UNIQUE constraint, which Postgres cannot take', () => {
    const notValid = at(JS, 'constraint-missing-not-valid');
    expect(notValid).toEqual([
      expect.objectContaining({
        line: 20,
        blocking: false,
        note: expect.stringContaining('does not accept NOT VALID on a UNIQUE or PRIMARY KEY'),
      }),
    ]);
    // The lock the UNIQUE constraint takes on the live table is still reported, and blocks.
    expect(at(JS, 'disallowed-unique-constraint')).toEqual([expect.objectContaining({ line: 20, blocking: true })]);
  });

  it('never puts a JS finding on the eslint-disable line or between calls', () => {
    const jsLines = result.findings.filter((f) => f.file === JS).map((f) => f.line);
    expect(jsLines.length).toBeGreaterThan(0);
    const callLines = [6, 10, 13, 15, 16, 19, 20];
    for (const line of jsLines) expect(callLines).toContain(line);
  });

  it('in SQL: a CHECK on a live table without NOT VALID still blocks, at its line', () => {
    expect(at(SQL, 'constraint-missing-not-valid')).toEqual([expect.objectContaining({ line: 4, blocking: true })]);
    expect(result.summary).toMatch(/, 4 notes; \d+ blocking$/);
  });
});

describe('timeout advice on a migration that locks only what it creates', () => {
  // squawk asks for lock_timeout/statement_timeout once per migration, at its first statement that
  // takes a lock. Building a new table locks nothing anyone uses yet; a later statement on a live
  // table (or a foreign key to one, which locks it) keeps the advice.
  let result: Awaited<ReturnType<typeof lintHistory>>;
  const NEW = 'migrations/1700000000001_invoices.sql';
  const FK = 'migrations/1700000000002_refunds.sql';
  beforeAll(async () => {
    result = await lintSql({
      'migrations/1700000000000_orders.sql': 'CREATE TABLE orders (id bigint PRIMARY KEY);\n',
      [NEW]: [
        'CREATE TABLE invoices (id bigint NOT NULL, total numeric NOT NULL);',
        'ALTER TABLE invoices ADD CONSTRAINT invoices_pkey PRIMARY KEY (id);',
        'CREATE INDEX invoices_total ON invoices (total);',
        "COMMENT ON COLUMN invoices.total IS 'in cents';",
        'INSERT INTO invoices VALUES (1, 0);',
      ].join('\n'),
      [FK]: [
        'CREATE TABLE refunds (id bigint PRIMARY KEY, order_id bigint NOT NULL);',
        'ALTER TABLE refunds ADD CONSTRAINT refunds_order FOREIGN KEY (order_id) REFERENCES orders (id);',
      ].join('\n'),
    });
  }, 120_000);

  const timeouts = (file: string) => result.findings.filter((f) => f.file === file && /timeout/.test(f.rule));

  it('notes it when every statement that takes a lock works on tables the PR creates', () => {
    const found = timeouts(NEW);
    expect(found.map((f) => f.rule).sort()).toEqual(['require-lock-timeout', 'require-statement-timeout']);
    for (const f of found)
      expect(f).toMatchObject({
        blocking: false,
        note: expect.stringMatching(/works on invoices, which does not exist on the base: nothing live waits/),
      });
  });

  it('keeps it when a foreign key locks a live table', () => {
    const found = timeouts(FK);
    expect(found).toHaveLength(2);
    for (const f of found) expect(f.note).toBeUndefined();
  });
});

describe('an index on a materialized view of the base', () => {
  // Nothing writes a materialized view's rows: squawk's "table updates are blocked" would send a
  // reader looking for writers. What waits for the index is the view's REFRESH.
  let result: Awaited<ReturnType<typeof lintHistory>>;
  const INDEX = 'migrations/1700000000001_totals-index.sql';
  beforeAll(async () => {
    result = await lintSql({
      'migrations/1700000000000_totals.sql': [
        'CREATE TABLE orders (id bigint PRIMARY KEY, total numeric NOT NULL);',
        'CREATE MATERIALIZED VIEW order_totals AS SELECT id, total FROM orders;',
      ].join('\n'),
      [INDEX]: [
        'CREATE UNIQUE INDEX order_totals_id ON order_totals (id);',
        'CREATE INDEX orders_total ON orders (total);',
      ].join('\n'),
    });
  }, 120_000);

  it('says REFRESH waits, not writes, and still blocks; the table keeps squawk’s words', () => {
    const found = result.findings.filter((f) => f.file === INDEX && f.rule === 'require-concurrent-index-creation');
    expect(found).toEqual([
      expect.objectContaining({
        line: 2,
        blocking: true,
        message: expect.stringMatching(/^During normal index creation on materialized view order_totals, REFRESH/),
      }),
      expect.objectContaining({ line: 3, blocking: true, message: expect.stringMatching(/table updates are blocked/) }),
    ]);
    expect(found[0]!.note).toBeUndefined();
  });
});

/** Migrations (the first one is the base) in a history of their own, linted as lintHistory does. */
async function lintFiles(files: Record<string, string>) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-lint-files-'));
  try {
    await mkdir(path.join(dir, 'migrations'));
    for (const [file, text] of Object.entries(files)) await writeFile(path.join(dir, file), text);
    return await lintHistory(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('one rule reported several times on one line', () => {
  const BASE = 'migrations/1700000000000_base.sql';
  const JS_T = 'migrations/1700000000001_tables.js';
  const SQL_T = 'migrations/1700000000002_more.sql';
  let result: Awaited<ReturnType<typeof lintHistory>>;
  beforeAll(async () => {
    result = await lintFiles({
      [BASE]: '-- Up Migration\nCREATE TABLE base_t (id bigint PRIMARY KEY);\n-- Down Migration\nDROP TABLE base_t;\n',
      [JS_T]: [
        'exports.up = (pgm) => {',
        "  pgm.createTable('t', { a: 'integer', b: 'integer', c: 'text' });",
        "  for (const name of ['u1', 'u2']) pgm.createTable(name, { id: 'integer' });",
        "  pgm.addColumns('base_t', { x: 'integer', y: 'integer' });",
        "  pgm.createTable('q', { a: 'integer', s: { type: 'text', default: 'x;y' }, b: 'integer' });",
        '};',
        '',
      ].join('\n'),
      [SQL_T]: [
        '-- Up Migration',
        'CREATE TABLE s (a int, "B ""q""" int, c bigint);',
        'ALTER TABLE base_t ADD COLUMN m int NOT NULL, ADD COLUMN n int NOT NULL;',
        'CREATE TABLE p1 (x int); CREATE TABLE p2 (x int);',
        '-- Down Migration',
        'SELECT 1;',
        '',
      ].join('\n'),
    });
  }, 120_000);

  const at = (file: string, line: number, rule: string) =>
    result.findings.filter((f) => f.file === file && f.line === line && f.rule === rule);

  it('merges one statement’s repeats into one finding naming each column (JS)', () => {
    expect(at(JS_T, 2, 'prefer-bigint-over-int')).toEqual([
      expect.objectContaining({
        objects: [
          { kind: 'column', name: 'a' },
          { kind: 'column', name: 'b' },
        ],
        message: expect.stringMatching(/limit\. \(columns `a`, `b`\)$/),
      }),
    ]);
    expect(at(JS_T, 4, 'prefer-bigint-over-int')).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/\(columns `x`, `y`\)$/) }),
    ]);
    // A `;` in the statement's text (a default) does not split it.
    expect(at(JS_T, 5, 'prefer-bigint-over-int')).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/\(columns `a`, `b`\)$/) }),
    ]);
  });

  it('keeps apart the same advice about different statements from one line, naming each table', () => {
    const looped = at(JS_T, 3, 'prefer-bigint-over-int');
    expect(looped.map((f) => f.objects)).toEqual([
      [
        { kind: 'table', name: 'u1' },
        { kind: 'column', name: 'id' },
      ],
      [
        { kind: 'table', name: 'u2' },
        { kind: 'column', name: 'id' },
      ],
    ]);
    expect(looped[0]!.message).toMatch(/\(table `u1`, column `id`\)$/);
  });

  it('merges and names columns on one SQL line, quoted names unquoted, at the first one’s column', () => {
    expect(at(SQL_T, 2, 'prefer-bigint-over-int')).toEqual([
      expect.objectContaining({
        column: 19,
        objects: [
          { kind: 'column', name: 'a' },
          { kind: 'column', name: 'B "q"' },
        ],
        message: expect.stringMatching(/\(columns `a`, `B "q"`\)$/),
      }),
    ]);
    const required = at(SQL_T, 3, 'adding-required-field');
    expect(required).toEqual([
      expect.objectContaining({
        blocking: true,
        objects: [
          { kind: 'column', name: 'm' },
          { kind: 'column', name: 'n' },
        ],
      }),
    ]);
  });

  it('keeps apart two statements on one SQL line, naming each table', () => {
    expect(at(SQL_T, 4, 'prefer-bigint-over-int').map((f) => [f.column, f.message.replace(/^.*limit\. /, '')])).toEqual(
      [
        [20, '(table `p1`, column `x`)'],
        [45, '(table `p2`, column `x`)'],
      ],
    );
  });

  it('leaves a statement-wide finding alone: no objects, squawk’s message', () => {
    const timeout = at(SQL_T, 3, 'require-lock-timeout');
    expect(timeout).toHaveLength(1);
    expect(timeout[0]!.objects).toBeUndefined();
    expect(timeout[0]!.message).toBe(
      'Missing `set lock_timeout` before potentially slow ACCESS EXCLUSIVE lock operations',
    );
  });
});

describe("a .sql migration's own transaction statements, which node-pg-migrate's transaction surrounds", () => {
  it("does not call the BEGIN after a psql script's COMMIT uncommitted: node-pg-migrate's COMMIT ends it", async () => {
    // `COMMIT; BEGIN;` to use the enum value the file adds: the COMMIT does end node-pg-migrate's
    // transaction early (squawk's transaction-nesting says so), but the BEGIN's transaction is the
    // one node-pg-migrate commits with the migration's record.
    const SQL_E = 'migrations/1700000000001_status-blocked.sql';
    const result = await lintSql({
      'migrations/1700000000000_cards.sql':
        "CREATE TYPE card_status AS ENUM ('todo', 'done');\nCREATE TABLE cards (id bigint PRIMARY KEY, status card_status NOT NULL);",
      [SQL_E]:
        "ALTER TYPE card_status ADD VALUE 'blocked';\nCOMMIT;\nBEGIN;\nUPDATE cards SET status = 'blocked' WHERE id < 0;",
    });
    const rules = result.findings.filter((f) => f.file === SQL_E).map((f) => [f.line, f.rule]);
    expect(rules).toContainEqual([3, 'transaction-nesting']);
    expect(rules).not.toContainEqual([4, 'ban-uncommitted-transaction']);
    expect(result.findings.map((f) => f.rule)).not.toContain('ban-uncommitted-transaction');
  });
});
