/**
 * A name-based snapshot of a database's user schema, read from pg_catalog. Two snapshots of
 * databases with the same schema are deep-equal regardless of creation order or OIDs, which is
 * what the reversibility check relies on. Queries use only catalog columns present in PG 15–18.
 */
import { randomBytes } from 'node:crypto';
import { quoteLiteral, type Queryable } from '../db/sql.js';
import {
  EXTRA_SQL,
  type CollationInfo,
  type CommentInfo,
  type DomainInfo,
  type ExtensionInfo,
  type ExtraObjects,
  type PolicyInfo,
  type PrivilegeInfo,
  type TypeInfo,
} from './objects.js';

export type * from './objects.js';

export interface SchemaInfo {
  name: string;
}
export interface ColumnInfo {
  name: string;
  type: string;
  notNull: boolean;
  default: string | null;
  identity: 'always' | 'by default' | null;
  /** e.g. `GENERATED ALWAYS AS (a * 2) STORED`; PG 18 adds VIRTUAL. */
  generated: string | null;
  /** Only when it differs from the type's default collation. */
  collation: string | null;
}
export interface TableInfo {
  schema: string;
  name: string;
  kind: 'table' | 'partitioned table';
  unlogged: boolean;
  rowSecurity: boolean;
  /** FORCE ROW LEVEL SECURITY: policies apply to the table's owner too. */
  forceRowSecurity: boolean;
  replicaIdentity: 'default' | 'nothing' | 'full' | 'index';
  options: string[];
  partitionKey: string | null;
  partitionBound: string | null;
  /** Partition parent or INHERITS parents, qualified, in inheritance order. */
  inherits: string[];
  /** In column order. */
  columns: ColumnInfo[];
}
export interface IndexInfo {
  schema: string;
  name: string;
  table: string;
  definition: string;
  valid: boolean;
}
export interface ConstraintInfo {
  schema: string;
  table: string;
  name: string;
  type: 'primary key' | 'unique' | 'foreign key' | 'check' | 'exclusion';
  definition: string;
}
export interface EnumInfo {
  schema: string;
  name: string;
  labels: string[];
}
export interface ViewInfo {
  schema: string;
  name: string;
  kind: 'view' | 'materialized view';
  definition: string;
  options: string[];
}
export interface FunctionInfo {
  schema: string;
  name: string;
  kind: 'function' | 'procedure' | 'aggregate' | 'window';
  identityArguments: string;
  /** With parameter defaults, which the identity arguments leave out. */
  arguments: string;
  result: string | null;
  language: string;
  volatility: 'immutable' | 'stable' | 'volatile';
  strict: boolean;
  securityDefiner: boolean;
  parallel: 'safe' | 'restricted' | 'unsafe';
  config: string[];
  /** sha256 of the source (and SQL-standard body), so a changed body shows without storing it. */
  bodyHash: string;
}
export interface SequenceInfo {
  schema: string;
  name: string;
  type: string;
  start: string;
  increment: string;
  min: string;
  max: string;
  cache: string;
  cycle: boolean;
  /** `table.column` from OWNED BY (always the sequence's own schema). */
  ownedBy: string | null;
}
export interface TriggerInfo {
  schema: string;
  table: string;
  name: string;
  definition: string;
  enabled: string;
}

/**
 * Which catalog object each table and column is, by qualified name: a table's OID, a column's
 * table OID and attribute number. Renaming keeps them, dropping and adding does not, so a diff of
 * two databases that share their history (a branch and its fork) tells a rename from a drop and an
 * add. Never compared: two databases with the same schema differ here.
 */
export interface SnapshotIds {
  tables: Record<string, string>;
  columns: Record<string, string>;
}

export interface SchemaSnapshot extends ExtraObjects {
  /** Absent from snapshots made before it existed, or rebuilt from their parts: no renames are told then. */
  ids?: SnapshotIds;
  schemas: SchemaInfo[];
  tables: TableInfo[];
  indexes: IndexInfo[];
  constraints: ConstraintInfo[];
  enums: EnumInfo[];
  views: ViewInfo[];
  functions: FunctionInfo[];
  sequences: SequenceInfo[];
  triggers: TriggerInfo[];
}

