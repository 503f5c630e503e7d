/**
 * The baseline is built by the admin from the base's committed migrations, written out for the run
 * beside the head's in one scratch folder. A pull request's JS migration is code: its top level
 * runs when the head's migration process loads it, as the PR branch's role, but as the same system
 * user, and it can write any file that user can. Until 2026-12-05 the head's migrations were loaded
 * (compiled ahead, for a CommonJS node-pg-migrate) while the baseline was still being built: the
 * pull request's migration rewrote the base's copy of a module a base migration imports, and the
 * admin's migration process applied the pull request's SQL to the baseline — here a table
 * recording who made it, the `postgres` superuser; with it, `COPY … TO PROGRAM` or a role of its
 * own, in a baseline every later check on that base forks for a week. Now nothing of the pull
 * request runs before the baseline is built.
 */
import { mkdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { checkBranch, checkRepo, commitBranch, git } from '../helpers/check-repo.js';
import { postgresTestProvider, query, type TestProvider } from '../helpers/servers.js';

const MODULES = path.join(process.cwd(), 'node_modules');

/**
 * The pull request's migration: from its first load, and for as long as its process lives, it
 * looks for the base's tree written for the run (under `node_modules/.cache/consort`) and puts
 * its own SQL into the module the base's migration imports.
 */
const HOSTILE = `const fs = require('node:fs');
const path = require('node:path');
const evil = "exports.extra = \\"CREATE TABLE pwned_by_head AS SELECT current_user::text AS who, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser\\";\\n";
const runs = (scratch) => { try { return fs.readdirSync(scratch).map((n) => path.join(scratch, n)); } catch { return []; } };
const plant = () => {
  // The head's own tree is a checkout (its node_modules/.cache/consort) or a sibling of the base's.
  for (let d = __dirname; d !== path.dirname(d); d = path.dirname(d))
    for (const run of [d, ...runs(path.join(d, 'node_modules', '.cache', 'consort'))]) {
      const target = path.join(run, 'base', 'src', 'extra.js');
      try { if (fs.readFileSync(target, 'utf8') !== evil) fs.writeFileSync(target, evil); } catch {}
    }
};
plant();
setInterval(plant, 2).unref();
exports.up = (pgm) => { pgm.createTable('orders', { id: 'id' }); };
exports.down = (pgm) => { pgm.dropTable('orders'); };
`;

describe("a pull request's migration and the base's tree written for the run", () => {
  let t: TestProvider;
  let dir: string;

  beforeAll(async () => {
    t = await postgresTestProvider();
    dir = await checkRepo('check-head-preload', {
      '.gitignore': 'node_modules/\n',
      'package.json': JSON.stringify({ name: 'shop', private: true, devDependencies: { 'node-pg-migrate': '7.9.1' } }),
      'src/extra.js': "exports.extra = 'SELECT 1';\n",
      'migrations/1700000000000_customers.js':
        "const { extra } = require('../src/extra');\nexports.up = (pgm) => { pgm.createTable('customers', { id: 'id' }); pgm.sql(extra); };\nexports.down = false;\n",
      '.github/consort.yml': ['migrations:', '  dir: migrations', 'suite:', '  command: node -e 0', ''].join('\n'),
    });
    // The project's node-pg-migrate 7 (CommonJS), installed: the head's migrations are loaded ahead for it.
    await mkdir(path.join(dir, 'node_modules'));
    await symlink(path.join(MODULES, 'node-pg-migrate-7'), path.join(dir, 'node_modules', 'node-pg-migrate'), 'dir');
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await t.cleanup();
  });

  it("cannot rewrite what the admin applies to the baseline, and the change's own migration still applies", async () => {
    await commitBranch(dir, 'hostile', { 'migrations/1700000000001_orders.js': HOSTILE });
    const report = await checkBranch(dir, 'hostile', 41, t.provider, () => undefined, {}, { asCommit: true });
    await git(dir, 'checkout', '-q', 'main');

    const baseline = report.stages.baseline as { status: string; name?: string };
    expect(baseline.status).toBe('passed');
    const db = (await t.provider.get(baseline.name!))!.database;
    const url = t.adminUrl.replace(/\/[^/?]*(\?|$)/, `/${db}$1`);
    expect(await query(url, "SELECT to_regclass('pwned_by_head')::text AS t")).toEqual([{ t: null }]);
    expect([report.stages.migrations.status, report.stages.reversibility.status]).toEqual(['passed', 'passed']);
  }, 120_000);
});
