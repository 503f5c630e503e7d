/**
 * The settings a project's own scripts run node-pg-migrate with on the check's migrations folder
 * (flags, a --config-file, the config package's default file), next to the check's configuration:
 * each one the check does not apply with is a plan warning naming the key to set.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConsortConfigSchema } from '../../src/config/schema.js';
import { deploySettings, deployTransaction } from '../../src/migrations/deploy-settings.js';
import { problemPhrase } from '../../src/report/content.js';
import { renderCheckMarkdown } from '../../src/report/markdown.js';
import { phrase, renderCheckTerminal } from '../../src/report/terminal.js';
import { makeReport } from '../fixtures/reports/build.js';
import { passingReport } from '../fixtures/reports/passing.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'consort-deploy-settings-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const manifest = (m: object) => writeFile(path.join(root, 'package.json'), JSON.stringify(m));
const migrations = (yaml: object = {}) => ConsortConfigSchema.parse({ migrations: yaml }).migrations;
/** setting → the deploy's value, as the warnings say them. */
const found = async (config: object = {}) =>
  Object.fromEntries((await deploySettings(root, migrations(config))).map((d) => [d.setting, d.deploy]));

it("names each setting of the deploy's script the check does not apply with, and the key to set", async () => {
  await manifest({
    scripts: {
      migrate: 'node-pg-migrate -m migrations -t schema_versions --no-check-order --use-glob up',
      // Makes files: its flags are not how migrations are applied.
      'migrate:create': 'node-pg-migrate create -j sql -t other',
    },
  });
  const warnings = await deploySettings(root, migrations());
  expect(warnings).toEqual([
    expect.objectContaining({
      file: 'package.json',
      script: 'migrate',
      setting: 'migrations.table',
      deploy: 'schema_versions',
      configured: 'pgmigrations',
      how: '-t schema_versions',
    }),
    expect.objectContaining({ setting: 'migrations.checkOrder', deploy: 'false', how: '--no-check-order' }),
    expect.objectContaining({ setting: '--use-glob', deploy: 'true', configured: null }),
  ]);
  // The advice names the configuration file the project has.
  expect(phrase(problemPhrase({ kind: 'deploy-setting', ...warnings[0]!, configFile: 'consort.config.json' }))).toBe(
    "package.json's script migrate runs node-pg-migrate with -t schema_versions, but the check applies the migrations with migrations.table: pgmigrations. Set migrations.table: schema_versions in consort.config.json so the check applies them as the deploy does.",
  );
  expect(phrase(problemPhrase({ kind: 'deploy-setting', ...warnings[2]!, configFile: '.github/consort.yml' }))).toBe(
    "package.json's script migrate runs node-pg-migrate with --use-glob, which the check has no setting for: it applies the migrations without it.",
  );
  // Set as the deploy has them: nothing to say (the flag the check has no key for stays).
  expect(await found({ table: 'schema_versions', checkOrder: false })).toEqual({ '--use-glob': 'true' });
});

it.each([
  [
    '--migrations-table=versions --check-order=false',
    { 'migrations.table': 'versions', 'migrations.checkOrder': 'false' },
  ],
  [
    '--migrationsTable versions --check-order false up',
    { 'migrations.table': 'versions', 'migrations.checkOrder': 'false' },
  ],
  ['--check-order up', {}],
  [
    "-s app -s public --create-schema --ignore-pattern '.*\\.map'",
    {
      'migrations.schema': '[app, public]',
      'migrations.createSchema': 'true',
      'migrations.ignorePattern': "'.*\\.map'",
    },
  ],
  ['--schema app --migrations-schema meta', { 'migrations.schema': 'app', 'migrations.migrationsSchema': 'meta' }],
])('node-pg-migrate up %s', async (flags, expected) => {
  await manifest({ scripts: { migrate: `node-pg-migrate up ${flags}` } });
  expect(await found()).toEqual(expected);
});