export interface SnapshotOptions {
  /** Only these schemas; default: every user schema. */
  schemas?: string[];
  /** `name` (any schema) or `schema.name`; default `['pgmigrations']`, the migration bookkeeping table. */
  ignoreTables?: string[];
}

/** Quote an identifier only when it needs it, so keys read like `public.users` yet stay unambiguous. */
export function displayIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

export function qualifiedName(...parts: string[]): string {
  return parts.map(displayIdent).join('.');
}

/** Code-point order: independent of the server's and Node's locale. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const NSP = `WITH nsp AS (
  SELECT n.oid, n.nspname::text AS nspname FROM pg_catalog.pg_namespace n
  WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
    AND ($1::text[] IS NULL OR n.nspname = ANY($1::text[])) AND ${notExtension('pg_namespace', 'n.oid')})`;

/** Objects created by CREATE EXTENSION belong to the extension, not to the migrations under review. */
function notExtension(catalog: string, oid: string): string {
  return `NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e
    WHERE e.classid = 'pg_catalog.${catalog}'::regclass AND e.objid = ${oid} AND e.deptype = 'e')`;
}

/** Joins `x.rel` to its relation and schema, keeping only user relations not owned by an extension. */
const REL = `JOIN pg_catalog.pg_class c ON c.oid = x.rel JOIN nsp n ON n.oid = c.relnamespace
  WHERE ${notExtension('pg_class', 'c.oid')}`;
const ON = `n.nspname AS schema, c.relname::text AS table`;

