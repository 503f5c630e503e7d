/**
 * A pull request that rewrites Consort's configuration to pass its own merge gate: `check.blocking:
 * []` (every failure reported, none blocking), `lint.failOn: none`, `reversibility.enabled: false`,
 * `migrations.checkOrder: false`, `database.parent` pointed at another branch, `migrations.schema`
 * moving the migrations away from the parent's tables, `migrations.dir` pointed away from a
 * migration left in the deployed folder (also spelled `migrations\`, or on a base with no
 * configuration file). What decides the verdict is read from the base's committed configuration
 * (src/lanes/check/trusted-config.ts), as `check.migrationsRole` is: the change's own values are named in the report and not used. Until
 * 2026-12-04 the check used the pull request's file, and this pull request concluded `success`
 * with a failing lint, an irreversible migration and a red suite. On the `local` provider
 * (embedded PostgreSQL 18), through the lane as `consort check --base main` runs it.
 */
import { rm } from 'node:fs/promises';
import { renderCheckMarkdown } from '../../src/report/markdown.js';
import { checkBranch, checkRepo, commitBranch, git } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

const BASE = `-- Up Migration
CREATE TABLE customers (id int PRIMARY KEY, name text);
-- Down Migration
DROP TABLE customers;
`;

/** A lint error (adding-required-field) with no down migration. */
const HOSTILE = `-- Up Migration
ALTER TABLE customers ADD COLUMN phone text NOT NULL;
`;

const config = (extra: string[] = []) =>
  ['migrations:', '  dir: migrations', 'suite:', '  command: node suite.mjs', ...extra, ''].join('\n');

const SELF_GRANT = [
  'check:',
  '  blocking: []',
  'lint:',
  '  failOn: none',
  '  rules: [adding-required-field]',
  'reversibility:',
  '  enabled: false',
].join('\n');

let t: TestProvider;
let dir: string;

beforeAll(async () => {
  t = await localTestProvider();
  dir = await checkRepo('check-config-verdict', {
    'suite.mjs': 'console.log("1 test failed"); process.exit(1);\n',
    'migrations/1700000000000_base.sql': BASE,
    '.github/consort.yml': config(),
  });
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t.cleanup();
});

it("a pull request that makes its own stages non-blocking, lint silent and reversibility off still fails on the base's settings", async () => {
  await commitBranch(dir, 'self-pass', {
    '.github/consort.yml': config(SELF_GRANT.split('\n')),
    'migrations/1700000000001_phone.sql': HOSTILE,
  });
  const log: string[] = [];
  const report = await checkBranch(dir, 'self-pass', 41, t.provider, (l) => log.push(l));

  expect(report.conclusion).toBe('failure');
  expect([report.stages.lint.status, report.stages.lint.blocking]).toEqual(['failed', true]);
  expect(report.stages.lint.findings.map((f) => [f.rule, f.blocking])).toContainEqual(['adding-required-field', true]);
  expect([report.stages.reversibility.status, report.stages.reversibility.blocking]).toEqual(['failed', true]);
  expect([report.stages.suite.status, report.stages.suite.blocking]).toEqual(['failed', true]);
  const note =
    "the change's own check.blocking, lint.rules, lint.failOn, reversibility.enabled are not used: the merge gate is judged by .github/consort.yml on main until the change is merged";
  expect(report.stages.plan.ignoredSettings).toBe(note);
  expect(log).toContain(`Configuration: ${note}.`);
  expect(renderCheckMarkdown(report)).toContain("**Configuration:** the change's own check.blocking");
}, 120_000);

it("a pull request that points migrations.dir at an empty folder does not hide its migration: the base's are read where the base keeps them", async () => {
  await commitBranch(dir, 'dir-swap', {
    // A folder with no migrations in it.
    '.github/consort.yml': config().replace('dir: migrations', 'dir: .github'),
    'migrations/1700000000001_phone.sql': HOSTILE,
  });
  const report = await checkBranch(dir, 'dir-swap', 43, t.provider);

  expect(report.conclusion).toBe('failure');
  expect(report.stages.plan.status).toBe('failed');
  expect(report.stages.plan.problems).toContainEqual(
    expect.objectContaining({ kind: 'history-rewritten', name: '1700000000000_base', change: 'deleted' }),
  );
  expect(report.stages.plan.problems).toContainEqual(
    expect.objectContaining({ kind: 'outside-migrations-dir', file: 'migrations/1700000000001_phone.sql' }),
  );
}, 120_000);

