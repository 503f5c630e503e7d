/**
 * Pure renderers for a schema diff: plain text (CLI, logs) and bounded markdown (PR comments, job
 * summaries). One item is one headline (`+` added, `-` removed, `~` changed) plus optional detail.
 */
import {
  diffCounts,
  OBJECT_KINDS,
  type FieldChange,
  type FieldValue,
  type KindDiff,
  type ObjectKind,
  type SchemaDiff,
  type SchemaObjects,
} from './diff.js';
import { qualifiedName, type ColumnInfo } from './snapshot.js';

interface Item {
  headline: string;
  detail: string[];
}

const INLINE_LIMIT = 100;
const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();
const literal = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const words = (field: string): string => field.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);

function show(v: FieldValue): string {
  if (v === null) return 'none';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'string') return oneLine(v) === '' ? "''" : oneLine(v);
  return `(${v.join(', ')})`;
}

function columnText(c: ColumnInfo): string {
  const parts = [c.type];
  if (c.collation !== null) parts.push(`COLLATE ${c.collation}`);
  if (c.notNull) parts.push('NOT NULL');
  if (c.default !== null) parts.push(`DEFAULT ${oneLine(c.default)}`);
  if (c.identity !== null) parts.push(`GENERATED ${c.identity.toUpperCase()} AS IDENTITY`);
  if (c.generated !== null) parts.push(oneLine(c.generated));
  return parts.join(' ');
}

const plain = (headline: string): Item => ({ headline, detail: [] });
const onTable = (o: { schema: string; table: string; name: string }): string =>
  `${qualifiedName(o.name)} on ${qualifiedName(o.schema, o.table)}`;

interface KindRenderer<T> {
  /** How an object is named in a line, e.g. `table public.users`, `constraint users_pkey on public.users`. */
  name: (key: string, o: T) => string;
  /** What follows the name when the object is added. */
  added: (o: T) => Item;
}