it('a migrations schema that follows the schema is said once, with the schema', async () => {
  await manifest({ scripts: { migrate: 'node-pg-migrate up --schema app' } });
  expect(await found()).toEqual({ 'migrations.schema': 'app' });
  // The check's own migrations schema, set apart from the deploy's default (the first schema).
  expect(await found({ schema: 'app', migrationsSchema: 'meta' })).toEqual({ 'migrations.migrationsSchema': 'app' });
});

it("reads the deploy's configuration files as node-pg-migrate does: the config package's, then --config-file, each over the flags", async () => {
  await manifest({
    scripts: { migrate: 'node-pg-migrate up -t from_flag --config-file db/migrate.json --config-value pg' },
    dependencies: { config: '^3.3.0' },
  });
  await mkdir(path.join(root, 'config'));
  await mkdir(path.join(root, 'db'));
  await writeFile(
    path.join(root, 'config', 'default.json'),
    JSON.stringify({ pg: { 'migrations-table': 'from_config', schema: 'app' } }),
  );
  await writeFile(path.join(root, 'db', 'migrate.json'), JSON.stringify({ pg: { 'migrations-table': 'from_file' } }));
  const warnings = await deploySettings(root, migrations());
  expect(warnings.map((w) => [w.setting, w.deploy, w.file, w.how])).toEqual([
    [
      'migrations.table',
      'from_file',
      'db/migrate.json',
      'migrations-table: from_file from db/migrate.json (section pg)',
    ],
    ['migrations.schema', 'app', 'config/default.json', 'schema: app from config/default.json (section pg)'],
  ]);
  expect(phrase(problemPhrase({ kind: 'deploy-setting', ...warnings[0]!, configFile: '.github/consort.yml' }))).toBe(
    "package.json's script migrate runs node-pg-migrate reading migrations-table: from_file from db/migrate.json (section pg), but the check applies the migrations with migrations.table: pgmigrations. Set migrations.table: from_file in .github/consort.yml so the check applies them as the deploy does.",
  );
});

it('reads a --config-file as the node-pg-migrate that applies does: 6 and 7 its top-level keys, 8 and 9 its section', async () => {
  // The shape of a config/migrate.json that keeps the app's connection under db and the migration
  // settings beside it: node-pg-migrate 7 applies the top-level keys (its db is no setting to it).
  await manifest({ scripts: { migrate: 'node-pg-migrate up --config-file config/migrate.json' } });
  await mkdir(path.join(root, 'config'));
  await writeFile(
    path.join(root, 'config', 'migrate.json'),
    JSON.stringify({ db: { url: 'postgres://bank@localhost/bank', schema: 'ledger' }, 'migrations-table': 'versions' }),
  );
  const as = async (version: string | undefined, config: object = {}) =>
    Object.fromEntries(
      (await deploySettings(root, migrations(config), version)).map((d) => [d.setting, [d.deploy, d.how]]),
    );
  expect(await as('7.9.1')).toEqual({
    'migrations.table': ['versions', 'migrations-table: versions from config/migrate.json'],
  });
  expect(await as('6.2.2', { table: 'versions' })).toEqual({});
  expect(await as('8.0.4')).toEqual({
    'migrations.schema': ['ledger', 'schema: ledger from config/migrate.json (section db)'],
  });
  expect(await as('9.0.0', { schema: 'ledger' })).toEqual({});
});

it('says nothing when the scripts disagree, or run node-pg-migrate on another folder', async () => {
  await manifest({
    scripts: {
      migrate: 'node-pg-migrate up -t versions',
      'migrate:test': 'node-pg-migrate up -t test_versions --no-check-order',
      'migrate:legacy': 'node-pg-migrate up -m legacy -t old_versions --decamelize',
    },
  });
  // The table: two values, neither known to be the deploy's; check order: one script only sets it.
  expect(await found()).toEqual({});
  expect(await found({ dir: 'legacy' })).toEqual({
    'migrations.table': 'old_versions',
    'migrations.decamelize': 'true',
  });
});