it("a pull request that points migrations.dir at a folder of copies, its own migration left in the base's folder, fails the plan", async () => {
  await git(dir, 'checkout', '-q', 'main');
  await commitBranch(dir, 'dir-copies', {
    // The copies read as the base's history, unchanged; the new migration sits where main deploys from.
    '.github/consort.yml': config().replace('dir: migrations', 'dir: db/copies').replace('node suite.mjs', 'node -e 0'),
    'db/copies/1700000000000_base.sql': BASE,
    'migrations/1700000000001_phone.sql': HOSTILE,
    'migrations/1700000000000_base.sql': BASE.replace('name text', 'name text, secret text'),
  });
  const report = await checkBranch(dir, 'dir-copies', 45, t.provider);

  expect(report.conclusion).toBe('failure');
  expect([report.stages.plan.status, report.stages.plan.blocking]).toEqual(['failed', true]);
  const left = report.stages.plan.problems.filter((p) => p.kind === 'outside-migrations-dir');
  expect(left).toEqual([
    {
      kind: 'outside-migrations-dir',
      file: 'migrations/1700000000000_base.sql',
      name: '1700000000000_base',
      dir: 'db/copies',
      baseDir: 'migrations',
      change: 'edited',
    },
    {
      kind: 'outside-migrations-dir',
      file: 'migrations/1700000000001_phone.sql',
      name: '1700000000001_phone',
      dir: 'db/copies',
      baseDir: 'migrations',
      change: 'added',
    },
  ]);
  // Nothing else is wrong with the plan: the copies are the base's history, unchanged.
  expect(report.stages.plan.problems).toHaveLength(2);
  expect(renderCheckMarkdown(report)).toContain('the folder the base branch applies migrations from');
}, 120_000);

it("a pull request that sets migrations.ignorePattern to skip its own migration does not hide it: the base's pattern says what a migration is", async () => {
  await git(dir, 'checkout', '-q', 'main');
  await commitBranch(dir, 'ignore-swap', {
    // node-pg-migrate's --ignore-pattern, stretched to skip the change's own migration.
    '.github/consort.yml': config().replace(
      '  dir: migrations\n',
      '  dir: migrations\n  ignorePattern: "\\\\..*|.*phone.*"\n',
    ),
    'migrations/1700000000001_phone.sql': HOSTILE,
  });
  const report = await checkBranch(dir, 'ignore-swap', 44, t.provider);

  expect(report.conclusion).toBe('failure');
  expect(report.stages.plan.newMigrations).toEqual(['1700000000001_phone']);
  expect(report.stages.plan.ignoredSettings).toContain('migrations.ignorePattern');
  expect(report.stages.lint.findings.map((f) => [f.rule, f.blocking])).toContainEqual(['adding-required-field', true]);
}, 120_000);

it('a pull request that moves its migrations to another folder (same names) still passes', async () => {
  await git(dir, 'checkout', '-q', 'main');
  await git(dir, 'checkout', '-q', '-b', 'dir-move');
  await git(dir, 'mv', 'migrations', 'db');
  await commitBranch(
    dir,
    'dir-move-config',
    {
      '.github/consort.yml': config().replace('dir: migrations', 'dir: db').replace('node suite.mjs', 'node -e 0'),
    },
    'dir-move',
  );
  const report = await checkBranch(dir, 'dir-move-config', 44, t.provider);

  expect([report.stages.plan.status, report.stages.plan.summary]).toEqual(['passed', '0 new migrations, 1 unchanged']);
  expect(report.conclusion).toBe('success');
}, 120_000);

it('a pull request that copies its migrations to a new folder and leaves the old folder as the base has it still passes', async () => {
  await git(dir, 'checkout', '-q', 'main');
  await commitBranch(dir, 'dir-copy', {
    '.github/consort.yml': config().replace('dir: migrations', 'dir: db').replace('node suite.mjs', 'node -e 0'),
    'db/1700000000000_base.sql': BASE,
  });
  const report = await checkBranch(dir, 'dir-copy', 46, t.provider);

  expect([report.stages.plan.status, report.stages.plan.summary]).toEqual(['passed', '0 new migrations, 1 unchanged']);
  expect(report.conclusion).toBe('success');
}, 120_000);

it("a pull request that spells migrations.dir `migrations\\` reads the base's folder, not a folder of copies by that name", async () => {
  await git(dir, 'checkout', '-q', 'main');
  await commitBranch(dir, 'dir-backslash', {
    // To git and to the folder comparison, `migrations\` is `migrations`; to Linux's file system, a
    // name of its own. Until 2026-12-04 the working tree's side read this folder of copies, the
    // left-behind comparison took it for the base's, and the migration in migrations/ went unchecked.
    '.github/consort.yml': config()
      .replace('dir: migrations', 'dir: migrations\\')
      .replace('node suite.mjs', 'node -e 0'),
    'migrations\\/1700000000000_base.sql': BASE,
    'migrations/1700000000001_phone.sql': HOSTILE,
  });
  const report = await checkBranch(dir, 'dir-backslash', 47, t.provider);

  expect(report.conclusion).toBe('failure');
  expect(report.stages.plan.newMigrations).toEqual(['1700000000001_phone']);
  expect(report.stages.lint.findings.map((f) => [f.rule, f.blocking])).toContainEqual(['adding-required-field', true]);
}, 120_000);

