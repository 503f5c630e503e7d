/**
 * squawk's `require-lock-timeout` and `require-statement-timeout` are reported once per migration,
 * at the first statement that takes a lock. A migration that builds a new table (CREATE TABLE, its
 * indexes, constraints, comments) locks nothing anyone else uses yet; when the flagged statement
 * and every later one that takes a lock touch only relations this PR creates, the advice cannot
 * apply, and the finding becomes a note. Any statement Consort cannot read keeps the finding.
 */
import type { BaseRelations } from './context.js';

export const TIMEOUT_RULES: ReadonlySet<string> = new Set(['require-lock-timeout', 'require-statement-timeout']);

const IDENT = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)`;
const NAME = String.raw`(${IDENT}(?:\s*\.\s*${IDENT}){0,2})`;

/** Statements squawk may ask a timeout for; the rest (INSERT, UPDATE, GRANT, DO, SET, …) it never does. */
const TAKES_LOCKS = /^(?:ALTER|DROP|TRUNCATE|CREATE|COMMENT|REFRESH|REINDEX|CLUSTER|VACUUM|LOCK|SECURITY\s+LABEL)\b/i;

/** Creating an object that is not a relation on the base: nothing live is locked by the CREATE itself. */
const CREATES_NEW =
  /^CREATE\s+(?!OR\s+REPLACE\b)(?:(?:GLOBAL\s+|LOCAL\s+)?TEMP(?:ORARY)?\s+|UNLOGGED\s+)?(?:TABLE|VIEW|MATERIALIZED\s+VIEW|FUNCTION|PROCEDURE|TYPE|SCHEMA|SEQUENCE|EXTENSION|DOMAIN|AGGREGATE|COLLATION|RECURSIVE\s+VIEW)\b/i;

/** Statements on one relation, the relation captured: it is locked, so it must be new. */
const ON_RELATION: RegExp[] = [
  new RegExp(
    String.raw`^ALTER\s+(?:TABLE|VIEW|MATERIALIZED\s+VIEW|FOREIGN\s+TABLE)\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?${NAME}`,
    'i',
  ),
  new RegExp(String.raw`^CREATE\s+(?:UNIQUE\s+)?INDEX\b[\s\S]*?\bON\s+(?:ONLY\s+)?${NAME}`, 'i'),
  new RegExp(String.raw`^CREATE\s+(?:OR\s+REPLACE\s+)?(?:CONSTRAINT\s+)?TRIGGER\b[\s\S]*?\bON\s+${NAME}`, 'i'),
  new RegExp(String.raw`^CREATE\s+POLICY\b[\s\S]*?\bON\s+${NAME}`, 'i'),
  new RegExp(String.raw`^COMMENT\s+ON\s+(?:TABLE|VIEW|MATERIALIZED\s+VIEW|FOREIGN\s+TABLE)\s+${NAME}`, 'i'),
  new RegExp(
    String.raw`^DROP\s+(?:TABLE|VIEW|MATERIALIZED\s+VIEW)\s+(?:IF\s+EXISTS\s+)?${NAME}\s*(?:CASCADE|RESTRICT)?\s*;?\s*$`,
    'i',
  ),
  new RegExp(
    String.raw`^TRUNCATE\s+(?:TABLE\s+)?(?:ONLY\s+)?${NAME}\s*(?:RESTART\s+IDENTITY|CONTINUE\s+IDENTITY)?\s*;?\s*$`,
    'i',
  ),
  new RegExp(String.raw`^REFRESH\s+MATERIALIZED\s+VIEW\s+(?:CONCURRENTLY\s+)?${NAME}`, 'i'),
];

/** `COMMENT ON COLUMN [schema.]table.column`: the table is all but the last part. */
const ON_COLUMN = new RegExp(String.raw`^COMMENT\s+ON\s+COLUMN\s+${NAME}`, 'i');

/** Relations a statement reaches beyond its own: each is locked too (SHARE ROW EXCLUSIVE for a foreign key). */
const REACHES = new RegExp(String.raw`\b(?:(?:REFERENCES|PARTITION\s+OF|LIKE)\s+|INHERITS\s*\(\s*)${NAME}`, 'gi');

function parts(name: string): string[] {
  return name
    .match(new RegExp(IDENT, 'g'))!
    .map((p) => (p.startsWith('"') ? p.slice(1, -1).replace(/""/g, '"') : p.toLowerCase()));
}

function live(name: string[], base: BaseRelations): boolean {
  if (name.length === 1) return base.has(name[0]!);
  return base.has(`${name.at(-2)!}.${name.at(-1)!}`);
}

function clean(statement: string): string {
  return statement
    .replace(/--[^\n]*/g, '')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .trim();
}

/** The new relation a statement locks, or undefined when it may lock something live (or cannot be read). */
function onlyNew(statement: string, base: BaseRelations): string | null | undefined {
  const s = clean(statement);
  // A DO block runs statements Consort does not read here (an ALTER TABLE on a live table, say).
  if (/^DO\b/i.test(s)) return undefined;
  if (s === '' || !TAKES_LOCKS.test(s)) return null; // squawk asks no timeout for it
  for (const m of s.matchAll(REACHES)) if (live(parts(m[1]!), base)) return undefined;
  if (CREATES_NEW.test(s)) return null;
  const column = ON_COLUMN.exec(s);
  if (column) {
    const table = parts(column[1]!).slice(0, -1);
    return table.length > 0 && !live(table, base) ? table.join('.') : undefined;
  }
  for (const re of ON_RELATION) {
    const m = re.exec(s);
    if (m) return live(parts(m[1]!), base) ? undefined : parts(m[1]!).join('.');
  }
  return undefined;
}

/**
 * Why a timeout finding cannot apply, given the flagged statement and every statement after it in
 * the migration, or undefined when it stands.
 */
export function timeoutNote(rule: string, statements: readonly string[], base: BaseRelations): string | undefined {
  if (!TIMEOUT_RULES.has(rule)) return undefined;
  const created = new Set<string>();
  for (const statement of statements) {
    const relation = onlyNew(statement, base);
    if (relation === undefined) return undefined;
    if (relation !== null) created.add(relation);
  }
  const names = [...created];
  const shown = names.length === 0 ? 'objects this PR creates' : names.slice(0, 3).join(', ');
  return `every statement from here on that takes a lock works on ${shown}, which ${names.length === 1 ? 'does' : 'do'} not exist on the base: nothing live waits on these locks`;
}

/** The statements of `sql` from the one around 0-based `line` to the end, split at `;` (roughly: a `;` in a string or body splits too). */
export function statementsFrom(sql: string, line: number): string[] {
  let offset = 0;
  for (let i = 0; i < line; i++) {
    const next = sql.indexOf('\n', offset);
    if (next === -1) break;
    offset = next + 1;
  }
  const start = sql.lastIndexOf(';', offset - 1) + 1;
  return sql
    .slice(start)
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