it('a workspace package that runs node-pg-migrate on the folder', async () => {
  await manifest({ workspaces: ['packages/*'] });
  await mkdir(path.join(root, 'packages', 'db'), { recursive: true });
  await writeFile(
    path.join(root, 'packages', 'db', 'package.json'),
    JSON.stringify({ scripts: { 'db:migrate': 'node-pg-migrate up -t versions' } }),
  );
  expect(await deploySettings(root, migrations({ dir: 'packages/db/migrations' }))).toEqual([
    expect.objectContaining({ manifest: 'packages/db/package.json', script: 'db:migrate', deploy: 'versions' }),
  ]);
  expect(await found()).toEqual({});
});

it('a nested package that is no workspace, whose own script runs node-pg-migrate on the folder', async () => {
  await manifest({ private: true });
  await mkdir(path.join(root, 'db'), { recursive: true });
  await writeFile(
    path.join(root, 'db', 'package.json'),
    JSON.stringify({ scripts: { migrate: 'node-pg-migrate up -t versions --no-single-transaction' } }),
  );
  expect(await deploySettings(root, migrations({ dir: 'db/migrations' }))).toEqual([
    expect.objectContaining({ manifest: 'db/package.json', script: 'migrate', deploy: 'versions' }),
  ]);
  expect(await deployTransaction(root, migrations({ dir: 'db/migrations' }))).toEqual({
    single: false,
    manifest: 'db/package.json',
    script: 'migrate',
  });
  // Another folder's package is not read for it.
  expect(await found()).toEqual({});
});

it('reads a script as sh does: a quoted pattern is one word, its | and blanks included', async () => {
  await manifest({
    scripts: {
      migrate: `node-pg-migrate up --ignore-pattern '\\..*|README\\.md' && node-pg-migrate up --ignore-pattern "a b;c"`,
    },
  });
  // The two commands disagree: nothing to say, and no half pattern ('\..*) taken for the deploy's.
  expect(await found({ ignorePattern: '\\..*|README\\.md' })).toEqual({});
  await manifest({ scripts: { migrate: `dotenv -e .env -- node-pg-migrate up --ignore-pattern '\\..*|README\\.md'` } });
  expect(await found({ ignorePattern: '\\..*|README\\.md' })).toEqual({});
  expect(await found()).toEqual({ 'migrations.ignorePattern': "'\\..*|README\\.md'" });
});

it("takes a list as node-pg-migrate's yargs does: -s app public is both schemas, up to the next flag", async () => {
  await manifest({ scripts: { migrate: 'node-pg-migrate up -s app public -t versions' } });
  expect(await found({ schema: ['app', 'public'] })).toEqual({ 'migrations.table': 'versions' });
  expect(await found()).toEqual({ 'migrations.schema': '[app, public]', 'migrations.table': 'versions' });
});

it.each([
  ['a --config-file in JavaScript', 'node-pg-migrate up -f db/config.js', 'db/config.js'],
  ['a --config-file in TypeScript', 'node-pg-migrate up --config-file db/config.ts', 'db/config.ts'],
  ['a --config-file linked out of the repository', 'node-pg-migrate up -f db/config.json', 'db/config.json'],
])('says nothing of what %s may set (it is never run)', async (_, script, file) => {
  await manifest({ scripts: { migrate: script } });
  await mkdir(path.join(root, 'db'));
  if (file.endsWith('.json')) {
    await writeFile(`${root}-outside.json`, JSON.stringify({ 'migrations-table': 'versions' }));
    await symlink(`${root}-outside.json`, path.join(root, file));
  } else await writeFile(path.join(root, file), "module.exports = { 'migrations-table': 'versions' };\n");
  try {
    expect(await found({ table: 'versions' })).toEqual({});
  } finally {
    await rm(`${root}-outside.json`, { force: true });
  }
});

it("says nothing of a key the config package's other files may set for the deploy's environment", async () => {
  await manifest({ scripts: { migrate: 'node-pg-migrate up' }, dependencies: { config: '^3.3.0' } });
  await mkdir(path.join(root, 'config'));
  await writeFile(path.join(root, 'config', 'default.json'), JSON.stringify({ db: { 'check-order': false } }));
  await writeFile(path.join(root, 'config', 'production.json'), JSON.stringify({ db: { 'migrations-table': 'v' } }));
  // The table is production's (with NODE_ENV=production) or the default: unknown. The default file's key still counts.
  expect(await found({ table: 'v' })).toEqual({ 'migrations.checkOrder': 'false' });
  // A configuration in code: any key.
  await writeFile(path.join(root, 'config', 'local.js'), 'module.exports = {};\n');
  expect(await found({ table: 'v' })).toEqual({});
});

