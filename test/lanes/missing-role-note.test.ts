/**
 * A migration granting to a role the deploy's server has from elsewhere (a platform's — Supabase's
 * anon and authenticated — or a DBA's), which no migration creates: on the check's server the role
 * does not exist (42704). Roles are the server's, not a database's: the note says so and how to make
 * the role where it is missing, on the base branch, instead of the bare error (a pull request's
 * migration) or the advice to fix a migration that deploys fine (base's).
 */
import { rm } from 'node:fs/promises';
import { baseFailure, missingRole, missingRoleNote } from '../../src/lanes/check/baseline.js';
import { checkBranch, checkRepo, commitBranch } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

const CREATE = 'DO $$ BEGIN CREATE ROLE "authenticated" NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$';

test('the role a statement named, never `undefined` (a setting the migration did not get)', () => {
  expect(missingRole('42704', 'role "authenticated" does not exist')).toBe('authenticated');
  expect(missingRole('42704', 'role "undefined" does not exist')).toBeUndefined();
  expect(missingRole('42704', 'type "geometry" does not exist')).toBeUndefined();
  expect(missingRole('42P01', 'role "authenticated" does not exist')).toBeUndefined();
  expect(missingRoleNote('42704', 'role "authenticated" does not exist')).toContain(CREATE);
  expect(missingRoleNote('42704', 'role "AppReader" does not exist')).toContain('CREATE ROLE "AppReader" NOLOGIN');
});

test("base's migration granting to it: the hint makes the role, rather than asking to fix the migration", async () => {
  const f = await baseFailure(
    {
      kind: 'statement',
      name: '1700000000001_profiles-rls',
      file: 'migrations/1700000000001_profiles-rls.sql',
      statement: 'GRANT SELECT ON profiles TO anon, authenticated;',
      error: { message: 'role "authenticated" does not exist', code: '42704' },
    },
    'main',
    false,
    async () => false,
  );
  expect(f.message).toContain('role "authenticated" does not exist');
  expect(f.hint).toContain('none of base\'s migrations before it creates "authenticated"');
  expect(f.hint).toContain(CREATE);
  expect(f.hint).not.toMatch(/^Fix /);
});

describe('the migrations stage of a pull request granting to a role the server lacks', () => {
  let t: TestProvider;
  let dir: string;
  beforeAll(async () => {
    t = await localTestProvider();
    dir = await checkRepo('missing-role', {
      'migrations/1700000000000_profiles.sql':
        '-- Up Migration\nCREATE TABLE profiles (id uuid PRIMARY KEY, display_name text);\n-- Down Migration\nDROP TABLE profiles;\n',
      '.github/consort.yml': 'suite:\n  command: "true"\n',
    });
    await commitBranch(dir, 'rls', {
      'migrations/1700000000001_profiles-rls.sql': [
        '-- Up Migration',
        'ALTER TABLE profiles ENABLE ROW LEVEL SECURITY;',
        'CREATE POLICY "profiles are readable" ON profiles FOR SELECT TO authenticated USING (true);',
        '-- Down Migration',
        'DROP POLICY "profiles are readable" ON profiles;',
        'ALTER TABLE profiles DISABLE ROW LEVEL SECURITY;',
        '',
      ].join('\n'),
    });
  }, 60_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await t.cleanup();
  });

  it('says roles are the server’s and how to make it on the base branch', async () => {
    const report = await checkBranch(dir, 'rls', 9, t.provider);
    expect(report.stages.migrations).toMatchObject({ status: 'failed', failure: { code: '42704' } });
    expect(report.stages.migrations.summary).toContain(
      'role "authenticated" does not exist (a role belongs to the server, not to a database, and no migration before this one creates "authenticated"',
    );
    expect(report.stages.migrations.summary).toContain(CREATE);
  }, 120_000);
});
