/**
 * A pull request's migration that fails with 25001 (CREATE INDEX CONCURRENTLY inside node-pg-migrate's
 * transaction) says why it ran in one and what to write instead. Real histories declare
 * `exports.noTransaction = true`, which node-pg-migrate never reads (only `pgm.noTransaction()`
 * counts), and `.sql` migrations have no way out of the transaction at all: the bare PostgreSQL
 * error told neither.
 */
import { rm } from 'node:fs/promises';
import { parseMigration } from '../../src/migrations/files.js';
import { downTransactionBlockNote, transactionBlockNote } from '../../src/lanes/check/transaction-note.js';
import { checkBranch, checkRepo, commitBranch } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';
import { CheckReport } from '../../src/report/check-report.js';
import { renderCheckMarkdown } from '../../src/report/markdown.js';
import { renderCheckTerminal } from '../../src/report/terminal.js';

const migration = (file: string, content: string) => parseMigration({ file, content });

test("a down that failed in a transaction: up's pgm.noTransaction() does not carry over, wherever down is written", () => {
  const upOnly = (file: string, content: string) => downTransactionBlockNote('25001', migration(file, content));
  const CARRY = 'a call in up does not carry over';
  expect(
    upOnly(
      'migrations/2_i.ts',
      "export async function down(pgm) {\n  pgm.dropIndex('t', 'a', { concurrently: true });\n}\n\nexport async function up(pgm) {\n  pgm.noTransaction();\n  pgm.createIndex('t', 'a', { concurrently: true });\n}\n",
    ),
  ).toContain(CARRY);
  expect(
    upOnly(
      'migrations/2_i.js',
      "module.exports = {\n  up(pgm) { pgm.noTransaction(); pgm.createIndex('t', 'a', { concurrently: true }); },\n  down(pgm) { pgm.dropIndex('t', 'a', { concurrently: true }); },\n};\n",
    ),
  ).toContain(CARRY);
  // Down calls it too: then its pgm.sql() of several statements is the transaction.
  expect(
    upOnly(
      'migrations/2_i.js',
      "exports.up = (pgm) => { pgm.noTransaction(); pgm.createIndex('t', 'a', { concurrently: true }); };\nexports.down = (pgm) => { pgm.noTransaction(); pgm.sql('DROP INDEX CONCURRENTLY t_a_index; DROP INDEX CONCURRENTLY t_b_index;'); };\n",
    ),
  ).toContain('runs as one implicit transaction');
  // Neither does: the general note; a .sql migration's own; and only for 25001.
  expect(
    upOnly('migrations/2_i.js', "exports.down = (pgm) => { pgm.dropIndex('t', 'a', { concurrently: true }); };\n"),
  ).toContain('call pgm.noTransaction() in up (and in down)');
  expect(upOnly('migrations/2_i.sql', '-- Down Migration\nDROP INDEX CONCURRENTLY i;\n')).toContain('cannot opt out');
  expect(downTransactionBlockNote('42P01', migration('migrations/2_i.js', 'exports.down = () => {};'))).toBeUndefined();
});

test('each way into the transaction has its own way out; other failures get no note', () => {
  const sql = migration('migrations/2_i.sql', '-- Up Migration\nCREATE INDEX CONCURRENTLY i ON t (a);\n');
  expect(transactionBlockNote('25001', sql)).toContain('a .sql migration inside a transaction and it cannot opt out');
  // A COMMIT of its own (a psql script's way out) ends node-pg-migrate's transaction, but what follows
  // in the same text is PostgreSQL's implicit one; a PL/pgSQL body's END is no such statement.
  const committed = migration(
    'migrations/2_i.sql',
    '-- Up Migration\nCOMMIT;\nCREATE INDEX CONCURRENTLY i ON t (a);\n\n-- Down Migration\nDROP INDEX i;\n',
  );
  expect(transactionBlockNote('25001', committed)).toContain(
    'PostgreSQL runs the statements after that COMMIT as one implicit transaction',
  );
  const functionBody = migration(
    'migrations/2_i.sql',
    '-- Up Migration\nCREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $fn$\nBEGIN\n  RETURN 1;\nEND;\n$fn$;\n-- COMMIT;\nCREATE INDEX CONCURRENTLY i ON t (a);\n',
  );
  expect(transactionBlockNote('25001', functionBody)).toContain('it cannot opt out');
  const exported = migration(
    'migrations/2_i.js',
    "exports.noTransaction = true;\nexports.up = (pgm) => { pgm.createIndex('t', 'a', { concurrently: true }); };\n",
  );
  expect(transactionBlockNote('25001', exported)).toContain('does not read an exported noTransaction');
  const esm = migration(
    'migrations/2_i.ts',
    "export const noTransaction = true;\nexport function up(pgm) { pgm.createIndex('t', 'a', { concurrently: true }); }\n",
  );
  expect(transactionBlockNote('25001', esm)).toContain('does not read an exported noTransaction');
  const several = migration(
    'migrations/2_i.js',
    "exports.up = (db) => { db.noTransaction(); db.sql('CREATE INDEX CONCURRENTLY i ON t (a); ANALYZE t;'); };\n",
  );
  expect(transactionBlockNote('25001', several)).toContain('a pgm.sql() call of its own');
  const plain = migration(
    'migrations/2_i.js',
    "exports.up = (pgm) => { pgm.createIndex('t', 'a', { concurrently: true }); };\n",
  );
  expect(transactionBlockNote('25001', plain)).toContain('call pgm.noTransaction() in up (and in down)');
  expect(transactionBlockNote('42P07', plain)).toBeUndefined();
  expect(transactionBlockNote('25001', undefined)).toBeUndefined();
});