it("shows a value the repository's configuration holds as text in the report, never as markdown or terminal codes", async () => {
  await manifest({ scripts: { migrate: 'node-pg-migrate up' }, dependencies: { config: '^3.3.0' } });
  await mkdir(path.join(root, 'config'));
  const hostile = '<img src=x onerror=alert(1)> [x](https://evil.example) @octocat \u001b]0;pwned\u0007';
  await writeFile(path.join(root, 'config', 'default.json'), JSON.stringify({ db: { 'ignore-pattern': hostile } }));
  const [warning] = await deploySettings(root, migrations());
  expect(warning).toEqual(
    expect.objectContaining({ setting: 'migrations.ignorePattern', file: 'config/default.json' }),
  );
  const report = makeReport({
    stages: {
      ...passingReport.stages,
      plan: {
        ...passingReport.stages.plan,
        warnings: [{ kind: 'deploy-setting', ...warning!, configFile: '.github/consort.yml' }],
      },
    },
  });
  const markdown = renderCheckMarkdown(report);
  expect(markdown).toContain('Deploy setting differs');
  expect(markdown).not.toMatch(/<img|[^\\]\]\(https|@octocat/); // escaped: &lt;img, \](, @\u2060octocat
  expect(renderCheckTerminal(report)).not.toContain('\u001b]0;');
});

it('follows a script that runs the node-pg-migrate script with more words (npm run migrate -- up -t versions)', async () => {
  await manifest({
    scripts: {
      migrate: 'node-pg-migrate -m migrations --decamelize',
      'migrate:prod': "npm run migrate -- up --migrations-table versions --ignore-pattern '\\..*|README\\.md'",
      release: 'yarn migrate:prod --no-check-order',
      'db:schema': 'pnpm run migrate --schema app public',
    },
  });
  // The script alone (run by hand, with its default table) and as the others run it disagree: nothing said
  // of the table, the pattern, the order check or the schema; all of them decamelize.
  expect(await found({ table: 'versions', ignorePattern: '\\..*|README\\.md', schema: ['app', 'public'] })).toEqual({
    'migrations.decamelize': 'true',
  });
});

it('never advises a value the configuration refuses (node-pg-migrate keeps -t meta.versions as one name, in public)', async () => {
  await manifest({ scripts: { migrate: 'node-pg-migrate up --migrations-table=meta.versions --no-check-order' } });
  expect(await found()).toEqual({ 'migrations.checkOrder': 'false' });
});

it('does not advise taking back a schema the check creates and the deploy does not (a no-op where it exists)', async () => {
  await manifest({ scripts: { migrate: 'node-pg-migrate up -s app' } });
  expect(await found({ schema: ['app'], createSchema: true, createMigrationsSchema: true })).toEqual({});
  await manifest({ scripts: { migrate: 'node-pg-migrate up -s app --create-schema' } });
  expect(await found({ schema: ['app'] })).toEqual({ 'migrations.createSchema': 'true' });
});