const SQL = {
  schemas: `${NSP} SELECT nspname AS name FROM nsp`,
  tables: `${NSP} SELECT n.nspname AS schema, c.relname::text AS name, c.oid::text AS id,
      CASE c.relkind WHEN 'p' THEN 'partitioned table' ELSE 'table' END AS kind,
      c.relpersistence = 'u' AS unlogged, c.relrowsecurity AS "rowSecurity",
      c.relforcerowsecurity AS "forceRowSecurity",
      CASE c.relreplident WHEN 'n' THEN 'nothing' WHEN 'f' THEN 'full' WHEN 'i' THEN 'index' ELSE 'default' END AS "replicaIdentity",
      coalesce(c.reloptions, '{}') AS options,
      CASE WHEN c.relkind = 'p' THEN pg_catalog.pg_get_partkeydef(c.oid) END AS "partitionKey",
      pg_catalog.pg_get_expr(c.relpartbound, c.oid) AS "partitionBound",
      ARRAY(SELECT ARRAY[pn.nspname::text, p.relname::text] FROM pg_catalog.pg_inherits i
        JOIN pg_catalog.pg_class p ON p.oid = i.inhparent JOIN pg_catalog.pg_namespace pn ON pn.oid = p.relnamespace
        WHERE i.inhrelid = c.oid ORDER BY i.inhseqno) AS inherits
    FROM (SELECT oid AS rel FROM pg_catalog.pg_class WHERE relkind IN ('r', 'p')) x ${REL}`,
  columns: `${NSP} SELECT ${ON}, a.attname::text AS name, a.attrelid::text || ':' || a.attnum AS id,
      pg_catalog.format_type(a.atttypid, a.atttypmod) AS type,
      a.attnotnull AS "notNull", CASE WHEN a.attgenerated = '' THEN pg_catalog.pg_get_expr(d.adbin, d.adrelid) END AS default,
      CASE a.attidentity WHEN 'a' THEN 'always' WHEN 'd' THEN 'by default' END AS identity,
      CASE WHEN a.attgenerated <> '' THEN 'GENERATED ALWAYS AS (' || pg_catalog.pg_get_expr(d.adbin, d.adrelid) || ') '
        || CASE a.attgenerated WHEN 's' THEN 'STORED' ELSE 'VIRTUAL' END END AS generated,
      CASE WHEN a.attcollation <> t.typcollation THEN CASE WHEN cn.nspname = 'pg_catalog' THEN quote_ident(co.collname)
        ELSE quote_ident(cn.nspname) || '.' || quote_ident(co.collname) END END AS collation
    FROM (SELECT attrelid AS rel, * FROM pg_catalog.pg_attribute WHERE attnum > 0 AND NOT attisdropped) a
    JOIN pg_catalog.pg_class c ON c.oid = a.rel JOIN nsp n ON n.oid = c.relnamespace
    JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
    LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    LEFT JOIN pg_catalog.pg_collation co ON co.oid = a.attcollation
    LEFT JOIN pg_catalog.pg_namespace cn ON cn.oid = co.collnamespace
    WHERE c.relkind IN ('r', 'p') AND ${notExtension('pg_class', 'c.oid')} ORDER BY a.attnum`,
  // An index backing a constraint is reported as that constraint. Indexes, constraints and
  // triggers a partition inherits from its parent are derived (their names depend on creation
  // order), so only the parent's are kept.
  indexes: `${NSP} SELECT n.nspname AS schema, ic.relname::text AS name, c.relname::text AS table,
      pg_catalog.pg_get_indexdef(x.indexrelid) AS definition, x.indisvalid AS valid
    FROM (SELECT indrelid AS rel, * FROM pg_catalog.pg_index) x JOIN pg_catalog.pg_class ic ON ic.oid = x.indexrelid ${REL}
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint k
        WHERE k.conindid = x.indexrelid AND k.conrelid = x.indrelid AND k.contype IN ('p', 'u', 'x'))
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_inherits h WHERE h.inhrelid = x.indexrelid)`,
  // PG 18 also records NOT NULL as contype 'n'; nullability is reported on the column instead.
  constraints: `${NSP} SELECT ${ON}, x.conname::text AS name, pg_catalog.pg_get_constraintdef(x.oid) AS definition,
      CASE x.contype WHEN 'p' THEN 'primary key' WHEN 'u' THEN 'unique' WHEN 'f' THEN 'foreign key'
        WHEN 'c' THEN 'check' ELSE 'exclusion' END AS type
    FROM (SELECT conrelid AS rel, * FROM pg_catalog.pg_constraint
      WHERE contype IN ('p', 'u', 'f', 'c', 'x') AND conparentid = 0 AND conislocal) x ${REL}`,
  enums: `${NSP} SELECT n.nspname AS schema, t.typname::text AS name,
      ARRAY(SELECT e.enumlabel::text FROM pg_catalog.pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) AS labels
    FROM pg_catalog.pg_type t JOIN nsp n ON n.oid = t.typnamespace
    WHERE t.typtype = 'e' AND ${notExtension('pg_type', 't.oid')}`,
  views: `${NSP} SELECT n.nspname AS schema, c.relname::text AS name,
      CASE c.relkind WHEN 'm' THEN 'materialized view' ELSE 'view' END AS kind,
      pg_catalog.pg_get_viewdef(c.oid, true) AS definition, coalesce(c.reloptions, '{}') AS options
    FROM (SELECT oid AS rel FROM pg_catalog.pg_class WHERE relkind IN ('v', 'm')) x ${REL}`,
  functions: `${NSP} SELECT n.nspname AS schema, p.proname::text AS name,
      CASE p.prokind WHEN 'p' THEN 'procedure' WHEN 'a' THEN 'aggregate' WHEN 'w' THEN 'window' ELSE 'function' END AS kind,
      pg_catalog.pg_get_function_identity_arguments(p.oid) AS "identityArguments",
      pg_catalog.pg_get_function_arguments(p.oid) AS arguments, pg_catalog.pg_get_function_result(p.oid) AS result,
      l.lanname::text AS language, p.proisstrict AS strict, p.prosecdef AS "securityDefiner",
      CASE p.provolatile WHEN 'i' THEN 'immutable' WHEN 's' THEN 'stable' ELSE 'volatile' END AS volatility,
      CASE p.proparallel WHEN 's' THEN 'safe' WHEN 'r' THEN 'restricted' ELSE 'unsafe' END AS parallel,
      coalesce(p.proconfig, '{}') AS config,
      encode(sha256(convert_to(concat_ws(chr(31), p.prosrc, p.probin, pg_catalog.pg_get_function_sqlbody(p.oid)),
        'UTF8')), 'hex') AS "bodyHash"
    FROM pg_catalog.pg_proc p JOIN nsp n ON n.oid = p.pronamespace JOIN pg_catalog.pg_language l ON l.oid = p.prolang
    WHERE ${notExtension('pg_proc', 'p.oid')}`,
  // Identity sequences (deptype 'i') belong to their column's identity and are named at creation.
  sequences: `${NSP} SELECT n.nspname AS schema, c.relname::text AS name, pg_catalog.format_type(s.seqtypid, NULL) AS type,
      s.seqstart::text AS start, s.seqincrement::text AS increment, s.seqmin::text AS min, s.seqmax::text AS max,
      s.seqcache::text AS cache, s.seqcycle AS cycle, oc.relname::text AS table, oa.attname::text AS column
    FROM (SELECT seqrelid AS rel, * FROM pg_catalog.pg_sequence) s
    JOIN pg_catalog.pg_class c ON c.oid = s.rel JOIN nsp n ON n.oid = c.relnamespace
    LEFT JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid
      AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjsubid > 0 AND d.deptype IN ('a', 'i')
    LEFT JOIN pg_catalog.pg_class oc ON oc.oid = d.refobjid
    LEFT JOIN pg_catalog.pg_attribute oa ON oa.attrelid = d.refobjid AND oa.attnum = d.refobjsubid
    WHERE d.deptype IS DISTINCT FROM 'i' AND ${notExtension('pg_class', 'c.oid')}`,
  triggers: `${NSP} SELECT ${ON}, x.tgname::text AS name, pg_catalog.pg_get_triggerdef(x.oid) AS definition,
      CASE x.tgenabled WHEN 'O' THEN 'origin' WHEN 'D' THEN 'disabled' WHEN 'R' THEN 'replica' ELSE 'always' END AS enabled
    FROM (SELECT tgrelid AS rel, * FROM pg_catalog.pg_trigger WHERE NOT tgisinternal AND tgparentid = 0) x ${REL}`,
};

