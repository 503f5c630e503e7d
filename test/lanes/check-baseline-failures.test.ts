/**
 * When base's own migrations do not apply to the parent, the baseline stage says why in one line
 * and what to do about that cause: a migration that cannot load (a package not installed) is an
 * install to do, not a broken parent; a statement Postgres rejects is named with its file and
 * statement, as the migrations stage names a PR's; `--rebuild-baseline` is offered only when the
 * parent holds something base's migrations may have met. Stack traces go to the report's JSON
 * (`stages.baseline.failure`), never to the summary.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { baseFailure, recordedElsewhereMessage, withHint } from '../../src/lanes/check/baseline.js';
import { migrationSetFromEntries } from '../../src/migrations/files.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';
import { checkAgainstMain, isolatedGit } from '../helpers/check-repo.js';

const git = isolatedGit;

let t: TestProvider;
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => t?.cleanup());

/** A project outside Consort's tree whose `main` holds `baseFiles`; the checked-out branch adds a harmless migration. */
async function project(baseFiles: Record<string, string>): Promise<{ dir: string; dispose: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'consort-base-failure-'));
  await mkdir(path.join(dir, 'migrations'));
  await writeFile(path.join(dir, 'package.json'), '{ "name": "base-failure", "private": true, "type": "commonjs" }\n');
  for (const [file, content] of Object.entries(baseFiles)) await writeFile(path.join(dir, file), content);
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  await git(dir, 'checkout', '-qb', 'feature');
  await writeFile(
    path.join(dir, 'migrations/1800000000000_pr.sql'),
    '-- Up Migration\nCREATE TABLE pr_table (id int);\n-- Down Migration\nDROP TABLE pr_table;\n',
  );
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'the pull request');
  return { dir, dispose: () => rm(dir, { recursive: true, force: true }) };
}

const check = (dir: string) => checkAgainstMain(dir, null, t.provider);

describe("base's migrations do not apply to the parent", () => {
  it('a base migration importing a package that is not installed: says to install the dependencies, names the package, no stack, no rebuild', async () => {
    const p = await project({
      'migrations/1700000000000_uses-helper.js':
        "const { columns } = require('consort-not-installed-helper/columns');\n" +
        'exports.up = (pgm) => pgm.createTable("things", columns);\nexports.down = (pgm) => pgm.dropTable("things");\n',
    });
    try {
      const report = await check(p.dir);
      const stage = report.stages.baseline;
      expect(stage.status).toBe('failed');
      expect(stage.summary).toContain('consort-not-installed-helper/columns');
      expect(stage.summary).toContain('npm ci');
      expect(stage.summary).not.toContain('rebuild-baseline');
      expect(stage.summary).not.toContain('Require stack');
      expect(stage.summary).not.toContain('\n');
      // The whole error stays in the JSON.
      expect(stage.failure?.message).toContain('Require stack');
      expect(report.stages.migrations.status).toBe('skipped');
    } finally {
      await p.dispose();
    }
  }, 120_000);

  it('a SQL error on an empty parent: names the file and the statement, says to fix base, no rebuild', async () => {
    const p = await project({
      'migrations/1700000000000_bad.sql':
        '-- Up Migration\nCREATE TABLE invoices (id int REFERENCES nowhere (id));\n-- Down Migration\nDROP TABLE invoices;\n',
    });
    try {
      const report = await check(p.dir);
      const stage = report.stages.baseline;
      expect(stage.status).toBe('failed');
      expect(stage.summary).toContain('migrations/1700000000000_bad.sql');
      expect(stage.summary).toContain('CREATE TABLE invoices (id int REFERENCES nowhere (id))');
      expect(stage.summary).toContain('relation "nowhere" does not exist');
      expect(stage.summary).toContain('on base');
      expect(stage.summary).not.toContain('rebuild-baseline');
      expect(stage.failure).toMatchObject({
        file: 'migrations/1700000000000_bad.sql',
        statement: expect.stringContaining('CREATE TABLE invoices'),
        code: '42P01',
      });
    } finally {
      await p.dispose();
    }
  }, 120_000);
});