it("tells whether the deploy applies the migrations in one transaction, node-pg-migrate's CLI default", async () => {
  const single = async (scripts?: Record<string, string>) => {
    await manifest(scripts ? { scripts } : {});
    return (await deployTransaction(root, migrations()))?.single;
  };
  expect(await single({ migrate: 'node-pg-migrate up', 'migrate:new': 'node-pg-migrate create -j sql' })).toBe(true);
  expect(await single({ migrate: 'node-pg-migrate up --no-single-transaction' })).toBe(false);
  expect(await single({ migrate: 'node-pg-migrate up --single-transaction false' })).toBe(false);
  // A deploy through runner() has no script: a transaction each, its default.
  expect(await single()).toBeUndefined();
  // Scripts that disagree say nothing of the deploy.
  expect(
    await single({ migrate: 'node-pg-migrate up', 'migrate:ci': 'node-pg-migrate up --no-single-transaction' }),
  ).toBeUndefined();
  // The config package's default file wins over the flags, as in node-pg-migrate.
  await manifest({ dependencies: { config: '3' }, scripts: { migrate: 'node-pg-migrate up' } });
  await mkdir(path.join(root, 'config'));
  await writeFile(path.join(root, 'config/default.json'), JSON.stringify({ db: { 'single-transaction': false } }));
  expect(await deployTransaction(root, migrations())).toEqual({
    single: false,
    manifest: 'package.json',
    script: 'migrate',
  });
});

it('reads a shell script file the script runs (sh, bash, `.`, ./x.sh) as that file runs node-pg-migrate', async () => {
  await mkdir(path.join(root, 'scripts'));
  // A script sourced from package.json: a comment naming flags, an assignment continued onto the
  // command's line, the script's own words for $1.
  await writeFile(
    path.join(root, 'scripts', 'migrate.sh'),
    [
      '#!/bin/sh',
      '# usage: migrate.sh up|down (never node-pg-migrate -t ignored_in_comments)',
      'ENV_FILE=.env && test -f $ENV_FILE && . $ENV_FILE',
      'DATABASE_URL="postgres://$DB_USER@$DB_HOST/$DB_NAME" \\',
      '  yarn node-pg-migrate "$1" --migrations-schema meta --create-migrations-schema',
      '',
    ].join('\n'),
  );
  await manifest({ scripts: { 'db:up': '. ./scripts/migrate.sh up', 'db:down': 'sh scripts/migrate.sh down' } });
  const warnings = await deploySettings(root, migrations());
  expect(warnings).toEqual([
    expect.objectContaining({
      file: 'scripts/migrate.sh',
      manifest: 'package.json',
      script: 'db:up',
      via: 'scripts/migrate.sh',
      setting: 'migrations.migrationsSchema',
      deploy: 'meta',
      how: '--migrations-schema meta',
    }),
    expect.objectContaining({ setting: 'migrations.createMigrationsSchema', deploy: 'true' }),
  ]);
  expect(phrase(problemPhrase({ kind: 'deploy-setting', ...warnings[0]!, configFile: '.github/consort.yml' }))).toBe(
    "package.json's script db:up (through scripts/migrate.sh) runs node-pg-migrate with --migrations-schema meta, but the check applies the migrations with migrations.migrationsSchema: public. Set migrations.migrationsSchema: meta in .github/consort.yml so the check applies them as the deploy does.",
  );
  // node-pg-migrate's CLI there: one transaction, as the deploy applies them.
  expect(await deployTransaction(root, migrations())).toEqual({
    single: true,
    manifest: 'package.json',
    script: 'db:up',
    via: 'scripts/migrate.sh',
  });
  // An executable script run by its path, and node-pg-migrate's bin run by node (7+ name it .js).
  await writeFile(
    path.join(root, 'scripts', 'deploy.sh'),
    'set -e\nnode node_modules/node-pg-migrate/bin/node-pg-migrate.js up -t versions\n',
  );
  await manifest({ scripts: { deploy: './scripts/deploy.sh' } });
  expect(await found()).toEqual({ 'migrations.table': 'versions' });
  // A command string, a file linked out of the repository, a file named by a variable: not read.
  const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'consort-deploy-settings-outside-'));
  try {
    await writeFile(path.join(elsewhere, 'migrate.sh'), 'node-pg-migrate up -t elsewhere\n');
    await symlink(path.join(elsewhere, 'migrate.sh'), path.join(root, 'scripts', 'linked.sh'));
    for (const script of ["bash -c 'scripts/deploy.sh'", 'sh scripts/linked.sh', 'sh $MIGRATE_SCRIPT']) {
      await manifest({ scripts: { migrate: script } });
      expect(await found()).toEqual({});
    }
  } finally {
    await rm(elsewhere, { recursive: true, force: true });
  }
});
