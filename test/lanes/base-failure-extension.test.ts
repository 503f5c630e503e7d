/**
 * A base whose migrations use a type the database they deploy to was given by hand (PostGIS on a
 * `postgis/postgis` image: `ADD COLUMN value_geometry public.geometry`, no CREATE EXTENSION in any
 * migration, as Tampere/vuorovaikutusalusta's history does) fails its baseline on a fresh parent.
 * The hint names the extension and the two ways out, instead of asking to fix a migration that
 * deploys fine where the extension is installed.
 */
import { baseFailure, extensionOfType } from '../../src/lanes/check/baseline.js';

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
