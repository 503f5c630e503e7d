/**
 * A pure, name-based diff of two schema snapshots. Objects are matched by key (qualified name; for
 * functions, name and identity arguments), so an empty diff means the schemas are the same.
 */
import type {
  CollationInfo,
  CommentInfo,
  DomainInfo,
  ExtensionInfo,
  PolicyInfo,
  PrivilegeInfo,
  TypeInfo,
} from './objects.js';
import {
  compareKeys,
  qualifiedName,
  type ColumnInfo,
  type ConstraintInfo,
  type EnumInfo,
  type FunctionInfo,
  type IndexInfo,
  type SchemaInfo,
  type SchemaSnapshot,
  type SequenceInfo,
  type TableInfo,
  type TriggerInfo,
  type ViewInfo,
} from './snapshot.js';

export interface ColumnEntry extends ColumnInfo {
  schema: string;
  table: string;
}

/** What each kind in a diff holds. Columns are listed only for tables present on both sides. */
export interface SchemaObjects {
  extensions: ExtensionInfo;
  schemas: SchemaInfo;
  collations: CollationInfo;
  enums: EnumInfo;
  domains: DomainInfo;
  types: TypeInfo;
  sequences: SequenceInfo;
  tables: TableInfo;
  columns: ColumnEntry;
  indexes: IndexInfo;
  constraints: ConstraintInfo;
  views: ViewInfo;
  functions: FunctionInfo;
  triggers: TriggerInfo;
  policies: PolicyInfo;
  privileges: PrivilegeInfo;
  comments: CommentInfo;
}
export type ObjectKind = keyof SchemaObjects;

/** The order kinds are reported in: roughly the order a migration would create them. */
export const OBJECT_KINDS: readonly ObjectKind[] = [
  'extensions',
  'schemas',
  'collations',
  'enums',
  'domains',
  'types',
  'sequences',
  'tables',
  'columns',
  'indexes',
  'constraints',
  'views',
  'functions',
  'triggers',
  'policies',
  'privileges',
  'comments',
];

export type FieldValue = string | boolean | null | readonly string[];
export interface FieldChange {
  field: string;
  before: FieldValue;
  after: FieldValue;
}
export interface ObjectEntry<T> {
  key: string;
  object: T;
}
export interface ObjectChange<T> {
  key: string;
  before: T;
  after: T;
  changes: FieldChange[];
}
export interface KindDiff<T> {
  added: ObjectEntry<T>[];
  removed: ObjectEntry<T>[];
  changed: ObjectChange<T>[];
}
export type SchemaDiff = { [K in ObjectKind]: KindDiff<SchemaObjects[K]> };

type ValueFields<T> = { [P in keyof T]: T[P] extends FieldValue ? P : never }[keyof T];
interface KindSpec<T, Id extends PropertyKey> {
  key: (o: T) => string;
  /** Every compared field, in report order; the type forces a new snapshot field to be listed. */
  fields: Record<Exclude<ValueFields<T>, Id>, true>;
}
type Specs = { [K in ObjectKind]: KindSpec<SchemaObjects[K], IdentityOf<K>> };
type IdentityOf<K extends ObjectKind> = K extends 'schemas' | 'extensions'
  ? 'name'
  : K extends 'columns' | 'constraints' | 'triggers' | 'policies'
    ? 'schema' | 'table' | 'name'
    : K extends 'functions'
      ? 'schema' | 'name' | 'identityArguments'
      : K extends 'privileges' | 'comments'
        ? 'type' | 'identity'
        : 'schema' | 'name';

const named = (o: { schema: string; name: string }): string => qualifiedName(o.schema, o.name);
const onTable = (o: { schema: string; table: string; name: string }): string =>
  qualifiedName(o.schema, o.table, o.name);

const identified = (o: { type: string; identity: string }): string => `${o.type} ${o.identity}`;

