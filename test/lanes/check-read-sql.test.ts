/**
 * Migrations that keep their SQL in files beside them and run it
 * (`pgm.sql(fs.readFileSync(path.join(__dirname, 'sql', '<name>.up.sql'), 'utf8'))`), a common
 * node-pg-migrate layout: the SQL file is the migration's body. A change editing the one of a base
 * migration is told so (databases that ran it never get the edit), and a base whose file changed
 * builds another baseline rather than reusing the one its old text made.
 */
import { rm } from 'node:fs/promises';
import { checkAnnotations } from '../../src/report/annotations.js';
import { CheckReport } from '../../src/report/check-report.js';
import { renderCheckMarkdown } from '../../src/report/markdown.js';
import { checkBranch, checkRepo, commitBranch, git } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

let t: TestProvider;
const dirs: string[] = [];
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  await t?.cleanup();
});

/** A migration running the SQL of `sql/<name>.up.sql` and `sql/<name>.down.sql`, the two ways such files are named. */
const sqlFileMigration = (name: string) => `const fs = require('fs');
const path = require('path');

exports.up = (pgm) => {
  pgm.sql(fs.readFileSync(path.join(__dirname, './sql/${name}.up.sql'), { encoding: 'utf-8' }));
};

exports.down = (pgm) => {
  pgm.sql(fs.readFileSync(path.join(__dirname, 'sql', '${name}.down.sql'), 'utf8'));
};
`;

const USERS = '1700000000000_users';

/** The plan's warning for an edit of the users migration's up SQL, which the migration (`.js` or `.ts`) reads. */
const usersSqlEdited = (ext: 'js' | 'ts') => ({
  kind: 'imported-code-changed',
  file: `migrations/sql/${USERS}.up.sql`,
  change: 'edited',
  importedBy: [`migrations/${USERS}.${ext}`],
  read: true,
});

async function repository(): Promise<string> {
  const dir = await checkRepo('read-sql', {
    '.github/consort.yml': 'suite:\n  command: "true"\n',
    [`migrations/${USERS}.js`]: sqlFileMigration(USERS),
    [`migrations/sql/${USERS}.up.sql`]: 'CREATE TABLE users (id int PRIMARY KEY);\n',
    [`migrations/sql/${USERS}.down.sql`]: 'DROP TABLE users;\n',
  });
  dirs.push(dir);
  return dir;
}

const check = async (dir: string, branch: string, pr: number) =>
  CheckReport.parse(await checkBranch(dir, branch, pr, t.provider));

