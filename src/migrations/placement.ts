/**
 * Where a project's migrations run and are recorded: node-pg-migrate's `schema` (the search_path
 * while migrating), `createSchema`, `migrationsSchema` (where the migrations table lives) and
 * `createMigrationsSchema` (and which files are migrations: `ignorePattern`), taken from the `migrations.*` configuration once, so every place that
 * applies migrations passes the same options and every place that reads the table finds it where
 * node-pg-migrate put it. The meanings are node-pg-migrate's own, the same in 6 through 9 (its
 * runner's `getSchemas`/`getMigrationTableSchema`): node-pg-migrate does the creating itself.
 */
import { quoteIdent } from '../db/sql.js';
import type { MigrationPlacement } from '../ports/migration-runner.js';

export type { MigrationPlacement } from '../ports/migration-runner.js';

/** The `migrations` section of the configuration, as far as placement goes. */
export interface PlacementSettings {
  table: string;
  schema?: readonly string[] | undefined;
  createSchema?: boolean | undefined;
  migrationsSchema?: string | undefined;
  createMigrationsSchema?: boolean | undefined;
  decamelize?: boolean | undefined;
  ignorePattern?: string | undefined;
}

/** The runner options for a project's settings: only those set, so the defaults stay node-pg-migrate's. */
export function migrationPlacement(settings: PlacementSettings): MigrationPlacement {
  return {
    migrationsTable: settings.table,
    ...(settings.schema && settings.schema.length > 0 ? { schema: [...settings.schema] } : {}),
    ...(settings.createSchema ? { createSchema: true } : {}),
    ...(settings.migrationsSchema !== undefined ? { migrationsSchema: settings.migrationsSchema } : {}),
    ...(settings.createMigrationsSchema ? { createMigrationsSchema: true } : {}),
    ...(settings.decamelize ? { decamelize: true } : {}),
    ...(settings.ignorePattern !== undefined ? { ignorePattern: settings.ignorePattern } : {}),
  };
}

/**
 * Whether any setting that changes what the migrations make differs from node-pg-migrate's
 * defaults (public for both schemas, names as written): a baseline or template built with them is
 * another one.
 */
export function hasSchemaSettings(p: MigrationPlacement): boolean {
  return (
    p.schema !== undefined ||
    p.createSchema === true ||
    p.migrationsSchema !== undefined ||
    p.createMigrationsSchema === true ||
    p.decamelize === true
  );
}

/** The schema of the migrations table, as node-pg-migrate picks it: migrationsSchema, else the first of schema, else public. */
export function migrationsTableSchema(p: Pick<MigrationPlacement, 'schema' | 'migrationsSchema'>): string {
  return p.migrationsSchema ?? p.schema?.[0] ?? 'public';
}

/** The migrations table, schema-qualified and quoted, for SQL. */
export function migrationsTableSql(
  p: Pick<MigrationPlacement, 'migrationsTable' | 'schema' | 'migrationsSchema'>,
): string {
  return `${quoteIdent(migrationsTableSchema(p))}.${quoteIdent(p.migrationsTable)}`;
}

/**
 * What a schema snapshot leaves out (its `ignoreTables`): node-pg-migrate's bookkeeping table, in
 * its own schema only, so a project's table of the same name elsewhere is still compared.
 */
export function bookkeepingTables(
  p: Pick<MigrationPlacement, 'migrationsTable' | 'schema' | 'migrationsSchema'>,
): string[] {
  return [`${migrationsTableSchema(p)}.${p.migrationsTable}`];
}
