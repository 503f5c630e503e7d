/**
 * What a lint finding is about, read from the SQL squawk's span covers. Squawk reports a rule once
 * per column or constraint (two `int` columns, two `prefer-bigint-over-int`), and in a JS/TS
 * migration every finding of a statement lands on the one `pgm.*` call that sent it: without the
 * object's name, the findings of one line cannot be told apart, nor fixed from the comment.
 *
 * The span is the column's type (`prefer-bigint-over-int`, `ban-char-field`), a clause of an
 * `ALTER TABLE` (`ADD COLUMN g int NOT NULL`, `ALTER COLUMN a SET DATA TYPE bigint`, `SET NOT NULL`,
 * `ADD CONSTRAINT f FOREIGN KEY …`, `DROP CONSTRAINT x`) or the whole statement.
 */

export type LintObjectKind = 'column' | 'constraint' | 'index' | 'table';

export interface LintObject {
  kind: LintObjectKind;
  /** The name as Postgres knows it (quotes removed); an unnamed constraint is its SQL (`FOREIGN KEY (a)`). */
  name: string;
}

const ID = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_\u00C0-\uFFFF][\w$\u00C0-\uFFFF]*)`;
const QUALIFIED = String.raw`(${ID}(?:\s*\.\s*${ID})*)`;
/** Words that follow `ADD`, `ALTER` or `DROP` in a clause, where a column name would otherwise be. */
const KEYWORDS = new Set([
  'column',
  'constraint',
  'primary',
  'unique',
  'foreign',
  'check',
  'exclude',
  'table',
  'index',
  'if',
  'only',
  'type',
  'set',
  'data',
  'not',
  'null',
  'default',
  'references',
]);

/** `"Col ""x"""` → `Col "x"`, `public.t` → `t`: the last part, unquoted. */
function unquote(identifier: string): string {
  const last = identifier.match(new RegExp(ID, 'g'))?.at(-1) ?? identifier;
  return last.startsWith('"') ? last.slice(1, -1).replace(/""/g, '"') : last;
}

const named = (kind: LintObjectKind, identifier: string | undefined): LintObject | undefined =>
  identifier === undefined || KEYWORDS.has(identifier.toLowerCase()) ? undefined : { kind, name: unquote(identifier) };

/** A clause's object from the span's own text: `ADD COLUMN g …`, `DROP CONSTRAINT x`, `ADD UNIQUE (b)`. */
function fromClause(span: string, before: string): LintObject | undefined {
  const constraint = new RegExp(
    String.raw`^(?:(?:ADD|DROP|ALTER|VALIDATE|RENAME)\s+)?CONSTRAINT\s+(?:IF\s+EXISTS\s+)?(${ID})`,
    'i',
  ).exec(span);
  if (constraint) return named('constraint', constraint[1]);
  const anonymous = /^(?:ADD\s+)?((?:FOREIGN\s+KEY|PRIMARY\s+KEY|UNIQUE|CHECK|EXCLUDE)\b[^)]*\)?)/i.exec(span);
  if (anonymous) {
    // `CONSTRAINT f FOREIGN KEY …`: the span starts after the name.
    const name = new RegExp(String.raw`CONSTRAINT\s+(${ID})\s*$`, 'i').exec(before)?.[1];
    return name ? named('constraint', name) : { kind: 'constraint', name: anonymous[1]!.replace(/\s+/g, ' ') };
  }
  const column = new RegExp(
    String.raw`^(?:ADD|DROP|ALTER|RENAME)\s+(?:COLUMN\s+)?(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(${ID})`,
    'i',
  ).exec(span);
  return column ? named('column', column[1]) : undefined;
}

/** The column whose definition or `ALTER COLUMN` clause the span is part of (its type, `SET NOT NULL`). */
function fromColumnBefore(before: string): LintObject | undefined {
  const patterns = [
    String.raw`ALTER\s+(?:COLUMN\s+)?(${ID})\s+(?:(?:SET\s+DATA\s+)?TYPE\s+)?$`,
    String.raw`ADD\s+(?:COLUMN\s+)?(?:IF\s+NOT\s+EXISTS\s+)?(${ID})\s+$`,
    String.raw`(?:^|[(,])\s*(${ID})\s+$`,
  ];
  for (const p of patterns) {
    const m = new RegExp(p, 'i').exec(before);
    if (m) return named('column', m[1]);
  }
  return undefined;
}

/** The object a whole statement acts on: the table created or altered, the index created or dropped. */
export function statementObject(statement: string): LintObject | undefined {
  const s = statement.replace(/^\s*(?:--[^\n]*\n\s*)*/, '');
  const index = new RegExp(
    String.raw`^(?:CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?|DROP\s+INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+EXISTS\s+)?|(?:ALTER|REINDEX)\s+INDEX\s+(?:IF\s+EXISTS\s+)?)${QUALIFIED}`,
    'i',
  ).exec(s);
  if (index && !/^ON$/i.test(index[1]!)) return named('index', index[1]);
  const table = new RegExp(
    String.raw`^(?:CREATE\s+(?:(?:TEMP|TEMPORARY|UNLOGGED)\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?|(?:ALTER|DROP|TRUNCATE)\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?|CREATE\s+(?:UNIQUE\s+)?INDEX\b[\s\S]*?\bON\s+(?:ONLY\s+)?)${QUALIFIED}`,
    'i',
  ).exec(s);
  return table ? named('table', table[1]) : undefined;
}

/**
 * The column or constraint a finding is about, from the SQL its span covers and the text of its
 * statement before the span; undefined when the span is the whole statement or names nothing.
 */
export function spanObject(span: string, before: string): LintObject | undefined {
  const text = span.trim();
  if (/^(?:CREATE|ALTER\s+TABLE|DROP\s+(?:TABLE|INDEX|VIEW|TYPE|SCHEMA))\b/i.test(text)) return undefined;
  return fromClause(text, before) ?? fromColumnBefore(before);
}

const PLURAL: Record<LintObjectKind, string> = {
  column: 'columns',
  constraint: 'constraints',
  index: 'indexes',
  table: 'tables',
};

/** `column \`a\``, `columns \`a\`, \`b\``, `column \`a\`, constraint \`f\``: kinds in first-seen order. */
export function describeObjects(objects: readonly LintObject[]): string {
  const kinds = [...new Set(objects.map((o) => o.kind))];
  return kinds
    .map((kind) => {
      const names = [...new Set(objects.filter((o) => o.kind === kind).map((o) => o.name))];
      return `${names.length === 1 ? kind : PLURAL[kind]} ${names.map((n) => `\`${n.replace(/`/g, "'")}\``).join(', ')}`;
    })
    .join(', ');
}
