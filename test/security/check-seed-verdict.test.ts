/**
 * The baseline is the parent's data with the base's migrations applied: what a pull request's
 * migrations must apply on. Its seed runs once, before the PR branch is copied from it, with a role
 * that owns the baseline's tables — so a seed can rewrite the parent's rows. Until 2026-12-05 the
 * pull request's own `database.seed` was used: one that set a seed command "fixing" the rows its
 * migration fails on (`SET NOT NULL` over a null the base's data holds) passed its own gate, a
 * migration that fails on deploy. The seed is now the base's, like `database.parent`. So is the
 * code a seed command runs: the base's `node seed.mjs` ran from the pull request's checkout, and the
 * baseline it seeded — named by the base's migrations and seed setting, not by the script — is the
 * one every later check on that base forks; a change that edited the script, checked first after a
 * base migration landed, seeded it (the same null filled in).
 */
import { rm } from 'node:fs/promises';
import { checkBranch, checkRepo, commitBranch, PG } from '../helpers/check-repo.js';
import { postgresTestProvider, type TestProvider } from '../helpers/servers.js';

const BASE = `-- Up Migration
CREATE TABLE customers (id int PRIMARY KEY, email text);
INSERT INTO customers VALUES (1, NULL);
-- Down Migration
DROP TABLE customers;
`;

const FIX = `import { createRequire } from 'node:module';
const pg = createRequire(import.meta.url)(${JSON.stringify(PG)});
const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
await c.connect();
await c.query("UPDATE customers SET email = 'someone@example.com' WHERE email IS NULL");
await c.end();
`;

describe("a pull request's own seed", () => {
  let t: TestProvider;
  let dir: string;

  beforeAll(async () => {
    t = await postgresTestProvider();
    dir = await checkRepo('check-seed-verdict', {
      'migrations/1700000000000_base.sql': BASE,
      '.github/consort.yml': ['migrations:', '  dir: migrations', 'suite:', '  command: node -e 0', ''].join('\n'),
    });
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await t.cleanup();
  });

  it('does not rewrite the rows its migration fails on', async () => {
    await commitBranch(dir, 'seeded', {
      'fix.mjs': FIX,
      '.github/consort.yml': [
        'migrations:',
        '  dir: migrations',
        'database:',
        '  seed:',
        '    command: node fix.mjs',
        'suite:',
        '  command: node -e 0',
        '',
      ].join('\n'),
      'migrations/1700000000001_email_required.sql':
        '-- Up Migration\nALTER TABLE customers ALTER COLUMN email SET NOT NULL;\n-- Down Migration\nALTER TABLE customers ALTER COLUMN email DROP NOT NULL;\n',
    });
    const report = await checkBranch(dir, 'seeded', 41, t.provider);
    expect(report.stages.migrations.status).toBe('failed');
    expect(report.stages.migrations.summary).toMatch(/contains null values/);
    expect(report.conclusion).toBe('failure');
    expect(report.stages.plan.ignoredSettings).toMatch(/database\.seed/);
  }, 120_000);

  it("runs the base's seed command from the base's tree, not the change's edit of its script", async () => {
    const repo = await checkRepo('check-seed-script', {
      'migrations/1700000000000_base.sql': BASE,
      'seed.mjs': '// nothing to seed yet\n',
      '.github/consort.yml': [
        'migrations:',
        '  dir: migrations',
        'database:',
        '  seed:',
        '    command: node seed.mjs',
        'suite:',
        '  command: node -e 0',
        '',
      ].join('\n'),
    });
    try {
      await commitBranch(repo, 'script', {
        'seed.mjs': FIX,
        'migrations/1700000000001_email_required.sql':
          '-- Up Migration\nALTER TABLE customers ALTER COLUMN email SET NOT NULL;\n-- Down Migration\nALTER TABLE customers ALTER COLUMN email DROP NOT NULL;\n',
      });
      const report = await checkBranch(repo, 'script', 42, t.provider);
      expect(report.stages.baseline.summary).toMatch(/seeded/);
      expect(report.stages.migrations.status).toBe('failed');
      expect(report.stages.migrations.summary).toMatch(/contains null values/);
      expect(report.conclusion).toBe('failure');
    } finally {
      await rm(repo, { recursive: true, force: true });
    }
  }, 120_000);
});