describe('baseFailure', () => {
  it("closes node-pg-migrate's message with a full stop before the hint (the stage's summary)", () => {
    expect(withHint('Can\'t determine timestamp for "README.md"', 'If that file is not a migration, …')).toBe(
      'Can\'t determine timestamp for "README.md". If that file is not a migration, …',
    );
    expect(withHint('still running after migrations.timeout (1s).', 'Raise it.')).toBe(
      'still running after migrations.timeout (1s). Raise it.',
    );
    expect(withHint(' no hint ', undefined)).toBe('no hint');
  });

  const statement = {
    kind: 'statement' as const,
    name: '1_a',
    file: 'migrations/1_a.sql',
    statement: 'CREATE TABLE a (id int)',
    error: { message: 'relation "a" already exists', code: '42P07', line: 2 },
  };

  it('offers --rebuild-baseline when the parent holds objects', async () => {
    const f = await baseFailure(statement, 'main', false, async () => true);
    expect(f.message).toBe(
      `base's migration migrations/1_a.sql:2 failed on the parent branch "main": relation "a" already exists in: CREATE TABLE a (id int)`,
    );
    expect(f.hint).toContain('--rebuild-baseline');
  });

  it('does not when the parent is empty, or the baseline was already built from base alone', async () => {
    expect((await baseFailure(statement, 'main', false, async () => false)).hint).not.toContain('rebuild');
    expect((await baseFailure(statement, 'main', true, async () => true)).hint).not.toContain('rebuild');
  });

  it('a load failure that is not a missing module: install, else fix the file; first line only', async () => {
    const f = await baseFailure(
      {
        kind: 'load',
        name: '1_a',
        file: 'migrations/1_a.js',
        error: {
          message: "Can't get migration files: SyntaxError: Unexpected token '}'\n    at wrapSafe (node:internal)",
        },
      },
      'main',
      false,
      async () => true,
    );
    expect(f.message).toBe(
      "base's migration migrations/1_a.js could not be loaded: Can't get migration files: SyntaxError: Unexpected token '}'",
    );
    expect(f.hint).toContain('npm ci');
    expect(f.hint).not.toContain('rebuild');
    expect(f.detail.message).toContain('wrapSafe');
  });

  it("a base file that is no migration (node-pg-migrate stops at the first): the ignorePattern that skips every one of base's", async () => {
    const base = migrationSetFromEntries(
      ['1_a.sql', 'README.md', 'helpers.js', '2_b.js'].map((f) => ({ file: `migrations/${f}`, content: f })),
    );
    const readme = {
      kind: 'load' as const,
      name: 'README',
      file: 'migrations/README.md',
      error: { message: 'Error loading migration files: Cannot determine numeric prefix for "README.md"' },
    };
    const f = await baseFailure(readme, 'main', false, async () => false, { base });
    expect(f.hint).toContain(
      "If that file is not a migration, set migrations.ignorePattern: '\\..*|README\\.md|helpers\\.js' in the Consort configuration of the base branch",
    );
    const configured = await baseFailure(readme, 'main', false, async () => false, { base, ignorePattern: '_.*' });
    expect(configured.hint).toContain("set migrations.ignorePattern: '_.*|README\\.md|helpers\\.js'");
  });
});

describe("a parent that records base's migrations in another table", () => {
  it('names every setting that differs: the table, the schema, or both', () => {
    const placement = { migrationsTable: 'pgmigrations' };
    expect(
      recordedElsewhereMessage({ schema: 'public', table: 'pgmigrations_auth', count: 3 }, placement, 'main'),
    ).toBe(
      'The parent branch "main" records 3 of base\'s migrations in public.pgmigrations_auth, not in public.pgmigrations (migrations.table), so the baseline would apply them again on top of what they made: set migrations.table: pgmigrations_auth in the Consort configuration of the base branch, as your deploy\'s node-pg-migrate has them (its --migrations-table, --migrations-schema).',
    );
    expect(
      recordedElsewhereMessage(
        { schema: 'admin', table: 'pgmigrations', count: 1 },
        { ...placement, schema: ['app'] },
        'main',
      ),
    ).toContain('in admin.pgmigrations, not in app.pgmigrations (migrations.migrationsSchema), so');
    expect(recordedElsewhereMessage({ schema: 'admin', table: 'migrations', count: 1 }, placement, 'main')).toContain(
      'set migrations.table: migrations and migrations.migrationsSchema: admin in',
    );
  });
});