const RENDER: { [K in ObjectKind]: KindRenderer<SchemaObjects[K]> } = {
  extensions: {
    name: (k) => `extension ${k}`,
    added: (e) => plain(` version ${e.version} in schema ${qualifiedName(e.schema)}`),
  },
  schemas: { name: (k) => `schema ${k}`, added: () => plain('') },
  collations: {
    name: (k) => `collation ${k}`,
    added: (c) =>
      plain(
        ` (provider ${c.provider}${c.locale === '' ? '' : `, ${c.locale}`}${c.deterministic ? '' : ', nondeterministic'})`,
      ),
  },
  enums: { name: (k) => `enum ${k}`, added: (e) => plain(` (${e.labels.map(literal).join(', ')})`) },
  domains: {
    name: (k) => `domain ${k}`,
    added: (d) =>
      plain(
        ` ${columnText({ ...d, identity: null, generated: null })}${d.constraints.map((c) => ` CONSTRAINT ${oneLine(c)}`).join('')}`,
      ),
  },
  types: { name: (k, t) => `${t.kind} type ${k}`, added: (t) => plain(` ${oneLine(t.definition)}`) },
  sequences: {
    name: (k) => `sequence ${k}`,
    added: (s) => plain(` ${s.type}${s.ownedBy === null ? '' : ` owned by ${s.ownedBy}`}`),
  },
  tables: {
    name: (k, t) => `${t.kind} ${k}`,
    added: (t) => {
      const parents = t.inherits.join(', ');
      const headline = [
        t.partitionKey === null ? '' : ` PARTITION BY ${t.partitionKey}`,
        t.partitionBound === null ? '' : ` PARTITION OF ${parents} ${t.partitionBound}`,
        t.partitionBound === null && parents !== '' ? ` INHERITS (${parents})` : '',
      ].join('');
      // What a reviewer cannot see in the columns: without these, a table added with row level
      // security reads as one its policies do not yet guard (or the other way round).
      const traits = [
        t.unlogged ? 'UNLOGGED' : '',
        t.options.length > 0 ? `WITH (${t.options.join(', ')})` : '',
        t.rowSecurity ? `ROW LEVEL SECURITY${t.forceRowSecurity ? ' (forced)' : ''}` : '',
        !t.rowSecurity && t.forceRowSecurity ? 'FORCE ROW LEVEL SECURITY (not enabled)' : '',
        t.replicaIdentity === 'default' ? '' : `REPLICA IDENTITY ${t.replicaIdentity.toUpperCase()}`,
      ].filter((x) => x !== '');
      return {
        headline: `${headline}${traits.length > 0 ? `: ${traits.join(', ')}` : ''}`,
        detail: t.columns.map((c) => `    ${qualifiedName(c.name)} ${columnText(c)}`),
      };
    },
  },
  columns: { name: (k) => `column ${k}`, added: (c) => plain(` ${columnText(c)}`) },
  indexes: {
    name: (k) => `index ${k}`,
    added: (i) => plain(`: ${oneLine(i.definition)}${i.valid ? '' : ' (INVALID)'}`),
  },
  constraints: { name: (_k, c) => `constraint ${onTable(c)}`, added: (c) => plain(`: ${oneLine(c.definition)}`) },
  views: {
    name: (k, v) => `${v.kind} ${k}`,
    added: (v) => ({ headline: '', detail: [`    ${oneLine(v.definition)}`] }),
  },
  functions: {
    name: (k, f) => `${f.kind} ${k}`,
    added: (f) =>
      plain(`${f.result === null || f.kind === 'procedure' ? '' : ` returns ${f.result}`} language ${f.language}`),
  },
  triggers: {
    name: (_k, t) => `trigger ${onTable(t)}`,
    added: (t) => ({ headline: '', detail: [`    ${oneLine(t.definition)}`] }),
  },
  policies: {
    name: (_k, p) => `policy ${onTable(p)}`,
    added: (p) =>
      plain(
        `: ${p.permissive ? '' : 'RESTRICTIVE '}FOR ${p.command} TO ${p.roles.join(', ')}${
          p.using === null ? '' : ` USING (${oneLine(p.using)})`
        }${p.withCheck === null ? '' : ` WITH CHECK (${oneLine(p.withCheck)})`}`,
      ),
  },
  privileges: { name: (k) => `privileges on ${k}`, added: (p) => plain(`: ${p.grants.join(', ')}`) },
  comments: { name: (k) => `comment on ${k}`, added: (c) => plain(`: ${literal(oneLine(c.text))}`) },
};

function changeText(kind: ObjectKind, c: FieldChange): Item {
  const { before: b, after: a } = c;
  if (c.field === 'name') return { headline: `renamed from ${show(b)}`, detail: [] };
  if (kind === 'columns' && c.field === 'type') return { headline: `${show(b)} → ${show(a)}`, detail: [] };
  if (c.field === 'notNull') return { headline: a === true ? 'set NOT NULL' : 'drop NOT NULL', detail: [] };
  if (c.field === 'bodyHash') return { headline: 'body changed', detail: [] };
  if (c.field === 'labels' && Array.isArray(b) && Array.isArray(a)) {
    const added = a.filter((l) => !b.includes(l)).map((l) => `add label ${literal(l)}`);
    const removed = b.filter((l) => !a.includes(l)).map((l) => `remove label ${literal(l)}`);
    const parts = [...added, ...removed];
    const headline = parts.length > 0 ? parts.join(', ') : 'labels reordered';
    return { headline, detail: [`    labels: ${show(b)} → ${show(a)}`] };
  }
  const inline = `${words(c.field)} ${show(b)} → ${show(a)}`;
  if (inline.length <= INLINE_LIMIT) return { headline: inline, detail: [] };
  return { headline: `${words(c.field)} changed`, detail: [`    before: ${show(b)}`, `    after:  ${show(a)}`] };
}