test("an enum value used in the migration that adds it: node-pg-migrate's transaction holds it, and how to get out", () => {
  const js = migration(
    'migrations/2_archived.js',
    "exports.up = (pgm) => {\n  pgm.addTypeValue('status', 'archived');\n  pgm.sql(\"UPDATE t SET status = 'archived'\");\n};\n",
  );
  expect(transactionBlockNote('55P04', js)).toBe(
    'node-pg-migrate runs each migration inside one transaction, and the value it adds is not committed until that ends: add the value in a migration of its own, before the one that uses it (node-pg-migrate commits each migration before the next), or call pgm.noTransaction() in up',
  );
  const sql = migration(
    'migrations/2_archived.sql',
    "-- Up Migration\nALTER TYPE status ADD VALUE 'archived';\nUPDATE t SET status = 'archived';\n",
  );
  expect(transactionBlockNote('55P04', sql)).toContain('runs a .sql migration inside one transaction');
  const several = migration(
    'migrations/2_archived.js',
    "exports.up = (pgm) => { pgm.noTransaction(); pgm.sql(\"ALTER TYPE status ADD VALUE 'archived'; UPDATE t SET status = 'archived';\"); };\n",
  );
  expect(transactionBlockNote('55P04', several)).toContain(
    'give the ALTER TYPE … ADD VALUE a pgm.sql() call of its own',
  );
});

describe('the migrations stage of a pull request whose concurrent index ran in a transaction', () => {
  let t: TestProvider;
  let dir: string;
  beforeAll(async () => {
    t = await localTestProvider();
    dir = await checkRepo('pr-25001', {
      'migrations/1700000000000_posts.sql':
        '-- Up Migration\nCREATE TABLE posts (id int, author text);\n-- Down Migration\nDROP TABLE posts;\n',
      '.github/consort.yml': 'suite:\n  command: "true"\n',
    });
    await commitBranch(dir, 'exported', {
      'migrations/1700000000001_posts-author.js': [
        'exports.noTransaction = true;',
        '',
        "exports.up = (pgm) => { pgm.createIndex('posts', 'author', { concurrently: true }); };",
        "exports.down = (pgm) => { pgm.dropIndex('posts', 'author', { concurrently: true }); };",
        '',
      ].join('\n'),
    });
    await commitBranch(dir, 'sql', {
      'migrations/1700000000001_posts-author.sql':
        '-- Up Migration\nCREATE INDEX CONCURRENTLY posts_author ON posts (author);\n-- Down Migration\nDROP INDEX CONCURRENTLY posts_author;\n',
    });
  }, 60_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await t.cleanup();
  });

  it('names the exported noTransaction node-pg-migrate does not read', async () => {
    const report = await checkBranch(dir, 'exported', 7, t.provider);
    expect(report.stages.migrations.status).toBe('failed');
    expect(report.stages.migrations.failure?.code).toBe('25001');
    expect(report.stages.migrations.summary).toContain(
      'CREATE INDEX CONCURRENTLY cannot run inside a transaction block (node-pg-migrate does not read an exported noTransaction: call pgm.noTransaction() in up (and in down) instead)',
    );
    // The stage's line clips the summary: the note is the failure's too, shown whole under it.
    const note =
      'node-pg-migrate does not read an exported noTransaction: call pgm.noTransaction() in up (and in down) instead';
    expect(report.stages.migrations.failure?.note).toBe(note);
    expect(renderCheckTerminal(CheckReport.parse(report), { width: 60 }).replace(/\n\s+/g, ' ')).toContain(
      `Note: ${note}`,
    );
    expect(renderCheckMarkdown(CheckReport.parse(report))).toContain('Note: node-pg-migrate does not read an exported');
  }, 120_000);

  it('says a .sql migration cannot leave the transaction', async () => {
    const report = await checkBranch(dir, 'sql', 8, t.provider);
    expect(report.stages.migrations.status).toBe('failed');
    expect(report.stages.migrations.summary).toContain(
      '(node-pg-migrate runs a .sql migration inside a transaction and it cannot opt out: write this one as a JavaScript migration whose up (and down) calls pgm.noTransaction())',
    );
  }, 120_000);
});
