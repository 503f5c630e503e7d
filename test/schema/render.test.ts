import { diffSchemas } from '../../src/schema/diff.js';
import { renderSchemaDiffMarkdown, renderSchemaDiffText } from '../../src/schema/render.js';
import type { ColumnInfo, SchemaSnapshot, TableInfo } from '../../src/schema/snapshot.js';

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

const longView = `SELECT ${Array.from({ length: 12 }, (_, i) => `users.column_number_${i}`).join(',\n    ')}\n   FROM public.users;`;

const before = snap({
  tables: [
    table('users', [
      col('id', { type: 'bigint', notNull: true, identity: 'always' }),
      col('email', { notNull: true }),
      col('legacy'),
    ]),
    table('old', [col('x')]),
  ],
  enums: [{ schema: 'public', name: 'mood', labels: ['happy', 'sad'] }],
  views: [{ schema: 'public', name: 'v', kind: 'view', definition: 'SELECT 1;', options: [] }],
  indexes: [
    {
      schema: 'public',
      name: 'users_legacy_idx',
      table: 'users',
      definition: 'CREATE INDEX users_legacy_idx ON public.users USING btree (legacy)',
      valid: true,
    },
  ],
});
const after = snap({
  tables: [
    table('users', [
      col('id', { type: 'bigint', notNull: true, identity: 'always' }),
      col('email', { type: 'character varying(255)' }),
      col('nickname', { default: "'anon'::text" }),
    ]),
    table('events', [col('at', { type: 'date', notNull: true })], {
      kind: 'partitioned table',
      partitionKey: 'RANGE (at)',
    }),
  ],
  enums: [{ schema: 'public', name: 'mood', labels: ['happy', 'meh', 'sad'] }],
  views: [{ schema: 'public', name: 'v', kind: 'view', definition: longView, options: [] }],
  constraints: [
    { schema: 'public', table: 'users', name: 'email_len', type: 'check', definition: 'CHECK ((length(email) > 3))' },
  ],
  functions: [
    {
      schema: 'app',
      name: 'touch',
      kind: 'function',
      identityArguments: '',
      arguments: '',
      result: 'trigger',
      language: 'plpgsql',
      volatility: 'volatile',
      strict: false,
      securityDefiner: false,
      parallel: 'unsafe',
      config: [],
      bodyHash: 'abc',
    },
  ],
});
const diff = diffSchemas(before, after);

describe('renderSchemaDiffText', () => {
  it('renders one line per added, removed and changed item, with detail indented', () => {
    expect(renderSchemaDiffText(diff)).toBe(
      [
        "~ enum public.mood: add label 'meh'",
        '    labels: (happy, sad) → (happy, meh, sad)',
        '+ partitioned table public.events PARTITION BY RANGE (at)',
        '    at date NOT NULL',
        '- table public.old',
        "+ column public.users.nickname text DEFAULT 'anon'::text",
        '- column public.users.legacy',
        '~ column public.users.email: text → character varying(255)',
        '~ column public.users.email: drop NOT NULL',
        '- index public.users_legacy_idx',
        '+ constraint email_len on public.users: CHECK ((length(email) > 3))',
        '~ view public.v: definition changed',
        '    before: SELECT 1;',
        `    after:  ${longView.replace(/\s+/g, ' ')}`,
        '+ function app.touch() returns trigger language plpgsql',
      ].join('\n'),
    );
  });

  it('says so when nothing changed', () => {
    expect(renderSchemaDiffText(diffSchemas(before, before))).toBe('No schema changes.');
  });

  it('shows short changes inline and quotes identifiers that need it', () => {
    const d = diffSchemas(
      snap({ tables: [table('Users', [col('a')])] }),
      snap({ tables: [table('Users', [col('a', { default: '0' }), col('b c')], { rowSecurity: true })] }),
    );
    expect(renderSchemaDiffText(d).split('\n')).toEqual([
      '~ table public."Users": row security no → yes',
      '+ column public."Users"."b c" text',
      '~ column public."Users".a: default none → 0',
    ]);
  });
});

