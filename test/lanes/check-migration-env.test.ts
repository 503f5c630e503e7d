/**
 * A migration that imports the project's code loads it as the deploy's `node-pg-migrate up` does,
 * with the environment the check runs in: a settings module that throws when a variable is unset
 * (`env.get('WAREHOUSE_URL')` at import time, as decentraland/builder-server's migrations do
 * through their models) loads when the variable is set where `consort check` runs. Credentials,
 * the connection variables (libpq's PG*, DATABASE_URL) and `suite.env` still never reach it: the
 * migrations' child serves several branches, and none of them is the database those name.
 */
import { rm } from 'node:fs/promises';
import { checkBranch, checkRepo, commitBranch } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

/** The project's settings: read once, when a migration first imports it. */
const SETTINGS = `const region = process.env.APP_REGION;
if (!region) throw new Error('The APP_REGION is not set.');
for (const name of ['DATABASE_URL', 'PGHOST', 'PGDATABASE', 'APP_DB_URL', 'DEPLOY_TOKEN', 'WAREHOUSE_SECRET'])
  if (process.env[name] !== undefined) throw new Error(name + ' reached the migration: ' + process.env[name]);
module.exports = { region };
`;

const migration = (table: string) => `const { region } = require('../lib/settings.js');
exports.up = (pgm) => { pgm.createTable('${table}_' + region, { id: 'id' }); };
exports.down = (pgm) => { pgm.dropTable('${table}_' + region); };
`;

const CONFIG = ['migrations:', '  dir: migrations', 'suite:', '  command: "true"', '  env: APP_DB_URL', ''].join('\n');

let t: TestProvider;
let dir: string;

beforeAll(async () => {
  t = await localTestProvider();
  dir = await checkRepo('check-migration-env', {
    'lib/settings.js': SETTINGS,
    'migrations/1700000000000_orders.js': migration('orders'),
    '.github/consort.yml': CONFIG,
  });
  await commitBranch(dir, 'feature', { 'migrations/1700000000001_invoices.js': migration('invoices') });
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t.cleanup();
});

test("the migrations load with the check's environment, minus credentials and connection variables", async () => {
  const report = await checkBranch(dir, 'feature', 7, t.provider, undefined, {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    APP_REGION: 'eu',
    // What must not reach them: where the caller's own database is, and its secrets.
    DATABASE_URL: 'postgres://someone@db.invalid/production',
    PGHOST: 'db.invalid',
    PGDATABASE: 'production',
    APP_DB_URL: 'postgres://someone@db.invalid/app',
    DEPLOY_TOKEN: 'token',
    WAREHOUSE_SECRET: 'secret',
  });
  // The base's migration loaded on the baseline, the pull request's on its branch and reversibility's.
  expect(report.stages.baseline).toMatchObject({ status: 'passed' });
  expect(report.stages.migrations).toMatchObject({ status: 'passed' });
  expect(report.stages.reversibility).toMatchObject({ status: 'passed' });
  expect(report.stages.schemaDiff.text).toContain('public.invoices_eu');
}, 120_000);

test('without the variable, the settings module says what is missing', async () => {
  const report = await checkBranch(dir, 'feature', 8, t.provider, undefined, {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
  });
  // The baseline the first test built is reused: the pull request's migration is the one that fails to load.
  expect(report.conclusion).toBe('failure');
  expect(report.stages.migrations).toMatchObject({ status: 'failed' });
  expect(JSON.stringify(report.stages.migrations)).toContain('The APP_REGION is not set.');
}, 120_000);

test('a base migration whose settings module throws gets a hint that names the environment', async () => {
  const { baseFailure } = await import('../../src/lanes/check/baseline.js');
  const failure = await baseFailure(
    {
      kind: 'load',
      name: '1700000000000_orders',
      file: 'migrations/1700000000000_orders.js',
      error: { message: "Can't get migration files: Error: The APP_REGION is not set." },
    },
    'main',
    false,
    async () => false,
  );
  expect(failure.message).toContain('The APP_REGION is not set.');
  expect(failure.hint).toContain('export it where the check runs');
});