export const KIND_SPECS: Specs = {
  extensions: { key: (e) => qualifiedName(e.name), fields: { version: true, schema: true } },
  schemas: { key: (s) => qualifiedName(s.name), fields: {} },
  collations: { key: named, fields: { provider: true, locale: true, deterministic: true } },
  enums: { key: named, fields: { labels: true } },
  domains: { key: named, fields: { type: true, notNull: true, default: true, collation: true, constraints: true } },
  types: { key: named, fields: { kind: true, definition: true } },
  sequences: {
    key: named,
    fields: { type: true, start: true, increment: true, min: true, max: true, cache: true, cycle: true, ownedBy: true },
  },
  tables: {
    key: named,
    fields: {
      kind: true,
      partitionKey: true,
      partitionBound: true,
      inherits: true,
      unlogged: true,
      rowSecurity: true,
      forceRowSecurity: true,
      replicaIdentity: true,
      options: true,
    },
  },
  columns: {
    key: onTable,
    fields: { type: true, notNull: true, default: true, identity: true, generated: true, collation: true },
  },
  indexes: { key: named, fields: { table: true, definition: true, valid: true } },
  constraints: { key: onTable, fields: { type: true, definition: true } },
  views: { key: named, fields: { kind: true, definition: true, options: true } },
  functions: {
    key: (f) => `${named(f)}(${f.identityArguments})`,
    fields: {
      kind: true,
      arguments: true,
      result: true,
      language: true,
      volatility: true,
      strict: true,
      securityDefiner: true,
      parallel: true,
      config: true,
      bodyHash: true,
    },
  },
  triggers: { key: onTable, fields: { definition: true, enabled: true } },
  policies: { key: onTable, fields: { command: true, permissive: true, roles: true, using: true, withCheck: true } },
  privileges: { key: identified, fields: { grants: true } },
  comments: { key: identified, fields: { text: true } },
};

function sameValue(a: FieldValue, b: FieldValue): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => x === b[i]);
  return a === b;
}

function fieldChanges<T extends object>(fields: object, before: T, after: T): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const field of Object.keys(fields) as (keyof T & string)[]) {
    const b = before[field] as FieldValue;
    const a = after[field] as FieldValue;
    if (!sameValue(b, a)) changes.push({ field, before: b, after: a });
  }
  return changes;
}

function diffKind<T extends object>(
  spec: { key: (o: T) => string; fields: object },
  before: T[],
  after: T[],
): KindDiff<T> {
  const index = (items: T[]): Map<string, T> => new Map(items.map((o) => [spec.key(o), o]));
  const b = index(before);
  const a = index(after);
  const sorted = (m: Map<string, T>, other: Map<string, T>): ObjectEntry<T>[] =>
    [...m.keys()]
      .filter((k) => !other.has(k))
      .sort(compareKeys)
      .map((key) => ({ key, object: m.get(key) as T }));
  const changed: ObjectChange<T>[] = [];
  for (const key of [...b.keys()].filter((k) => a.has(k)).sort(compareKeys)) {
    const [was, now] = [b.get(key) as T, a.get(key) as T];
    const changes = fieldChanges(spec.fields, was, now);
    if (changes.length > 0) changed.push({ key, before: was, after: now, changes });
  }
  return { added: sorted(a, b), removed: sorted(b, a), changed };
}

/** Columns of tables on both sides; those of added or removed tables go with their table. */
function columnsOf(tables: TableInfo[], keep: Set<string>): ColumnEntry[] {
  return tables
    .filter((t) => keep.has(named(t)))
    .flatMap((t) => t.columns.map((c) => ({ schema: t.schema, table: t.name, ...c })));
}

/** Only the relative order of columns present on both sides counts: dropping one is not a reorder. */
function columnOrderChange(before: TableInfo, after: TableInfo): FieldChange | undefined {
  const inAfter = new Set(after.columns.map((c) => c.name));
  const inBefore = new Set(before.columns.map((c) => c.name));
  const b = before.columns.map((c) => c.name).filter((n) => inAfter.has(n));
  const a = after.columns.map((c) => c.name).filter((n) => inBefore.has(n));
  return sameValue(b, a) ? undefined : { field: 'columnOrder', before: b, after: a };
}

/**
 * A partition's columns are its parent's: a column added to, dropped from or altered on a
 * partitioned table is added, dropped or altered on every partition alike. Such an entry of a
 * partition is left to its parent's (one line, not one per partition); a partition's own
 * difference (a default or NOT NULL set on it alone) stays. Each partition is compared with its
 * immediate parent before anything is folded, so partitions of partitions fold too.
 */