function kindItems<K extends ObjectKind>(kind: K, k: KindDiff<SchemaObjects[K]>): Item[] {
  const r: KindRenderer<SchemaObjects[K]> = RENDER[kind];
  return [
    ...k.added.map(({ key, object }) => {
      const extra = r.added(object);
      return { headline: `+ ${r.name(key, object)}${extra.headline}`, detail: extra.detail };
    }),
    ...k.removed.map(({ key, object }) => plain(`- ${r.name(key, object)}`)),
    ...k.changed.flatMap(({ key, after, changes }) =>
      changes.map((c) => {
        const t = changeText(kind, c);
        return { headline: `~ ${r.name(key, after)}: ${t.headline}`, detail: t.detail };
      }),
    ),
  ];
}

function items(d: SchemaDiff): Item[] {
  return OBJECT_KINDS.flatMap((kind) => kindItems(kind, d[kind]));
}

export function renderSchemaDiffText(d: SchemaDiff): string {
  const all = items(d);
  if (all.length === 0) return 'No schema changes.';
  return all.flatMap((i) => [i.headline, ...i.detail]).join('\n');
}

function summary(d: SchemaDiff): string {
  const rows = diffCounts(d).filter((c) => c.added + c.removed + c.changed > 0);
  const total = (f: 'added' | 'removed' | 'changed'): number => rows.reduce((n, r) => n + r[f], 0);
  return [
    `**Schema changes:** ${total('added')} added, ${total('removed')} removed, ${total('changed')} changed`,
    '',
    '| kind | added | removed | changed |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.kind} | ${r.added} | ${r.removed} | ${r.changed} |`),
  ].join('\n');
}

/** A fence longer than any backtick run in the content, so no line can close it early. */
function fenceFor(lines: string[]): string {
  const runs = lines.flatMap((l) => (l.match(/`+/g) ?? []).map((r) => r.length));
  return '`'.repeat(Math.max(3, ...runs.map((n) => n + 1)));
}

const fenced = (fence: string, lines: string[]): string => `${fence}diff\n${lines.join('\n')}\n${fence}`;

const omittedNote = (n: number, more = true): string =>
  `_${n}${more ? ' more' : ''} schema change${n === 1 ? '' : 's'} not shown (size limit)._`;

/**
 * Markdown that never exceeds `maxChars`: detail lines go first, then trailing items (counted in a
 * note), then the listing, then the summary table.
 */
export function renderSchemaDiffMarkdown(d: SchemaDiff, options: { maxChars?: number } = {}): string {
  const maxChars = options.maxChars ?? 60_000;
  const all = items(d);
  if (all.length === 0) return 'No schema changes.'.slice(0, maxChars);
  const head = summary(d);
  const lines = all.flatMap((i) => [i.headline, ...i.detail]);
  const fence = fenceFor(lines);
  const full = `${head}\n\n${fenced(fence, lines)}`;
  if (full.length <= maxChars) return full;
  const headlines = all.map((i) => i.headline);
  const brief = `${head}\n\n${fenced(fence, headlines)}`;
  if (brief.length <= maxChars) return brief;

  // Reserve room for the note with the largest count it can show, then fill with whole items.
  let budget = maxChars - `${head}\n\n${fenced(fence, [])}\n\n${omittedNote(all.length)}`.length;
  let shown = 0;
  for (const line of headlines) {
    budget -= line.length + 1;
    if (budget < 0) break;
    shown += 1;
  }
  if (shown > 0) return `${head}\n\n${fenced(fence, headlines.slice(0, shown))}\n\n${omittedNote(all.length - shown)}`;
  // Below this the table does not fit either; the count of what is missing is the most useful part.
  const bare = `${head}\n\n${omittedNote(all.length, false)}`;
  if (bare.length <= maxChars) return bare;
  return omittedNote(all.length, false).slice(0, maxChars);
}
