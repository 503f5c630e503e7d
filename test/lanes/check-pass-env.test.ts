/**
 * `suite.passEnv`: the credential-looking variables of the check's environment a project gives its
 * own code. A settings module that requires `JWT_SECRET` when it loads (as many Express APIs' do)
 * failed the suite and the migrations alike, with no way to hand it over; now the base branch's list
 * hands it to the suite, the seed and the migrations, and nothing else credential-looking follows.
 * A pull request's own list is not used (it could name its runner's deploy key), and a suite that
 * fails is told which variables it was not given.
 */
import { rm } from 'node:fs/promises';
import { checkBranch, checkRepo, commitBranch } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

/** The project's settings: JWT_SECRET is required when a migration (or a test) first imports it. */
const SETTINGS = `if (!process.env.JWT_SECRET) throw new Error('JWT_SECRET is not set.');
if (process.env.DEPLOY_TOKEN !== undefined) throw new Error('DEPLOY_TOKEN reached the migration');
module.exports = { secret: process.env.JWT_SECRET };
`;

const migration = (table: string) => `require('../lib/settings.js');
exports.up = (pgm) => { pgm.createTable('${table}', { id: 'id' }); };
exports.down = (pgm) => { pgm.dropTable('${table}'); };
`;

/** The suite: passes only with JWT_SECRET, and with DEPLOY_TOKEN when the change asks for it. */
const SUITE = `const want = process.argv.slice(2);
const missing = want.filter((n) => !process.env[n]);
if (missing.length) { console.error('missing: ' + missing.join(', ')); process.exit(1); }
`;

const config = (passEnv: string, ...suiteArgs: string[]) =>
  [
    'migrations:',
    '  dir: migrations',
    'suite:',
    `  command: node suite.js ${suiteArgs.join(' ')}`,
    `  passEnv: ${passEnv}`,
    '',
  ].join('\n');

const ENV = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  JWT_SECRET: 'not-a-real-secret',
  DEPLOY_TOKEN: 'the-runners-deploy-token',
};

let t: TestProvider;
let dir: string;

beforeAll(async () => {
  t = await localTestProvider();
  dir = await checkRepo('check-pass-env', {
    'lib/settings.js': SETTINGS,
    'suite.js': SUITE,
    'migrations/1700000000000_orders.js': migration('orders'),
    '.github/consort.yml': config('[JWT_SECRET]', 'JWT_SECRET'),
  });
  await commitBranch(dir, 'feature', { 'migrations/1700000000001_invoices.js': migration('invoices') });
  // A change that lists the runner's token for itself and a suite that needs it.
  await commitBranch(dir, 'greedy', {
    'migrations/1700000000001_invoices.js': migration('invoices'),
    '.github/consort.yml': config('[JWT_SECRET, DEPLOY_TOKEN]', 'JWT_SECRET', 'DEPLOY_TOKEN'),
  });
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t.cleanup();
});

test("the base's suite.passEnv reaches the migrations and the suite; other credentials do not", async () => {
  const report = await checkBranch(dir, 'feature', 11, t.provider, undefined, ENV);
  expect(report.stages.baseline).toMatchObject({ status: 'passed' });
  expect(report.stages.migrations).toMatchObject({ status: 'passed' });
  expect(report.stages.reversibility).toMatchObject({ status: 'passed' });
  expect(report.stages.suite).toMatchObject({ status: 'passed' });
  expect(report.conclusion).toBe('success');
}, 120_000);

test("a change's own suite.passEnv is not used, and the failed suite says what it was not given", async () => {
  const report = await checkBranch(dir, 'greedy', 12, t.provider, undefined, ENV);
  expect(report.stages.plan.ignoredSettings).toContain('suite.passEnv');
  // The migrations still loaded (DEPLOY_TOKEN never reached them); the suite missed the token.
  expect(report.stages.migrations).toMatchObject({ status: 'passed' });
  expect(report.stages.suite.status).toBe('failed');
  expect(report.stages.suite.outputTail).toContain('missing: DEPLOY_TOKEN');
  expect(report.stages.suite.summary).toContain(
    'it was not given DEPLOY_TOKEN (credential-looking: list what it needs in suite.passEnv)',
  );
  expect(report.conclusion).toBe('failure');
}, 120_000);