type TableRow = Omit<TableInfo, 'columns' | 'inherits'> & { id: string; inherits: [string, string][] };
type ColumnRow = ColumnInfo & { schema: string; table: string; id: string };
type SequenceRow = Omit<SequenceInfo, 'ownedBy'> & { table: string | null; column: string | null };

function sortBy<T>(items: T[], key: (item: T) => string): T[] {
  const keyed = items.map((item) => ({ item, k: key(item) }));
  return keyed.sort((a, b) => compareKeys(a.k, b.k)).map(({ item }) => item);
}

const byName = (o: { schema: string; name: string }): string => qualifiedName(o.schema, o.name);
const onTable = (o: { schema: string; table: string; name: string }): string =>
  qualifiedName(o.schema, o.table, o.name);

type Query = <T extends object>(sql: string) => Promise<T[]>;
const sorted = (items: readonly string[]): string[] => [...items].sort(compareKeys);
const identified = (o: { type: string; identity: string }): string => `${o.type} ${o.identity}`;

async function snapshotExtras(
  query: Query,
  kept: (schema: string, table: string | null) => boolean,
): Promise<ExtraObjects> {
  const run = <T extends object>(sql: string): Promise<T[]> => query<T>(`${NSP} ${sql}`);
  // Privileges and comments on an ignored table (the bookkeeping table) are its business, not the PR's.
  const onKeptRelation = <T extends { rel: string | null }>(rows: T[]): Omit<T, 'rel'>[] =>
    rows.filter((r) => r.rel === null || kept('', r.rel)).map(({ rel: _rel, ...r }) => r);
  const privileges = onKeptRelation(await run<PrivilegeInfo & { rel: string | null }>(EXTRA_SQL.privileges));
  return {
    extensions: sortBy(await run<ExtensionInfo>(EXTRA_SQL.extensions), (e) => qualifiedName(e.name)),
    collations: sortBy(await run<CollationInfo>(EXTRA_SQL.collations), byName),
    domains: sortBy(
      (await run<DomainInfo>(EXTRA_SQL.domains)).map((d) => ({ ...d, constraints: sorted(d.constraints) })),
      byName,
    ),
    types: sortBy(await run<TypeInfo>(EXTRA_SQL.types), byName),
    policies: sortBy(
      (await run<PolicyInfo>(EXTRA_SQL.policies))
        .filter((p) => kept(p.schema, p.table))
        .map((p) => ({ ...p, roles: sorted(p.roles) })),
      onTable,
    ),
    privileges: sortBy(
      privileges.map((p) => ({ ...p, grants: sorted(p.grants) })),
      identified,
    ),
    comments: sortBy(onKeptRelation(await run<CommentInfo & { rel: string | null }>(EXTRA_SQL.comments)), identified),
  };
}

