/**
 * A base whose migrations use a type the database they deploy to was given by hand (PostGIS on a
 * `postgis/postgis` image: `ADD COLUMN value_geometry public.geometry`, no CREATE EXTENSION in any
 * migration, as Tampere/vuorovaikutusalusta's history does) fails its baseline on a fresh parent.
 * The hint names the extension and the two ways out, instead of asking to fix a migration that
 * deploys fine where the extension is installed.
 */
import { rm } from 'node:fs/promises';
import {
  baseFailure,
  extensionOfMissing,
  extensionOfType,
  missingExtensionNote,
  unavailableExtension,
} from '../../src/lanes/check/baseline.js';
import { checkBranch, checkRepo, commitBranch } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

const missingType = (type: string) => ({
  kind: 'statement' as const,
  name: '1632292704041_map-migrations',
  file: 'migrations/1632292704041_map-migrations.ts',
  statement: `ALTER TABLE data.answer_entry ADD COLUMN value_geometry ${type};`,
  error: { message: `type "${type}" does not exist`, code: '42704' },
});

test('a missing PostGIS type names the extension to create, where', async () => {
  const f = await baseFailure(missingType('public.geometry'), 'main', false, async () => false);
  expect(f.message).toContain('type "public.geometry" does not exist');
  expect(f.hint).toContain('geometry is a type of the postgis extension');
  expect(f.hint).toContain('CREATE EXTENSION IF NOT EXISTS postgis');
  expect(f.hint).toContain('parent branch "main"');
});

test('types of other extensions, and types no extension explains', () => {
  expect(extensionOfType('type "citext" does not exist')).toEqual({ type: 'citext', name: 'citext' });
  expect(extensionOfType('type "extensions.vector" does not exist')).toEqual({ type: 'vector', name: 'vector' });
  expect(extensionOfType('type "order_status" does not exist')).toBeUndefined();
});

test('a type no extension explains keeps the hint to fix the migration', async () => {
  const f = await baseFailure(missingType('order_status'), 'main', false, async () => false);
  expect(f.hint).toMatch(/^Fix migrations\/1632292704041_map-migrations\.ts/);
});

// decentraland/marketplace-server's favorites history: `default: pgm.func('uuid_generate_v4()')`,
// uuid-ossp installed on the deploy's database by hand, no migration creating it.
const missingFunction = {
  kind: 'statement' as const,
  name: '1677778846950_lists-and-picks',
  file: 'src/migrations/1677778846950_lists-and-picks.ts',
  statement: 'CREATE TABLE "lists" ( "id" uuid DEFAULT uuid_generate_v4() PRIMARY KEY );',
  error: { message: 'function uuid_generate_v4() does not exist', code: '42883' },
};

test("a missing extension's function names the extension, quoted as CREATE EXTENSION takes it", async () => {
  const f = await baseFailure(missingFunction, 'main', false, async () => false);
  expect(f.message).toContain('function uuid_generate_v4() does not exist');
  expect(f.hint).toContain('uuid_generate_v4() is a function of the uuid-ossp extension');
  expect(f.hint).toContain('CREATE EXTENSION IF NOT EXISTS "uuid-ossp"');
  expect(f.hint).not.toContain('PostGIS');
});

test('functions, operator classes and foreign-data wrappers of extensions; others are not guessed', () => {
  expect(extensionOfMissing('42883', 'function public.crypt(text, text) does not exist')).toMatchObject({
    object: 'crypt()',
    name: 'pgcrypto',
  });
  expect(
    extensionOfMissing('42704', 'operator class "gin_trgm_ops" does not exist for access method "gin"'),
  ).toMatchObject({
    kind: 'operator class',
    name: 'pg_trgm',
  });
  expect(extensionOfMissing('42704', 'foreign-data wrapper "postgres_fdw" does not exist')).toMatchObject({
    name: 'postgres_fdw',
  });
  expect(extensionOfMissing('42883', 'function my_helper(integer) does not exist')).toBeUndefined();
  expect(extensionOfMissing('42883', 'operator does not exist: uuid = text')).toBeUndefined();
});

describe("a pull request's own migration on a missing extension's function", () => {
  let t: TestProvider;
  let dir: string;
  beforeAll(async () => {
    t = await localTestProvider();
    dir = await checkRepo('pr-extension', {
      'migrations/1700000000000_lists.sql':
        '-- Up Migration\nCREATE TABLE lists (id serial PRIMARY KEY);\n-- Down Migration\nDROP TABLE lists;\n',
      '.github/consort.yml': 'migrations:\n  dir: migrations\nsuite:\n  command: "true"\n',
    });
    await commitBranch(dir, 'feature', {
      'migrations/1700000000001_picks.sql':
        '-- Up Migration\nCREATE TABLE picks (id uuid DEFAULT uuid_generate_v4() PRIMARY KEY);\n-- Down Migration\nDROP TABLE picks;\n',
    });
  }, 60_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await t.cleanup();
  });

  it('fails the migrations stage with the extension to create', async () => {
    const report = await checkBranch(dir, 'feature', 5, t.provider);
    expect(report.stages.migrations.status).toBe('failed');
    expect(report.stages.migrations.summary).toContain(
      'uuid_generate_v4() is a function of the uuid-ossp extension, which no migration before it creates: run CREATE EXTENSION IF NOT EXISTS "uuid-ossp" in a migration before it',
    );
  }, 120_000);
});

test('CREATE EXTENSION of one the server lacks: the server is named, not the migration, in both wordings', async () => {
  expect(unavailableExtension('0A000', 'extension "postgis" is not available')).toBe('postgis');
  // PostgreSQL 14 and older.
  expect(
    unavailableExtension(
      '58P01',
      'could not open extension control file "/usr/share/postgresql/14/extension/timescaledb.control": No such file or directory',
    ),
  ).toBe('timescaledb');
  expect(unavailableExtension('0A000', 'cannot refresh materialized view "x" concurrently')).toBeUndefined();
  const f = await baseFailure(
    {
      kind: 'statement',
      name: '1700000000000_extensions',
      file: 'migrations/1700000000000_extensions.js',
      statement: 'CREATE EXTENSION IF NOT EXISTS "timescaledb";',
      error: { message: 'extension "timescaledb" is not available', code: '0A000' },
    },
    'main',
    false,
    async () => false,
  );
  expect(f.hint).toBe(
    'Not a fault of the migration: the timescaledb extension is not installed on the server the parent branch "main" is on: CREATE EXTENSION needs its files there, which no migration can add. Install it on that server, or run the check on a server that has it.',
  );
  expect(missingExtensionNote('0A000', 'extension "vector" is not available')).toContain(
    "the vector extension is not installed on the server the branches are on: CREATE EXTENSION needs its files there, which no migration can add (the local provider's embedded PostgreSQL has no PostGIS or pgvector",
  );
});
