/**
 * The deliberate opt-out from the confined migration role: `check.migrationsRole: admin`, read
 * from the base's committed configuration only. A pull request that writes it into its own
 * configuration gains nothing (its superuser-only migration fails with 42501, and the report names
 * the setting and says it must land on the base first); once the setting is on the base, a pull
 * request's migrations run as the admin, the report says so, and the suite and the seed still get
 * the role confined to their branch database. On the `local` provider (embedded PostgreSQL 18):
 * the choice of URL is the lane's, the same on every provider that makes branch roles.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { renderCheckMarkdown } from '../../src/report/markdown.js';
import { checkBranch, checkRepo, commitBranch, git, PG } from '../helpers/check-repo.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';

const BASE = `-- Up Migration
CREATE TABLE customers (id int PRIMARY KEY, name text);
-- Down Migration
DROP TABLE customers;
`;

/** An untrusted extension: only a superuser may create it. The table records who ran the migration. */
const NEEDS_SUPERUSER = `-- Up Migration
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE TABLE migrated_by AS SELECT current_user::text AS who, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS super;
-- Down Migration
DROP TABLE migrated_by;
DROP EXTENSION dblink;
`;

/** The seed records who ran it. */
const SEED = `CREATE TABLE seeded_by AS SELECT current_user::text AS who, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS super;\n`;

/** The suite writes who it ran as into suite-ran-as.json. */
const SUITE = `import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
const pg = createRequire(import.meta.url)(${JSON.stringify(PG)});
const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
await c.connect();
const { rows } = await c.query('SELECT current_user AS who, rolsuper AS super FROM pg_roles WHERE rolname = current_user');
await c.end();
writeFileSync('suite-ran-as.json', JSON.stringify(rows[0]));
`;

const config = (role?: 'admin' | 'branch') =>
  [
    'database:',
    '  seed:',
    '    file: seed.sql',
    'migrations:',
    '  dir: migrations',
    'suite:',
    '  command: node suite.mjs',
    ...(role ? ['check:', `  migrationsRole: ${role}`] : []),
    '',
  ].join('\n');

let t: TestProvider;
let dir: string;

beforeAll(async () => {
  t = await localTestProvider();
  dir = await checkRepo('check-migration-optout', {
    'suite.mjs': SUITE,
    'seed.sql': SEED,
    'migrations/1700000000000_base.sql': BASE,
    '.github/consort.yml': config(),
  });
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t.cleanup();
});

const inBranch = async (branch: string, sql: string) => {
  const db = (await t.provider.get(branch))!.database;
  return query(t.adminUrl.replace(/\/[^/?]*(\?|$)/, `/${db}$1`), sql);
};

it('a pull request that sets check.migrationsRole: admin in its own configuration gets no elevation', async () => {
  await commitBranch(dir, 'self-grant', {
    '.github/consort.yml': config('admin'),
    'migrations/1700000000001_dblink.sql': NEEDS_SUPERUSER,
  });
  const log: string[] = [];
  const report = await checkBranch(dir, 'self-grant', 31, t.provider, (l) => log.push(l));

  expect(report.stages.migrations.status).toBe('failed');
  expect(report.stages.migrations.failure).toMatchObject({ code: '42501' });
  expect(report.stages.migrations.ranAs).toBe('branch');
  expect(report.stages.migrations.summary).toMatch(
    /1700000000001_dblink\.sql failed: permission denied.*confined to its branch database.*check\.migrationsRole: admin in the Consort configuration of the base branch, which must land on the base first/,
  );
  // The PR comment says it under the failed migration, where a table cell cannot shorten it.
  expect(renderCheckMarkdown(report)).toContain(
    'A migration that needs more runs as the admin only with <code>check.migrationsRole: admin</code> in the Consort configuration of the base branch, which must land on the base first',
  );
  expect(log).toContain(
    "check.migrationsRole: admin in the change's own configuration is ignored (only the base's counts); its migrations run as the branch's role.",
  );
  expect(await inBranch('pr-31', "SELECT 1 FROM pg_extension WHERE extname = 'dblink'")).toEqual([]);
}, 120_000);

it("with check.migrationsRole: admin on the base, the migrations run as the admin and the report says so; the suite and the seed keep the branch's role", async () => {
  await git(dir, 'checkout', '-q', 'main');
  await commitBranch(dir, 'opt-out', { '.github/consort.yml': config('admin') });
  await git(dir, 'checkout', '-q', 'main');
  await git(dir, 'merge', '-q', '--ff-only', 'opt-out');
  await commitBranch(dir, 'needs-admin', { 'migrations/1700000000001_dblink.sql': NEEDS_SUPERUSER });
  const log: string[] = [];
  const report = await checkBranch(dir, 'needs-admin', 32, t.provider, (l) => log.push(l));

  expect([report.stages.baseline.status, report.stages.baseline.summary]).toEqual(['passed', expect.any(String)]);
  expect([report.stages.migrations.status, report.stages.migrations.ranAs]).toEqual(['passed', 'admin']);
  expect(report.stages.migrations.summary).toMatch(
    /^1 migration applied to pr-32 as the admin \(check\.migrationsRole: admin in \.github\/consort\.yml on main\) with node-pg-migrate /,
  );
  expect(renderCheckMarkdown(report)).toContain(
    'as the admin (check.migrationsRole: admin in .github/consort.yml on main)',
  );
  expect(log).toContain(
    "The pull request's migrations run as the admin: check.migrationsRole is admin in .github/consort.yml on main.",
  );
  expect([report.stages.reversibility.status, report.stages.reversibility.summary]).toEqual([
    'passed',
    '1 migration reverses cleanly',
  ]);
  expect(report.conclusion).toBe('success');

  const [migrated] = await inBranch('pr-32', 'SELECT who, super FROM migrated_by');
  expect(migrated).toEqual({ who: new URL(t.adminUrl).username || 'postgres', super: true });
  const [seeded] = await inBranch('pr-32', 'SELECT who, super FROM seeded_by');
  expect(seeded).toEqual({ who: expect.stringMatching(/_role$/), super: false });
  const suite = JSON.parse(await readFile(path.join(dir, 'suite-ran-as.json'), 'utf8')) as unknown;
  expect(suite).toEqual({ who: expect.stringMatching(/_role$/), super: false });
}, 120_000);