/** How a snapshot uses its connection (not what it reads: that is SnapshotOptions). */
export interface SnapshotHow {
  /**
   * The connection is the caller's own and kept for more snapshots (a schema session's): its catalog
   * queries are prepared on it once and only executed after that. Planning them was ~40% of a read.
   */
  reuse?: boolean;
}

type Results = { rows: object[] }[];

async function runBatch(client: Queryable, statements: readonly string[]): Promise<Results> {
  return (await client.query(statements.join(';\n'))) as unknown as Results;
}

/** Statement names prepared on a connection, by query text; null: it reads plainly from now on. */
const preparedOn = new WeakMap<Queryable, Map<string, string> | null>();
/**
 * This process's own prefix: behind a transaction-mode pooler (PgBouncer) an EXECUTE can reach a
 * server connection another process prepared on, where the same name must not mean other text.
 */
const statementPrefix = `consort_snapshot_${randomBytes(4).toString('hex')}_`;
let lastStatement = 0;

/**
 * The batch with its statements (all but `head`) run as prepared statements on this connection:
 * still one exchange; the first one also prepares them (after `head`, so with its search_path).
 * Names are never reused. A batch that fails (its statements are gone: a DISCARD ALL, a pooler that
 * hands out another server connection; or a statement failed) is read again plainly, and so is every
 * later one on that connection: nothing more is prepared where it may not last.
 */
async function runPrepared(
  client: Queryable,
  head: readonly string[],
  statements: readonly string[],
): Promise<Results> {
  const known = preparedOn.get(client);
  if (known === null) return runBatch(client, [...head, ...statements]);
  const names = known ?? new Map<string, string>();
  preparedOn.set(client, names);
  const missing = [...new Set(statements.filter((sql) => !names.has(sql)))];
  const fresh = missing.map((sql) => [sql, `${statementPrefix}${++lastStatement}`] as const);
  const prepare = fresh.map(([sql, name]) => `PREPARE ${name} AS ${sql}`);
  const execute = statements.map((sql) => `EXECUTE ${names.get(sql) ?? fresh.find(([s]) => s === sql)![1]}`);
  try {
    const results = await runBatch(client, [...head, ...prepare, ...execute]);
    for (const [sql, name] of fresh) names.set(sql, name);
    return [...results.slice(0, head.length), ...results.slice(head.length + prepare.length)];
  } catch {
    preparedOn.set(client, null);
    return runBatch(client, [...head, ...statements]);
  }
}

