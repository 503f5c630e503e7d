import { diffSchemas, isEmptyDiff, OBJECT_KINDS, type FieldChange, type SchemaDiff } from '../../src/schema/diff.js';
import type { ColumnInfo, FunctionInfo, SchemaSnapshot, TableInfo } from '../../src/schema/snapshot.js';

const col = (name: string, over: Partial<ColumnInfo> = {}): ColumnInfo => ({
  name,
  type: 'text',
  notNull: false,
  default: null,
  identity: null,
  generated: null,
  collation: null,
  ...over,
});
const table = (name: string, columns: ColumnInfo[], over: Partial<TableInfo> = {}): TableInfo => ({
  schema: 'public',
  name,
  kind: 'table',
  unlogged: false,
  rowSecurity: false,
  forceRowSecurity: false,
  replicaIdentity: 'default',
  options: [],
  partitionKey: null,
  partitionBound: null,
  inherits: [],
  columns,
  ...over,
});
const fn = (name: string, identityArguments: string, over: Partial<FunctionInfo> = {}): FunctionInfo => ({
  schema: 'public',
  name,
  kind: 'function',
  identityArguments,
  arguments: identityArguments,
  result: 'integer',
  language: 'sql',
  volatility: 'volatile',
  strict: false,
  securityDefiner: false,
  parallel: 'unsafe',
  config: [],
  bodyHash: 'aaa',
  ...over,
});
const snap = (over: Partial<SchemaSnapshot> = {}): SchemaSnapshot => ({
  schemas: [{ name: 'public' }],
  tables: [],
  indexes: [],
  constraints: [],
  enums: [],
  views: [],
  functions: [],
  sequences: [],
  triggers: [],
  extensions: [],
  collations: [],
  domains: [],
  types: [],
  policies: [],
  privileges: [],
  comments: [],
  ...over,
});

const users = table('users', [col('id', { type: 'bigint', notNull: true }), col('email')]);
const index = (name: string, definition: string) => ({
  schema: 'public',
  name,
  table: 'users',
  definition,
  valid: true,
});

type Summary = Record<
  string,
  { added?: string[]; removed?: string[]; changed?: { key: string; changes: FieldChange[] }[] }
>;

/** Only the non-empty parts of a diff, by key, so each case states exactly what it expects. */
function summarize(d: SchemaDiff): Summary {
  const out: Summary = {};
  for (const kind of OBJECT_KINDS) {
    const k = d[kind];
    const entry: Summary[string] = {};
    if (k.added.length > 0) entry.added = k.added.map((e) => e.key);
    if (k.removed.length > 0) entry.removed = k.removed.map((e) => e.key);
    if (k.changed.length > 0) entry.changed = k.changed.map((c) => ({ key: c.key, changes: c.changes }));
    if (Object.keys(entry).length > 0) out[kind] = entry;
  }
  return out;
}