function foldPartitionColumns(
  columns: KindDiff<ColumnEntry>,
  before: SchemaSnapshot,
  after: SchemaSnapshot,
): KindDiff<ColumnEntry> {
  const parentOf = new Map<string, string>();
  for (const t of [...before.tables, ...after.tables])
    if (t.partitionBound !== null && t.inherits[0] !== undefined) parentOf.set(named(t), t.inherits[0]);
  const spec = KIND_SPECS.columns;
  const sameFields = (x: ColumnEntry, y: ColumnEntry) => fieldChanges(spec.fields, x, y).length === 0;
  /** The key of the same column on the entry's parent table, when the entry's table is a partition. */
  const onParent = (c: ColumnEntry): string | undefined => {
    const parent = parentOf.get(qualifiedName(c.schema, c.table));
    return parent === undefined ? undefined : `${parent}.${qualifiedName(c.name)}`;
  };
  const fold = (entries: ObjectEntry<ColumnEntry>[]): ObjectEntry<ColumnEntry>[] => {
    const byKey = new Map(entries.map((e) => [e.key, e.object]));
    return entries.filter((e) => {
      const key = onParent(e.object);
      const parent = key === undefined ? undefined : byKey.get(key);
      return !(parent && sameFields(parent, e.object));
    });
  };
  const changedByKey = new Map(columns.changed.map((c) => [c.key, c]));
  const changed = columns.changed.filter((c) => {
    const key = onParent(c.after);
    const parent = key === undefined ? undefined : changedByKey.get(key);
    return !(parent && sameFields(parent.before, c.before) && sameFields(parent.after, c.after));
  });
  return { added: fold(columns.added), removed: fold(columns.removed), changed };
}

export function diffSchemas(before: SchemaSnapshot, after: SchemaSnapshot): SchemaDiff {
  const tables = diffKind(KIND_SPECS.tables, before.tables, after.tables);
  const afterTables = new Map(after.tables.map((t) => [named(t), t]));
  const common = new Set(before.tables.map(named).filter((k) => afterTables.has(k)));
  for (const t of before.tables.filter((x) => common.has(named(x)))) {
    const now = afterTables.get(named(t)) as TableInfo;
    const order = columnOrderChange(t, now);
    if (order === undefined) continue;
    const existing = tables.changed.find((c) => c.key === named(t));
    if (existing) existing.changes.push(order);
    else tables.changed.push({ key: named(t), before: t, after: now, changes: [order] });
  }
  tables.changed.sort((x, y) => compareKeys(x.key, y.key));
  return {
    extensions: diffKind(KIND_SPECS.extensions, before.extensions, after.extensions),
    schemas: diffKind(KIND_SPECS.schemas, before.schemas, after.schemas),
    collations: diffKind(KIND_SPECS.collations, before.collations, after.collations),
    enums: diffKind(KIND_SPECS.enums, before.enums, after.enums),
    domains: diffKind(KIND_SPECS.domains, before.domains, after.domains),
    types: diffKind(KIND_SPECS.types, before.types, after.types),
    sequences: diffKind(KIND_SPECS.sequences, before.sequences, after.sequences),
    tables,
    columns: foldPartitionColumns(
      diffKind(KIND_SPECS.columns, columnsOf(before.tables, common), columnsOf(after.tables, common)),
      before,
      after,
    ),
    indexes: diffKind(KIND_SPECS.indexes, before.indexes, after.indexes),
    constraints: diffKind(KIND_SPECS.constraints, before.constraints, after.constraints),
    views: diffKind(KIND_SPECS.views, before.views, after.views),
    functions: diffKind(KIND_SPECS.functions, before.functions, after.functions),
    triggers: diffKind(KIND_SPECS.triggers, before.triggers, after.triggers),
    policies: diffKind(KIND_SPECS.policies, before.policies, after.policies),
    privileges: diffKind(KIND_SPECS.privileges, before.privileges, after.privileges),
    comments: diffKind(KIND_SPECS.comments, before.comments, after.comments),
  };
}

export function isEmptyDiff(d: SchemaDiff): boolean {
  return OBJECT_KINDS.every((k) => d[k].added.length + d[k].removed.length + d[k].changed.length === 0);
}

/** Counts per kind, for summaries. */
export function diffCounts(d: SchemaDiff): { kind: ObjectKind; added: number; removed: number; changed: number }[] {
  return OBJECT_KINDS.map((kind) => ({
    kind,
    added: d[kind].added.length,
    removed: d[kind].removed.length,
    changed: d[kind].changed.length,
  }));
}
