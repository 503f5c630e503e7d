/**
 * A history whose migrations put their tables in a schema the database they deploy to was given by
 * hand (`pgm.createTable({ schema: 'billing', name: 'invoices' }, …)`, no CREATE SCHEMA in any
 * migration): on a fresh parent the first one fails with 3F000. The hint names the schema and the
 * ways out — a migration creating it, the parent branch, or the deploy's --create-schema — instead
 * of asking to fix a migration that deploys fine where the schema exists.
 */
import { rm } from 'node:fs/promises';
import { baseFailure, missingSchema, missingSchemaNote } from '../../src/lanes/check/baseline.js';
import { checkBranch, checkRepo, commitBranch } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

test('the schema a statement named, and nothing else that does not exist', () => {
  expect(missingSchema('3F000', 'schema "billing" does not exist')).toBe('billing');
  expect(missingSchema('42P01', 'relation "billing.invoices" does not exist')).toBeUndefined();
  expect(missingSchema('42704', 'type "geometry" does not exist')).toBeUndefined();
  expect(missingSchemaNote('3F000', 'schema "Billing Data" does not exist')).toContain(
    'CREATE SCHEMA IF NOT EXISTS "Billing Data"',
  );
});

test("base's migration in a schema no migration creates: the hint makes the schema, rather than asking to fix the migration", async () => {
  const f = await baseFailure(
    {
      kind: 'statement',
      name: '1700000000000_invoices',
      file: 'db/migrations/1700000000000_invoices.cjs',
      statement: 'CREATE TABLE IF NOT EXISTS "billing"."invoices" ( "id" serial PRIMARY KEY );',
      error: { message: 'schema "billing" does not exist', code: '3F000' },
    },
    'main',
    false,
    async () => false,
  );
  expect(f.message).toContain('schema "billing" does not exist');
  expect(f.hint).toContain('None of base\'s migrations before it creates schema "billing"');
  expect(f.hint).toContain('CREATE SCHEMA IF NOT EXISTS billing');
  expect(f.hint).toContain('parent branch "main"');
  expect(f.hint).toContain('--schema billing --create-schema');
  expect(f.hint).not.toMatch(/^Fix /);
});

describe("the migrations stage of a pull request's migration in a schema the branch lacks", () => {
  let t: TestProvider;
  let dir: string;
  beforeAll(async () => {
    t = await localTestProvider();
    dir = await checkRepo('missing-schema', {
      'migrations/1700000000000_accounts.sql':
        '-- Up Migration\nCREATE TABLE accounts (id serial PRIMARY KEY);\n-- Down Migration\nDROP TABLE accounts;\n',
      '.github/consort.yml': 'suite:\n  command: "true"\n',
    });
    await commitBranch(dir, 'invoices', {
      'migrations/1700000000001_invoices.sql':
        '-- Up Migration\nCREATE TABLE billing.invoices (id serial PRIMARY KEY, account_id integer REFERENCES accounts);\n-- Down Migration\nDROP TABLE billing.invoices;\n',
    });
  }, 60_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await t.cleanup();
  });

  it('names the schema and where to create it', async () => {
    const report = await checkBranch(dir, 'invoices', 11, t.provider);
    expect(report.stages.migrations).toMatchObject({ status: 'failed', failure: { code: '3F000' } });
    expect(report.stages.migrations.summary).toContain(
      'schema "billing" does not exist (no migration before this one creates schema "billing"',
    );
    expect(report.stages.migrations.summary).toContain('CREATE SCHEMA IF NOT EXISTS billing');
  }, 120_000);
});