describe('an added table', () => {
  it('says what its columns do not show: row level security, unlogged, storage options, replica identity', () => {
    const d = diffSchemas(
      snap(),
      snap({
        tables: [
          table('orders', [col('id')], { rowSecurity: true }),
          table('sessions', [col('id')], { unlogged: true, options: ['fillfactor=70'] }),
          table('tenants', [col('id')], { rowSecurity: true, forceRowSecurity: true, replicaIdentity: 'full' }),
          table('plain', [col('id')]),
        ],
      }),
    );
    expect(
      renderSchemaDiffText(d)
        .split('\n')
        .filter((l) => l.startsWith('+')),
    ).toEqual([
      '+ table public.orders: ROW LEVEL SECURITY',
      '+ table public.plain',
      '+ table public.sessions: UNLOGGED, WITH (fillfactor=70)',
      '+ table public.tenants: ROW LEVEL SECURITY (forced), REPLICA IDENTITY FULL',
    ]);
  });
});

describe('renderSchemaDiffMarkdown', () => {
  const many = diffSchemas(
    snap(),
    snap({
      tables: Array.from({ length: 400 }, (_, i) =>
        table(`table_${String(i).padStart(3, '0')}`, [col('id'), col('payload')]),
      ),
    }),
  );

  it('shows a summary and every line when it fits', () => {
    const md = renderSchemaDiffMarkdown(diff, { maxChars: 10_000 });
    expect(md).toContain('**Schema changes:** 4 added, 3 removed, 3 changed');
    expect(md).toContain('| columns | 1 | 1 | 1 |');
    expect(md).toContain('```diff\n~ enum public.mood');
    expect(md).toContain('    before: SELECT 1;');
    expect(md).not.toContain('not shown');
  });

  it('drops detail before dropping items', () => {
    const full = renderSchemaDiffMarkdown(diff, { maxChars: 10_000 });
    const md = renderSchemaDiffMarkdown(diff, { maxChars: full.length - 1 });
    expect(md).not.toContain('before: SELECT 1;');
    expect(md).toContain('~ view public.v: definition changed');
    expect(md).toContain('+ function app.touch() returns trigger language plpgsql');
    expect(md).not.toContain('not shown');
  });

  it.each<[number, 'all' | 'some' | 'none']>([
    [60_000, 'all'],
    [5_000, 'some'],
    [400, 'some'],
    [200, 'none'],
    [50, 'none'],
  ])('stays within %i characters, showing %s of the items and counting the rest', (maxChars, expected) => {
    const md = renderSchemaDiffMarkdown(many, { maxChars });
    expect(md.length).toBeLessThanOrEqual(maxChars);
    const shown = md.split('\n').filter((l) => l.startsWith('+ table ')).length;
    expect(shown === 400 ? 'all' : shown > 0 ? 'some' : 'none').toBe(expected);
    const note =
      shown === 0
        ? '_400 schema changes not shown (size limit)._'
        : `_${400 - shown} more schema changes not shown (size limit)._`;
    expect(md.endsWith(note)).toBe(shown < 400);
  });

  it('keeps every item when only the detail had to go', () => {
    const full = renderSchemaDiffMarkdown(many, { maxChars: 1_000_000 });
    expect(full).toContain('    id text');
    const md = renderSchemaDiffMarkdown(many, { maxChars: full.length - 1 });
    expect(md.split('\n').filter((l) => l.startsWith('+ table ')).length).toBe(400);
    expect(md).not.toContain('    id text');
  });

  it('uses a fence no definition can close', () => {
    const d = diffSchemas(
      snap(),
      snap({ views: [{ schema: 'public', name: 'v', kind: 'view', definition: "SELECT '```'::text;", options: [] }] }),
    );
    const md = renderSchemaDiffMarkdown(d);
    expect(md).toContain("````diff\n+ view public.v\n    SELECT '```'::text;\n````");
  });

  it('says so when nothing changed', () => {
    expect(renderSchemaDiffMarkdown(diffSchemas(snap(), snap()))).toBe('No schema changes.');
  });
});
