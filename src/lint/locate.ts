/**
 * Where a statement a JS/TS migration sent comes from in its source. Squawk lints the SQL
 * node-pg-migrate generated, so its line numbers mean nothing in the .js/.ts file; an annotation
 * there must land on the `pgm.*` call that produced the statement, or, when that cannot be told,
 * on the migration's first line with the statement quoted — never on an unrelated line.
 */
import { escapeRegExp } from '../core/regexp.js';

export interface SourceLocation {
  /** 1-based line in the migration source. */
  line: number;
  /** False when the call could not be found: the finding should quote the statement. */
  exact: boolean;
}

interface Call {
  line: number;
  start: number;
  end: number;
  method: string;
}

/** The pgm methods that generate a statement of this kind (node-pg-migrate's operation names). */
const METHODS: [RegExp, RegExp][] = [
  [/^CREATE\s+(UNIQUE\s+)?INDEX\b/i, /^(createIndex|addIndex)$/],
  [/^DROP\s+INDEX\b/i, /^dropIndex$/],
  [/^CREATE\s+(UNLOGGED\s+)?TABLE\b/i, /^createTable$/],
  [/^DROP\s+TABLE\b/i, /^dropTable$/],
  [/^CREATE\s+MATERIALIZED\s+VIEW\b/i, /^createMaterializedView$/],
  [/^CREATE\s+(OR\s+REPLACE\s+)?VIEW\b/i, /^createView$/],
  [/^CREATE\s+EXTENSION\b/i, /^(createExtension|addExtension)$/],
  [/^ALTER\s+TYPE\s+\S+\s+ADD\s+VALUE\b/i, /^addTypeValue$/],
  [/^CREATE\s+TYPE\b/i, /^createType$/],
  [/^CREATE\s+(OR\s+REPLACE\s+)?FUNCTION\b/i, /^createFunction$/],
  [/^CREATE\s+TRIGGER\b/i, /^createTrigger$/],
  [/^ALTER\s+TABLE\b[\s\S]*\bADD\s+CONSTRAINT\b/i, /^(addConstraint|createConstraint)$/],
  // node-pg-migrate writes `RENAME "a" TO "b"` for a column, without COLUMN.
  [/^ALTER\s+TABLE\b[\s\S]*\bRENAME\s+(?:COLUMN\s+)?(?!TO\b|CONSTRAINT\b)/i, /^renameColumn$/],
  [/^ALTER\s+TABLE\b[\s\S]*\bRENAME\s+TO\b/i, /^renameTable$/],
  [/^ALTER\s+TABLE\b[\s\S]*\bADD\s+(COLUMN\s+)?(?!CONSTRAINT)/i, /^(addColumns?|addColumn)$/],
  [/^ALTER\s+TABLE\b[\s\S]*\bDROP\s+(COLUMN\s+)?(?!CONSTRAINT)/i, /^(dropColumns?|dropColumn)$/],
  [/^ALTER\s+TABLE\b[\s\S]*\bALTER\s+(COLUMN\s+)?/i, /^alterColumn$/],
];

function lineOf(source: string, index: number): number {
  let n = 1;
  for (let i = source.indexOf('\n'); i !== -1 && i < index; i = source.indexOf('\n', i + 1)) n += 1;
  return n;
}

/** Every `pgm.<method>(` call, with the text up to the next call. */
function calls(source: string): Call[] {
  const found = [...source.matchAll(/\bpgm\s*\.\s*(?:db\s*\.\s*)?(\w+)\s*\(/g)];
  return found.map((m, i) => ({
    line: lineOf(source, m.index),
    start: m.index,
    end: found[i + 1]?.index ?? source.length,
    method: m[1]!,
  }));
}

const squash = (s: string): string => s.replace(/\s+/g, ' ').trim().toLowerCase();

/** Names a generated statement mentions: quoted identifiers, as node-pg-migrate quotes them. */
function names(statement: string): string[] {
  return [...statement.matchAll(/"((?:[^"]|"")+)"/g)].map((m) => m[1]!.replace(/""/g, '"'));
}

/**
 * Locates each statement in order: verbatim SQL (pgm.sql) by its first line, generated SQL by
 * the first call from the previous match on whose arguments name the statement's objects.
 */
export function locateStatements(source: string, statements: readonly string[]): SourceLocation[] {
  const all = calls(source);
  let cursor = 0;
  return statements.map((statement) => {
    const firstLine = squash(statement.split('\n').find((l) => l.trim() !== '') ?? '');
    const verbatim =
      firstLine.length >= 12
        ? all.findIndex(
            (c, i) => i >= cursor && squash(source.slice(c.start, c.end)).includes(firstLine.replace(/;$/, '')),
          )
        : -1;
    const wanted = names(statement);
    const mentions = (c: Call): boolean => {
      const text = source.slice(c.start, c.end);
      return wanted.some((n) => new RegExp(`['"\`]${escapeRegExp(n)}['"\`]`).test(text) || text.includes(`${n}:`));
    };
    const methods = METHODS.find(([kind]) => kind.test(statement.trim()))?.[1];
    // A later call of the statement's own kind first; else the call that produced the previous
    // statement (one call can send several: a table and its comments).
    // The call's first argument names the object it acts on (`pgm.createIndex('orders', 'email')`):
    // a match there beats a column name that happens to recur.
    const firstArg = (c: Call): string | undefined =>
      /^\s*(['"`])([^'"`]+)\1/
        .exec(source.slice(c.start, c.end).replace(/^[^(]*\(/, ''))?.[2]
        ?.split('.')
        .at(-1);
    // Of several such calls, the one naming most of the statement's objects: two indexes on one
    // table differ by their columns (`createIndex('t', 'id')`, then `createIndex('t', 'doc')`).
    const named = (c: Call): number => wanted.filter((n) => source.slice(c.start, c.end).includes(n)).length;
    const kindAt = (match: (c: Call) => boolean): number => {
      if (verbatim !== -1 || methods === undefined) return -1;
      let best = -1;
      all.forEach((c, i) => {
        if (i >= cursor && methods.test(c.method) && match(c) && (best === -1 || named(c) > named(all[best]!)))
          best = i;
      });
      return best;
    };
    let ofKind = kindAt((c) => wanted.includes(firstArg(c) ?? '\0'));
    if (ofKind === -1) ofKind = kindAt((c) => wanted.length === 0 || mentions(c));
    const byName =
      verbatim !== -1 || ofKind !== -1 || wanted.length === 0
        ? -1
        : all.findIndex((c, i) => i >= cursor && mentions(c));
    const found = verbatim !== -1 ? verbatim : ofKind !== -1 ? ofKind : byName;
    if (found === -1) return { line: 1, exact: false };
    // A `pgm.db.query` runs while `up` still queues its steps, so its statement goes out before
    // theirs: it must not move the search past the calls that queued them.
    if (all[found]!.method !== 'query') cursor = found;
    return { line: all[found]!.line, exact: true };
  });
}