it('the same settings count once they are on the base', async () => {
  await git(dir, 'checkout', '-q', 'main');
  await commitBranch(dir, 'relax', { '.github/consort.yml': config(SELF_GRANT.split('\n')) });
  await git(dir, 'checkout', '-q', 'main');
  await git(dir, 'merge', '-q', '--ff-only', 'relax');
  await commitBranch(dir, 'judged-by-base', { 'migrations/1700000000001_phone.sql': HOSTILE });
  const report = await checkBranch(dir, 'judged-by-base', 42, t.provider);

  expect(report.stages.plan.ignoredSettings).toBeUndefined();
  expect(report.stages.reversibility).toMatchObject({
    status: 'skipped',
    summary: 'disabled (reversibility.enabled: false)',
  });
  expect(report.stages.lint.findings.map((f) => f.rule)).not.toContain('adding-required-field');
  expect([report.stages.suite.status, report.stages.suite.blocking]).toEqual(['failed', false]);
  expect(report.conclusion).toBe('success');
}, 120_000);

it('a base without a configuration deploys from migrations/: a pull request that adds one reading another folder fails on a migration it adds there', async () => {
  const bare = await checkRepo('check-config-verdict-bare', {
    'suite.mjs': 'process.exit(0);\n',
    'migrations/1700000000000_base.sql': BASE,
  });
  try {
    await commitBranch(bare, 'adopt-elsewhere', {
      '.github/consort.yml': config().replace('dir: migrations', 'dir: db/copies'),
      'db/copies/1700000000000_base.sql': BASE,
      'migrations/1700000000001_phone.sql': HOSTILE,
    });
    const report = await checkBranch(bare, 'adopt-elsewhere', 48, t.provider);

    expect(report.conclusion).toBe('failure');
    expect(report.stages.plan.problems).toEqual([
      {
        kind: 'outside-migrations-dir',
        file: 'migrations/1700000000001_phone.sql',
        name: '1700000000001_phone',
        dir: 'db/copies',
        baseDir: 'migrations',
        change: 'added',
      },
    ]);

    // Adopting Consort with the folder the project really uses, migrations/ left as it was: passes.
    await git(bare, 'checkout', '-q', 'main');
    await commitBranch(bare, 'adopt', {
      '.github/consort.yml': config().replace('dir: migrations', 'dir: db/copies'),
      'db/copies/1700000000000_base.sql': BASE,
    });
    const adopted = await checkBranch(bare, 'adopt', 49, t.provider);
    expect([adopted.stages.plan.status, adopted.conclusion]).toEqual(['passed', 'success']);
  } finally {
    await rm(bare, { recursive: true, force: true });
  }
}, 120_000);

it("a pull request that moves its migrations into a schema of their own (migrations.schema) still runs them on the parent's data", async () => {
  // A parent with the base's migration applied and a customer in it, on a namespace of its own.
  const own = await localTestProvider();
  const repo = await checkRepo('check-config-verdict-schema', {
    'suite.mjs': 'process.exit(0);\n',
    'migrations/1700000000000_base.sql': BASE,
    '.github/consort.yml': config(),
  });
  try {
    const { default: pg } = await import('pg');
    const parent = new pg.Client({ connectionString: await own.provider.connectionUri('main') });
    await parent.connect();
    await parent.query(`CREATE TABLE customers (id int PRIMARY KEY, name text);
      INSERT INTO customers VALUES (1, 'ann');
      CREATE TABLE pgmigrations (id serial PRIMARY KEY, name varchar(255) NOT NULL, run_on timestamp NOT NULL);
      INSERT INTO pgmigrations (name, run_on) VALUES ('1700000000000_base', now());`);
    await parent.end();
    // Nothing for the lint to find: it fails only on the parent's rows (customer 1 exists).
    const duplicate = `-- Up Migration
INSERT INTO customers (id, name) VALUES (1, 'dup');
-- Down Migration
DELETE FROM customers WHERE name = 'dup';
`;
    await commitBranch(repo, 'sandboxed', {
      '.github/consort.yml': config().replace(
        '  dir: migrations\n',
        '  dir: migrations\n  schema: sandbox\n  createSchema: true\n',
      ),
      'migrations/1700000000001_dup.sql': duplicate,
    });
    const report = await checkBranch(repo, 'sandboxed', 50, own.provider);

    // Until 2026-12-04: success, the base's migration rebuilt on empty tables in sandbox.
    expect(report.conclusion).toBe('failure');
    expect(report.stages.migrations.failure?.message).toContain('customers_pkey');
    expect(report.stages.plan.ignoredSettings).toContain('migrations.schema, migrations.createSchema');
  } finally {
    await rm(repo, { recursive: true, force: true });
    await own.cleanup();
  }
}, 120_000);
