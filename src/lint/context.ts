/**
 * What Consort knows that squawk does not: which tables and views exist on the base. Rules about
 * locking a live table cannot apply to a table or view this PR creates (nothing reads it yet), and
 * `constraint-missing-not-valid` cannot be followed for UNIQUE or PRIMARY KEY, which Postgres does
 * not accept NOT VALID for. Such findings become notes: reported with the reason, never blocking.
 */
import type { Queryable } from '../db/sql.js';
import type { LintFinding } from './squawk.js';

/** Rules whose harm is locking (or rewriting) the statement's table while it serves traffic. */
export const LIVE_TABLE_RULES: ReadonlySet<string> = new Set([
  'adding-serial-primary-key-field',
  'require-concurrent-index-creation',
  'constraint-missing-not-valid',
  'adding-field-with-default',
  'adding-required-field',
  'adding-not-nullable-field',
  'changing-column-type',
  'disallowed-unique-constraint',
  'ban-drop-not-null',
  'renaming-column',
  'ban-drop-column',
]);

/**
 * Relations on the base, as `schema.name` and bare `name` (an unqualified name may be in any
 * schema); `materialized`: the materialized views among them, named the same ways.
 */
export type BaseRelations = ReadonlySet<string> & { readonly materialized?: ReadonlySet<string> };

const IDENT = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)`;
const QUALIFIED = String.raw`(${IDENT}(?:\s*\.\s*${IDENT})?)`;
const TARGETS: RegExp[] = [
  new RegExp(String.raw`^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\b[\s\S]*?\bON\s+(?:ONLY\s+)?${QUALIFIED}`, 'i'),
  new RegExp(String.raw`^\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?${QUALIFIED}`, 'i'),
];

function unquote(part: string): string {
  const p = part.trim();
  return p.startsWith('"') ? p.slice(1, -1).replace(/""/g, '"') : p.toLowerCase();
}

/** The table (or materialized view) a statement locks, as `[schema, name]` or `[null, name]`. */
export function statementTarget(statement: string): [string | null, string] | undefined {
  const clean = statement.replace(/--[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
  for (const re of TARGETS) {
    const m = re.exec(clean);
    if (!m) continue;
    const parts = m[1]!.match(new RegExp(IDENT, 'g'))!.map(unquote);
    return parts.length === 2 ? [parts[0]!, parts[1]!] : [null, parts[0]!];
  }
  return undefined;
}

const UNIQUE_OR_PK = /\bADD\s+(?:CONSTRAINT\s+(?:"(?:[^"]|"")+"|\S+)\s+)?(?:UNIQUE|PRIMARY\s+KEY)\b/i;

/** Why a finding must not block, or undefined when it stands. */
export function noteReason(
  finding: Pick<LintFinding, 'rule'>,
  statement: string,
  base: BaseRelations,
): string | undefined {
  if (finding.rule === 'constraint-missing-not-valid' && UNIQUE_OR_PK.test(statement)) {
    return 'Postgres does not accept NOT VALID on a UNIQUE or PRIMARY KEY constraint, so this advice cannot be followed; to avoid the lock, build a unique index CONCURRENTLY and add the constraint USING INDEX';
  }
  if (!LIVE_TABLE_RULES.has(finding.rule)) return undefined;
  const target = statementTarget(statement);
  if (!target) return undefined;
  const [schema, name] = target;
  const exists = schema === null ? base.has(name) : base.has(`${schema}.${name}`);
  if (exists) return undefined;
  const shown = schema === null ? name : `${schema}.${name}`;
  return `${shown} does not exist on the base: this PR creates it, so no live table is locked`;
}

/**
 * squawk's message for a plain CREATE INDEX speaks of a table's writes. On a materialized view on
 * the base nothing writes rows: what waits for the index is its REFRESH (either form), while reads
 * go on. The message, said for what the statement locks; undefined when squawk's stands.
 */
export function lockMessage(
  finding: Pick<LintFinding, 'rule'>,
  statement: string,
  base: BaseRelations,
): string | undefined {
  if (finding.rule !== 'require-concurrent-index-creation' || !base.materialized) return undefined;
  const target = statementTarget(statement);
  if (!target) return undefined;
  const [schema, name] = target;
  const shown = schema === null ? name : `${schema}.${name}`;
  if (!base.materialized.has(shown)) return undefined;
  return `During normal index creation on materialized view ${shown}, REFRESH MATERIALIZED VIEW (also CONCURRENTLY) waits until the index is built; reads go on.`;
}

/** The statement around a 0-based line of `sql`: from after the previous `;` to the next one. */
export function statementAt(sql: string, line: number): string {
  let offset = 0;
  for (let i = 0; i < line; i++) {
    const next = sql.indexOf('\n', offset);
    if (next === -1) break;
    offset = next + 1;
  }
  const start = sql.lastIndexOf(';', offset - 1) + 1;
  const end = sql.indexOf(';', offset);
  return sql.slice(start, end === -1 ? undefined : end + 1).trim();
}

/** The tables, views and materialized views of a database (the PR branch before its migrations: the base). */
export async function readRelations(db: Queryable): Promise<BaseRelations> {
  const { rows } = await db.query<{
    schema: string;
    name: string;
    kind: string;
  }>(`SELECT n.nspname::text AS schema, c.relname::text AS name, c.relkind::text AS kind
    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname <> 'information_schema' AND n.nspname !~ '^pg_'`);
  const names = (kind?: string) =>
    new Set(
      rows.filter((r) => kind === undefined || r.kind === kind).flatMap((r) => [`${r.schema}.${r.name}`, r.name]),
    );
  return Object.assign(names(), { materialized: names('m') });
}
