/**
 * A pure, name-based diff of two schema snapshots. Objects are matched by key (qualified name; for
 * functions, name and identity arguments), so an empty diff means the schemas are the same.
 *
 * Renames (`{ renames: true }`): when both snapshots say which catalog object each table and column
 * is (`ids`: the same OID and attribute number on a branch and its fork), a table or column gone
 * under one name and new under another is one object renamed: a change with a `name` field, not a
 * removal and an addition. A renamed table's columns, constraints, indexes, triggers and policies
 * are compared under its new name. Only for an `after` that descends from `before` (a snapshot of a
 * branch, then of a fork made after it): sibling branches of separate servers (Neon's, Lakebase's)
 * hand out the same OIDs after they part.
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

/**
 * Only the relative order of columns present on both sides counts: dropping one is not a reorder.
 * `renamed` maps a column's old name to its new one, so a renamed column keeps its place.
 */
function columnOrderChange(
  before: TableInfo,
  after: TableInfo,
  renamed: ReadonlyMap<string, string> = new Map(),
): FieldChange | undefined {
  const nameNow = (n: string): string => renamed.get(n) ?? n;
  const inAfter = new Set(after.columns.map((c) => c.name));
  const inBefore = new Set(before.columns.map((c) => nameNow(c.name)));
  const b = before.columns.map((c) => c.name).filter((n) => inAfter.has(nameNow(n)));
  const a = after.columns.map((c) => c.name).filter((n) => inBefore.has(n));
  return sameValue(b.map(nameNow), a) ? undefined : { field: 'columnOrder', before: b, after: a };
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

/**
 * A name on both sides held by two different objects (their ids differ): the old one dropped and
 * a new one made under its name (`DROP TABLE users; CREATE TABLE users (…)`, a column dropped and
 * added again: its data is gone), renamed away with a new one made under its old name (`ALTER TABLE
 * users RENAME TO users_old; CREATE TABLE users (…)`), or two that swapped names. Compared by name
 * each would read as one object changed. The old one leaves as removed and the new one comes in as
 * added, so pairRenames pairs any of them that only moved to another name.
 */
function splitReplaced<T extends object>(
  diff: KindDiff<T>,
  before: ReadonlyMap<string, T>,
  after: ReadonlyMap<string, T>,
  idBefore: (key: string) => string | undefined,
  idAfter: (key: string) => string | undefined,
): void {
  const replaced = [...before.keys()].filter((key) => {
    const was = idBefore(key);
    const now = idAfter(key);
    return after.has(key) && was !== undefined && now !== undefined && was !== now;
  });
  if (replaced.length === 0) return;
  const gone = new Set(replaced);
  diff.changed = diff.changed.filter((c) => !gone.has(c.key));
  for (const key of replaced) {
    diff.removed.push({ key, object: before.get(key)! });
    diff.added.push({ key, object: after.get(key)! });
  }
  diff.removed.sort((x, y) => compareKeys(x.key, y.key));
  diff.added.sort((x, y) => compareKeys(x.key, y.key));
}

/**
 * Entries removed under one key and added under another that are the same object (the same id on
 * both sides): each becomes a change whose first field is `name`, and leaves the added and removed.
 * Returns those changes.
 */
function pairRenames<T extends object>(
  diff: KindDiff<T>,
  fields: object,
  idBefore: (key: string) => string | undefined,
  idAfter: (key: string) => string | undefined,
  /** How the `name` change reads: a table's qualified name, a column's own. */
  label: (e: ObjectEntry<T>) => string = (e) => e.key,
): ObjectChange<T>[] {
  const added = new Map<string, ObjectEntry<T>>();
  for (const e of diff.added) {
    const id = idAfter(e.key);
    if (id !== undefined) added.set(id, e);
  }
  const renames: ObjectChange<T>[] = [];
  const olds = new Set<string>();
  for (const gone of diff.removed) {
    const id = idBefore(gone.key);
    const now = id === undefined ? undefined : added.get(id);
    if (now === undefined) continue;
    added.delete(id!);
    olds.add(gone.key);
    renames.push({
      key: now.key,
      before: gone.object,
      after: now.object,
      changes: [
        { field: 'name', before: label(gone), after: label(now) },
        ...fieldChanges(fields, gone.object, now.object),
      ],
    });
  }
  const news = new Set(renames.map((r) => r.key));
  diff.removed = diff.removed.filter((e) => !olds.has(e.key));
  diff.added = diff.added.filter((e) => !news.has(e.key));
  diff.changed = [...diff.changed, ...renames].sort((x, y) => compareKeys(x.key, y.key));
  return renames;
}

/** A renamed table: as it was on `before`, and as it is now. */
interface TableRename {
  was: TableInfo;
  now: TableInfo;
}

/** Objects on a renamed table (by its old key), as they would read under the table's new name. */
function onRenamedTable<T extends { schema: string; table: string }>(
  renamed: ReadonlyMap<string, TableRename>,
  items: T[],
): T[] {
  if (renamed.size === 0) return items;
  return items.map((o) => {
    const r = renamed.get(qualifiedName(o.schema, o.table));
    return r === undefined ? o : { ...o, schema: r.now.schema, table: r.now.name };
  });
}

/**
 * Definitions name tables (an index's or trigger's `ON public.orders …`, a foreign key's
 * `REFERENCES public.orders(id)`): the `before` side's read under the renamed tables' new names,
 * so only what else changed shows. PostgreSQL quotes a name that is a keyword, Consort's keys do
 * not: both spellings are tried.
 */
function withDefinitionRenamed<T extends { definition: string }>(
  renamed: ReadonlyMap<string, TableRename>,
  items: T[],
): T[] {
  if (renamed.size === 0) return items;
  const quoted = (...parts: string[]) => parts.map((p) => `"${p.replace(/"/g, '""')}"`).join('.');
  const spellings = [...renamed.values()].map(({ was, now }) => ({
    was: [qualifiedName(was.schema, was.name), quoted(was.schema, was.name)],
    now: qualifiedName(now.schema, now.name),
  }));
  const rewrite = (definition: string): string => {
    let out = definition;
    for (const { was, now } of spellings)
      for (const w of was)
        out = out.replaceAll(` ON ${w} `, ` ON ${now} `).replaceAll(`REFERENCES ${w}(`, `REFERENCES ${now}(`);
    return out;
  };
  return items.map((o) => ({ ...o, definition: rewrite(o.definition) }));
}

export function diffSchemas(
  before: SchemaSnapshot,
  after: SchemaSnapshot,
  options: { renames?: boolean } = {},
): SchemaDiff {
  const ids =
    options.renames === true && before.ids !== undefined && after.ids !== undefined
      ? { before: before.ids, after: after.ids }
      : null;
  const tables = diffKind(KIND_SPECS.tables, before.tables, after.tables);
  const afterTables = new Map(after.tables.map((t) => [named(t), t]));
  /** Old key → the renamed table. */
  const renamed = new Map<string, TableRename>();
  if (ids) {
    const idBefore = (k: string) => ids.before.tables[k];
    const idAfter = (k: string) => ids.after.tables[k];
    splitReplaced(tables, new Map(before.tables.map((t) => [named(t), t])), afterTables, idBefore, idAfter);
    for (const r of pairRenames(tables, KIND_SPECS.tables.fields, idBefore, idAfter))
      renamed.set(named(r.before), { was: r.before, now: r.after });
  }
  // Tables on both sides, `before`'s under their new names when renamed: with ids, only the same
  // table (one dropped and made again under its name is a removed and an added table, its columns
  // with it).
  const commonBefore: TableInfo[] = [];
  /** Column ids by the key each column of `before` is compared under (its table's new name when renamed). */
  const beforeColumnIds = new Map<string, string>();
  for (const t of before.tables) {
    const now = renamed.get(named(t))?.now;
    const moved = now === undefined ? t : { ...t, schema: now.schema, name: now.name };
    if (!afterTables.has(named(moved))) continue;
    if (ids) {
      const was = ids.before.tables[named(t)];
      const is = ids.after.tables[named(moved)];
      if (was !== undefined && is !== undefined && was !== is) continue;
    }
    commonBefore.push(moved);
    for (const c of t.columns) {
      const id = ids?.before.columns[qualifiedName(t.schema, t.name, c.name)];
      if (id !== undefined) beforeColumnIds.set(qualifiedName(moved.schema, moved.name, c.name), id);
    }
  }
  const common = new Set(commonBefore.map(named));
  const beforeColumns = columnsOf(commonBefore, common);
  const afterColumns = columnsOf(after.tables, common);
  const columns = diffKind(KIND_SPECS.columns, beforeColumns, afterColumns);
  /** Per table (its key now), a renamed column's old name → its new name. */
  const renamedColumns = new Map<string, Map<string, string>>();
  if (ids) {
    const idBefore = (k: string) => beforeColumnIds.get(k);
    const idAfter = (k: string) => ids.after.columns[k];
    const byKey = (cs: ColumnEntry[]) => new Map(cs.map((c) => [KIND_SPECS.columns.key(c), c]));
    splitReplaced(columns, byKey(beforeColumns), byKey(afterColumns), idBefore, idAfter);
    for (const { before: was, after: now } of pairRenames(
      columns,
      KIND_SPECS.columns.fields,
      idBefore,
      idAfter,
      (e) => e.object.name,
    )) {
      const table = qualifiedName(now.schema, now.table);
      renamedColumns.set(table, (renamedColumns.get(table) ?? new Map()).set(was.name, now.name));
    }
  }
  // A column dropped and added again under its name (with ids: removed and added under one key) is
  // a new column at the end, not a reorder.
  const addedColumns = new Set(columns.added.map((e) => e.key));
  const replacedColumns = new Set(columns.removed.filter((e) => addedColumns.has(e.key)).map((e) => e.key));
  for (const t of commonBefore) {
    const now = afterTables.get(named(t)) as TableInfo;
    const same = (table: TableInfo): TableInfo => ({
      ...table,
      columns: table.columns.filter((c) => !replacedColumns.has(qualifiedName(now.schema, now.name, c.name))),
    });
    const order = columnOrderChange(same(t), same(now), renamedColumns.get(named(t)));
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
    columns: foldPartitionColumns(columns, before, after),
    indexes: diffKind(
      KIND_SPECS.indexes,
      withDefinitionRenamed(renamed, onRenamedTable(renamed, before.indexes)),
      after.indexes,
    ),
    constraints: diffKind(
      KIND_SPECS.constraints,
      withDefinitionRenamed(renamed, onRenamedTable(renamed, before.constraints)),
      after.constraints,
    ),
    views: diffKind(KIND_SPECS.views, before.views, after.views),
    functions: diffKind(KIND_SPECS.functions, before.functions, after.functions),
    triggers: diffKind(
      KIND_SPECS.triggers,
      withDefinitionRenamed(renamed, onRenamedTable(renamed, before.triggers)),
      after.triggers,
    ),
    policies: diffKind(KIND_SPECS.policies, onRenamedTable(renamed, before.policies), after.policies),
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