export async function snapshotSchema(
  client: Queryable,
  options: SnapshotOptions = {},
  how: SnapshotHow = {},
): Promise<SchemaSnapshot> {
  const ignore = new Set(options.ignoreTables ?? ['pgmigrations']);
  const kept = (schema: string, table: string | null): boolean =>
    table === null || !(ignore.has(table) || ignore.has(`${schema}.${table}`));
  const keep = <T extends { schema: string; table: string }>(rows: T[]): T[] =>
    rows.filter((r) => kept(r.schema, r.table));
  const params = [options.schemas ?? null];
  // Every catalog query in one round trip (a simple-protocol batch: the schemas filter inlined as a
  // literal), so a snapshot costs one exchange with the server instead of twenty — what matters on a
  // busy machine, where each exchange waits for the CPU twice. Rows are parsed as before (text format).
  const filter = options.schemas ? `ARRAY[${options.schemas.map(quoteLiteral).join(', ')}]::text[]` : 'NULL::text[]';
  const texts = [...Object.values(SQL), ...Object.values(EXTRA_SQL).map((sql) => `${NSP} ${sql}`)];
  // With only pg_catalog on the path, pg_get_*def and format_type qualify every user object, so
  // the text does not depend on the caller's search_path. The caller's setting is restored.
  const head = [
    `SELECT current_setting('search_path') AS path`,
    `SELECT set_config('search_path', 'pg_catalog', false)`,
  ];
  const statements = texts.map((sql) => sql.replaceAll('$1::text[]', filter));
  const results = how.reuse
    ? await runPrepared(client, head, statements)
    : await runBatch(client, [...head, ...statements]);
  const saved = results[0] as { rows: { path: string }[] };
  const fetched = new Map(texts.map((sql, i) => [sql, results[i + head.length]!.rows]));
  const query = async <T extends object>(sql: string): Promise<T[]> =>
    (fetched.get(sql) as T[] | undefined) ?? (await client.query<T>(sql, params)).rows;
  try {
    const ids: SnapshotIds = { tables: {}, columns: {} };
    const columns = new Map<string, ColumnInfo[]>();
    for (const { schema, table, id, ...column } of await query<ColumnRow>(SQL.columns)) {
      const key = qualifiedName(schema, table);
      columns.set(key, [...(columns.get(key) ?? []), column]);
      ids.columns[qualifiedName(schema, table, column.name)] = id;
    }
    const tables = (await query<TableRow>(SQL.tables))
      .filter((t) => kept(t.schema, t.name))
      .map(({ id, ...t }): TableInfo => {
        ids.tables[byName(t)] = id;
        return {
          ...t,
          options: [...t.options].sort(compareKeys),
          inherits: t.inherits.map(([schema, name]) => qualifiedName(schema, name)),
          columns: columns.get(byName(t)) ?? [],
        };
      });
    const sequences = (await query<SequenceRow>(SQL.sequences))
      .filter((s) => kept(s.schema, s.table))
      .map(({ table, column, ...s }): SequenceInfo => ({
        ...s,
        ownedBy: table === null || column === null ? null : qualifiedName(table, column),
      }));
    const views = await query<ViewInfo>(SQL.views);
    const extra = await snapshotExtras(query, kept);
    const functions = await query<FunctionInfo>(SQL.functions);
    return {
      ids,
      schemas: sortBy(await query<SchemaInfo>(SQL.schemas), (s) => qualifiedName(s.name)),
      tables: sortBy(tables, byName),
      indexes: sortBy(keep(await query<IndexInfo>(SQL.indexes)), byName),
      constraints: sortBy(keep(await query<ConstraintInfo>(SQL.constraints)), onTable),
      enums: sortBy(await query<EnumInfo>(SQL.enums), byName),
      views: sortBy(
        views.map((v) => ({ ...v, options: [...v.options].sort(compareKeys) })),
        byName,
      ),
      functions: sortBy(
        functions.map((f) => ({ ...f, config: [...f.config].sort(compareKeys) })),
        (f) => `${byName(f)}(${f.identityArguments})`,
      ),
      sequences: sortBy(sequences, byName),
      triggers: sortBy(keep(await query<TriggerInfo>(SQL.triggers)), onTable),
      ...extra,
    };
  } finally {
    // Inside a caller's failed transaction this cannot run, but the rollback reverts our SET anyway;
    // not masking the original error matters more.
    await client
      .query(`SELECT set_config('search_path', $1, false)`, [saved.rows[0]?.path ?? ''])
      .catch(() => undefined);
  }
}