describe('migrations that run SQL read from files beside them', () => {
  it('a change editing the SQL file of a base migration is told that databases which ran it will not get the edit', async () => {
    const dir = await repository();
    await commitBranch(dir, 'edit-users-sql', {
      [`migrations/sql/${USERS}.up.sql`]: 'CREATE TABLE users (id int PRIMARY KEY, email text);\n',
      'migrations/1700000000001_posts.js': sqlFileMigration('1700000000001_posts'),
      'migrations/sql/1700000000001_posts.up.sql':
        'CREATE TABLE posts (id int PRIMARY KEY, user_id int REFERENCES users);\n',
      'migrations/sql/1700000000001_posts.down.sql': 'DROP TABLE posts;\n',
    });
    const report = await check(dir, 'edit-users-sql', 801);
    expect(report.stages.plan.warnings).toEqual([usersSqlEdited('js')]);
    const md = (text: string) => text.replace(/_/g, '\\_');
    expect(renderCheckMarkdown(report)).toContain(
      `**Read file changed:** <code>${md(`migrations/${USERS}.js`)}</code>, a migration of the base branch, reads <code>${md(`migrations/sql/${USERS}.up.sql`)}</code>, which this PR edits: databases that already ran it will not get the change`,
    );
    expect(checkAnnotations(report)).toContainEqual(
      expect.objectContaining({
        level: 'warning',
        file: `migrations/sql/${USERS}.up.sql`,
        message: expect.stringContaining('Restore the file and put the change in a new migration.'),
      }),
    );
    expect(report.stages.plan.summary).toBe("1 new migration, 1 unchanged; 1 file base's migrations read changed");
    // The new migration's own SQL files are read from the change's tree.
    expect(report.stages.migrations).toMatchObject({ status: 'passed', applied: [{ name: '1700000000001_posts' }] });
    expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
      ['1700000000001_posts', 'reversible'],
    ]);
    // Built from base's file: no email column on the baseline, none added by the change's migrations.
    expect(report.stages.schemaDiff.text).not.toContain('email');
  }, 120_000);

  it('a base whose SQL file changed builds a new baseline: the one its old text made lacks what the new migration needs', async () => {
    const dir = await repository();
    await commitBranch(dir, 'posts', {
      'migrations/1700000000001_posts.js': sqlFileMigration('1700000000001_posts'),
      'migrations/sql/1700000000001_posts.up.sql': 'CREATE TABLE posts (id int PRIMARY KEY);\n',
      'migrations/sql/1700000000001_posts.down.sql': 'DROP TABLE posts;\n',
    });
    const first = await check(dir, 'posts', 802);
    expect(first.conclusion).toBe('success');

    // On main, before any database ran it for real: the users table gets its email column in its own SQL.
    await commitBranch(dir, 'users-email', {
      [`migrations/sql/${USERS}.up.sql`]: 'CREATE TABLE users (id int PRIMARY KEY, email text);\n',
    });
    await git(dir, 'checkout', '-q', 'main');
    await git(dir, 'merge', '-q', '--ff-only', 'users-email');
    await commitBranch(dir, 'email-index', {
      'migrations/1700000000002_users-email-index.js': sqlFileMigration('1700000000002_users-email-index'),
      'migrations/sql/1700000000002_users-email-index.up.sql': 'CREATE INDEX users_email_idx ON users (email);\n',
      'migrations/sql/1700000000002_users-email-index.down.sql': 'DROP INDEX users_email_idx;\n',
    });
    const second = await check(dir, 'email-index', 803);
    // A baseline reused from base's old SQL has no users.email: the index fails there.
    expect(second.stages.migrations).toMatchObject({
      status: 'passed',
      applied: [{ name: '1700000000002_users-email-index' }],
    });
    expect(second.stages.baseline.name).not.toBe(first.stages.baseline.name);
    expect(second.stages.baseline).toMatchObject({ status: 'passed', reused: false, applied: [USERS] });
    expect(second.stages.plan.warnings ?? []).toEqual([]);
  }, 180_000);

  it('also through a helper beside the SQL that the migration hands the file name to', async () => {
    const helperMigration = (name: string) => `const { readSql } = require('./sql/read');

exports.up = (pgm) => pgm.sql(readSql('${name}.up.sql'));
exports.down = (pgm) => pgm.sql(readSql('${name}.down.sql'));
`;
    const dir = await checkRepo('read-sql-helper', {
      '.github/consort.yml': 'suite:\n  command: "true"\n',
      'migrations/sql/read.js':
        "const fs = require('fs');\nconst path = require('path');\n\nexports.readSql = (name) => fs.readFileSync(path.join(__dirname, name), 'utf8');\n",
      [`migrations/${USERS}.js`]: helperMigration(USERS),
      [`migrations/sql/${USERS}.up.sql`]: 'CREATE TABLE users (id int PRIMARY KEY);\n',
      [`migrations/sql/${USERS}.down.sql`]: 'DROP TABLE users;\n',
    });
    dirs.push(dir);
    // A down's SQL runs at a rollback, as the file is then: its edit is no warning.
    await commitBranch(dir, 'users-down', {
      [`migrations/sql/${USERS}.down.sql`]: 'DROP TABLE IF EXISTS users;\n',
    });
    expect((await check(dir, 'users-down', 806)).stages.plan.warnings ?? []).toEqual([]);
    await commitBranch(
      dir,
      'users-name',
      { [`migrations/sql/${USERS}.up.sql`]: 'CREATE TABLE users (id int PRIMARY KEY, name text);\n' },
      'main',
    );
    const report = await check(dir, 'users-name', 804);
    expect(report.stages.plan.warnings).toEqual([usersSqlEdited('js')]);
  }, 120_000);

  it("also by a path made from the migration's own file name (a TypeScript template's, on node-pg-migrate 9)", async () => {
    const ownName = `import { readFileSync } from 'fs';
import type { MigrationBuilder } from 'node-pg-migrate';
import { basename, extname, join } from 'path';

const sqlPath = join(__dirname, 'sql', basename(__filename, extname(__filename)));

export const up = (pgm: MigrationBuilder) => pgm.sql(readFileSync(\`\${sqlPath}.up.sql\`, 'utf8'));
export const down = (pgm: MigrationBuilder) => pgm.sql(readFileSync(\`\${sqlPath}.down.sql\`, 'utf8'));
`;
    const dir = await checkRepo('read-sql-own-name', {
      '.github/consort.yml': 'suite:\n  command: "true"\n',
      [`migrations/${USERS}.ts`]: ownName,
      [`migrations/sql/${USERS}.up.sql`]: 'CREATE TABLE users (id int PRIMARY KEY);\n',
      [`migrations/sql/${USERS}.down.sql`]: 'DROP TABLE users;\n',
    });
    dirs.push(dir);
    await commitBranch(dir, 'users-and-teams', {
      [`migrations/sql/${USERS}.up.sql`]: 'CREATE TABLE users (id int PRIMARY KEY, team text);\n',
      'migrations/1700000000001_teams.ts': ownName,
      'migrations/sql/1700000000001_teams.up.sql': 'CREATE TABLE teams (id int PRIMARY KEY);\n',
      'migrations/sql/1700000000001_teams.down.sql': 'DROP TABLE teams;\n',
    });
    const report = await check(dir, 'users-and-teams', 805);
    expect(report.stages.plan.warnings).toEqual([usersSqlEdited('ts')]);
    expect(report.stages.migrations).toMatchObject({ status: 'passed', applied: [{ name: '1700000000001_teams' }] });
    expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
      ['1700000000001_teams', 'reversible'],
    ]);
  }, 120_000);
});