describe('diffSchemas', () => {
  it.each<[string, SchemaSnapshot, SchemaSnapshot, Summary]>([
    ['identical snapshots', snap({ tables: [users] }), snap({ tables: [users] }), {}],
    [
      'same objects listed in another order',
      snap({ tables: [users, table('a', [col('x')])], schemas: [{ name: 'public' }, { name: 'app' }] }),
      snap({ tables: [table('a', [col('x')]), users], schemas: [{ name: 'app' }, { name: 'public' }] }),
      {},
    ],
    [
      'added schema',
      snap(),
      snap({ schemas: [{ name: 'public' }, { name: 'App' }] }),
      { schemas: { added: ['"App"'] } },
    ],
    [
      'added table (its columns go with it)',
      snap(),
      snap({ tables: [users] }),
      { tables: { added: ['public.users'] } },
    ],
    ['removed table', snap({ tables: [users] }), snap(), { tables: { removed: ['public.users'] } }],
    [
      'added column',
      snap({ tables: [users] }),
      snap({ tables: [table('users', [...users.columns, col('name')])] }),
      { columns: { added: ['public.users.name'] } },
    ],
    [
      'dropped column is not a reorder',
      snap({ tables: [table('t', [col('a'), col('b'), col('c')])] }),
      snap({ tables: [table('t', [col('a'), col('c')])] }),
      { columns: { removed: ['public.t.b'] } },
    ],
    [
      'reordered columns',
      snap({ tables: [table('t', [col('a'), col('b')])] }),
      snap({ tables: [table('t', [col('b'), col('a')])] }),
      {
        tables: {
          changed: [{ key: 'public.t', changes: [{ field: 'columnOrder', before: ['a', 'b'], after: ['b', 'a'] }] }],
        },
      },
    ],
    [
      'column type, nullability and default',
      snap({ tables: [users] }),
      snap({
        tables: [
          table('users', [
            col('id', { type: 'bigint' }),
            col('email', { type: 'character varying(255)', default: "''::text" }),
          ]),
        ],
      }),
      {
        columns: {
          changed: [
            {
              key: 'public.users.email',
              changes: [
                { field: 'type', before: 'text', after: 'character varying(255)' },
                { field: 'default', before: null, after: "''::text" },
              ],
            },
            { key: 'public.users.id', changes: [{ field: 'notNull', before: true, after: false }] },
          ],
        },
      },
    ],
    [
      'table attribute',
      snap({ tables: [users] }),
      snap({ tables: [{ ...users, rowSecurity: true, options: ['fillfactor=70'] }] }),
      {
        tables: {
          changed: [
            {
              key: 'public.users',
              changes: [
                { field: 'rowSecurity', before: false, after: true },
                { field: 'options', before: [], after: ['fillfactor=70'] },
              ],
            },
          ],
        },
      },
    ],
    [
      'index definition',
      snap({ indexes: [index('i', 'CREATE INDEX i ON public.users USING btree (email)')] }),
      snap({ indexes: [index('i', 'CREATE INDEX i ON public.users USING hash (email)')] }),
      {
        indexes: {
          changed: [
            {
              key: 'public.i',
              changes: [
                {
                  field: 'definition',
                  before: 'CREATE INDEX i ON public.users USING btree (email)',
                  after: 'CREATE INDEX i ON public.users USING hash (email)',
                },
              ],
            },
          ],
        },
      },
    ],
    [
      'constraints are keyed by table, so equal names on two tables are distinct',
      snap(),
      snap({
        constraints: [
          { schema: 'public', table: 'a', name: 'positive', type: 'check', definition: 'CHECK ((x > 0))' },
          { schema: 'public', table: 'b', name: 'positive', type: 'check', definition: 'CHECK ((x > 0))' },
        ],
      }),
      { constraints: { added: ['public.a.positive', 'public.b.positive'] } },
    ],
    [
      'enum label',
      snap({ enums: [{ schema: 'public', name: 'mood', labels: ['happy', 'sad'] }] }),
      snap({ enums: [{ schema: 'public', name: 'mood', labels: ['happy', 'meh', 'sad'] }] }),
      {
        enums: {
          changed: [
            {
              key: 'public.mood',
              changes: [{ field: 'labels', before: ['happy', 'sad'], after: ['happy', 'meh', 'sad'] }],
            },
          ],
        },
      },
    ],
    [
      'view definition',
      snap({ views: [{ schema: 'public', name: 'v', kind: 'view', definition: 'SELECT 1;', options: [] }] }),
      snap({ views: [{ schema: 'public', name: 'v', kind: 'view', definition: 'SELECT 2;', options: [] }] }),
      {
        views: {
          changed: [{ key: 'public.v', changes: [{ field: 'definition', before: 'SELECT 1;', after: 'SELECT 2;' }] }],
        },
      },
    ],
    [
      'function body and overloads',
      snap({ functions: [fn('f', 'x integer'), fn('f', 'x text')] }),
      snap({ functions: [fn('f', 'x integer', { bodyHash: 'bbb' }), fn('f', 'x text'), fn('f', '')] }),
      {
        functions: {
          added: ['public.f()'],
          changed: [{ key: 'public.f(x integer)', changes: [{ field: 'bodyHash', before: 'aaa', after: 'bbb' }] }],
        },
      },
    ],
    [
      'sequence and trigger',
      snap({
        sequences: [
          {
            schema: 'public',
            name: 's',
            type: 'bigint',
            start: '1',
            increment: '1',
            min: '1',
            max: '9',
            cache: '1',
            cycle: false,
            ownedBy: null,
          },
        ],
        triggers: [{ schema: 'public', table: 'users', name: 't', definition: 'CREATE TRIGGER t', enabled: 'origin' }],
      }),
      snap({
        sequences: [
          {
            schema: 'public',
            name: 's',
            type: 'bigint',
            start: '1',
            increment: '2',
            min: '1',
            max: '9',
            cache: '1',
            cycle: false,
            ownedBy: 'users.id',
          },
        ],
        triggers: [
          { schema: 'public', table: 'users', name: 't', definition: 'CREATE TRIGGER t', enabled: 'disabled' },
        ],
      }),
      {
        sequences: {
          changed: [
            {
              key: 'public.s',
              changes: [
                { field: 'increment', before: '1', after: '2' },
                { field: 'ownedBy', before: null, after: 'users.id' },
              ],
            },
          ],
        },
        triggers: {
          changed: [{ key: 'public.users.t', changes: [{ field: 'enabled', before: 'origin', after: 'disabled' }] }],
        },
      },
    ],
    [
      'names that need quoting stay distinct from dotted look-alikes',
      snap({ tables: [table('a.b', [col('x')])] }),
      snap({ tables: [table('a.b', [col('x')]), { ...table('b', [col('x')]), schema: 'a' }] }),
      { tables: { added: ['a.b'] } },
    ],
  ])('%s', (_name, before, after, expected) => {
    const d = diffSchemas(before, after);
    expect(summarize(d)).toEqual(expected);
    expect(isEmptyDiff(d)).toBe(Object.keys(expected).length === 0);
  });

  it('is symmetric: swapping sides swaps added and removed', () => {
    const before = snap({ tables: [users] });
    const after = snap({
      tables: [table('users', [col('id', { type: 'bigint', notNull: true })])],
      enums: [{ schema: 'public', name: 'e', labels: [] }],
    });
    const forward = summarize(diffSchemas(before, after));
    const backward = summarize(diffSchemas(after, before));
    expect(forward).toEqual({ enums: { added: ['public.e'] }, columns: { removed: ['public.users.email'] } });
    expect(backward).toEqual({ enums: { removed: ['public.e'] }, columns: { added: ['public.users.email'] } });
  });

  it("folds a partition's column change into its parent's, and keeps what differs on the partition alone", () => {
    const parent = (cols: ColumnInfo[]) =>
      table('entries', cols, { kind: 'partitioned table', partitionKey: 'RANGE (booked_on)' });
    const part = (name: string, cols: ColumnInfo[], inherits = 'public.entries') =>
      table(name, cols, { partitionBound: "FOR VALUES FROM ('2024-01-01') TO ('2024-02-01')", inherits: [inherits] });
    const base = [col('booked_on', { type: 'date' }), col('amount', { type: 'amount_minor' })];
    const now = [col('booked_on', { type: 'date' }), col('amount', { type: 'amount_cents' }), col('reference')];
    const before = snap({
      tables: [
        parent(base),
        part('entries_a', base),
        part('entries_b', base),
        part('entries_b_1', base, 'public.entries_b'),
      ],
    });
    const after = snap({
      tables: [
        parent(now),
        part('entries_a', now),
        // its own default: not its parent's change
        part('entries_b', [now[0]!, now[1]!, col('reference', { default: "'b'::text" })]),
        part('entries_b_1', [now[0]!, now[1]!, col('reference', { default: "'b'::text" })], 'public.entries_b'),
      ],
    });
    expect(summarize(diffSchemas(before, after))).toEqual({
      columns: {
        added: ['public.entries.reference', 'public.entries_b.reference'],
        changed: [
          {
            key: 'public.entries.amount',
            changes: [{ field: 'type', before: 'amount_minor', after: 'amount_cents' }],
          },
        ],
      },
    });
    // and the other way round: dropped from the parent, dropped from every partition
    expect(
      summarize(
        diffSchemas(
          snap({ tables: [parent(now), part('entries_a', now)] }),
          snap({ tables: [parent(base), part('entries_a', base)] }),
        ),
      ),
    ).toEqual({
      columns: {
        removed: ['public.entries.reference'],
        changed: [
          { key: 'public.entries.amount', changes: [{ field: 'type', before: 'amount_cents', after: 'amount_minor' }] },
        ],
      },
    });
  });

  it('does not mutate its inputs', () => {
    const before = snap({ tables: [table('t', [col('a'), col('b')])] });
    const after = snap({ tables: [table('t', [col('b'), col('a')])] });
    const copy = structuredClone([before, after]);
    diffSchemas(before, after);
    expect([before, after]).toEqual(copy);
  });
});
