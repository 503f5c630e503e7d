/**
 * Where a statement a JS/TS migration sent comes from in its source. Squawk lints the SQL
 * node-pg-migrate generated, so its line numbers mean nothing in the .js/.ts file; an annotation
 * there must land on the `pgm.*` call that produced the statement, or on the call that handed the
 * builder to an imported helper (with the statement quoted), or, when neither can be told, on the
 * migration's first line with the statement quoted — never on an unrelated line.
 */
import { escapeRegExp } from '../core/regexp.js';
import { expressionEnd, closing, scanSource, type Literal, type ScannedSource } from './js-source.js';
import { migrationBodies, type MigrationBodies, type Span } from './migration-bodies.js';
import { methodsFor } from './pgm-methods.js';

export interface SourceLocation {
  /** 1-based line in the migration source. */
  line: number;
  /** False when the call could not be found: the finding should quote the statement. */
  exact: boolean;
}

interface Call {
  line: number;
  method: string;
  /** From `pgm` to the closing parenthesis. */
  start: number;
  end: number;
  /** The literals in its arguments, and the parts of its first argument as a pattern. */
  literals: Literal[];
  text: Piece[] | undefined;
  target: string | undefined;
}

/** Literal text, or `undefined` for a part only known when the migration runs (`${…}`, a variable). */
type Piece = string | undefined;

const normalize = (s: string): string => s.replace(/\s+/g, '').toLowerCase();

function lineOf(source: string, index: number): number {
  let n = 1;
  for (let i = source.indexOf('\n'); i !== -1 && i < index; i = source.indexOf('\n', i + 1)) n += 1;
  return n;
}

/**
 * The expression in [from, to) as literal pieces and unknown parts: `` `UPDATE ${t} SET a = 1` ``,
 * `'UPDATE ' + t + ' SET a = 1'` and a constant defined as either. Undefined when no literal is in it.
 */
function pieces(s: ScannedSource, from: number, to: number, constants: Map<string, Piece[]>): Piece[] | undefined {
  const code = s.mask.slice(from, to).trim();
  if (/^[\w$]+$/.test(code)) return constants.get(code);
  const inside = s.literals.filter((l) => l.start >= from && l.end <= to);
  if (inside.length === 0) return undefined;
  const depth = Math.min(...inside.map((l) => l.depth));
  const out: Piece[] = [];
  let at = from;
  for (const l of inside.filter((x) => x.depth === depth)) {
    // Anything but quotes and `+` between two pieces is code that adds text: an unknown part.
    if (/[^\s`'"+(]/.test(s.mask.slice(at, l.start))) out.push(undefined);
    out.push(l.value);
    at = l.end;
  }
  if (/[^\s`'"+)]/.test(s.mask.slice(at, to))) out.push(undefined);
  return out;
}

/** `const X = 'text'` (or a template, or a concatenation) at any level: names and SQL kept in constants. */
function constantsOf(s: ScannedSource): Map<string, Piece[]> {
  const out = new Map<string, Piece[]>();
  for (const m of s.mask.matchAll(/\b(?:const|let|var)\s+([\w$]+)\s*(?::[^=;]+)?=(?!=|>)\s*/g)) {
    const from = m.index + m[0].length;
    if (!/^[`'"]/.test(s.mask.slice(from))) continue;
    const text = pieces(s, from, expressionEnd(s.mask, from), out);
    if (text) out.set(m[1]!, text);
  }
  return out;
}

/**
 * What the migration calls its builder: `pgm` by convention, the first parameter of `up` and
 * `down` whatever it is named (`exports.up = (db) => …`), and any parameter typed `MigrationBuilder`
 * (a helper's `function addTimestamps(b: MigrationBuilder, table: string)`).
 */
function builderNames(s: ScannedSource, bodies: MigrationBodies): string[] {
  const typed = [...s.mask.matchAll(/([A-Za-z_$][\w$]*)\s*\??\s*:\s*(?:[\w$]+\s*\.\s*)?MigrationBuilder\b/g)].map(
    (m) => m[1]!,
  );
  const own = [bodies.up?.builder, bodies.down?.builder].filter((n): n is string => n !== undefined);
  return [...new Set(['pgm', ...own, ...typed])];
}

/** Every `<builder>.<method>(…)` and `<builder>.db.<method>(…)` call. */
function callsOf(s: ScannedSource, constants: Map<string, Piece[]>, builders: string[]): Call[] {
  const names = builders.map(escapeRegExp).join('|');
  const call = new RegExp(`(?<![\\w$])(?:${names})\\s*\\.\\s*(?:db\\s*\\.\\s*)?(\\w+)\\s*\\(`, 'g');
  return [...s.mask.matchAll(call)].map((m) => {
    const open = m.index + m[0].length - 1;
    const end = closing(s.mask, open);
    const firstEnd = Math.min(expressionEnd(s.mask, open + 1), end - 1);
    const text = pieces(s, open + 1, firstEnd, constants);
    const first = s.mask.slice(open + 1, firstEnd);
    // The object a call acts on: its first argument, a constant, or the `name` of `{ schema, name }`.
    const named = /^\s*\{[\s\S]*\bname\s*:\s*([\w$]+|['"`])/.exec(first);
    const byName = named?.[1] && /^[\w$]+$/.test(named[1]) ? constants.get(named[1]) : undefined;
    const literalName =
      named?.[1] && !/^[\w$]+$/.test(named[1])
        ? s.literals.find((l) => l.start === open + 1 + named.index + named[0].length)?.value
        : undefined;
    const whole = text?.length === 1 && text[0] !== undefined ? text[0] : undefined;
    const target = whole ?? literalName ?? (byName?.length === 1 ? byName[0] : undefined);
    return {
      line: lineOf(s.source, m.index),
      method: m[1]!,
      start: m.index,
      end,
      literals: s.literals.filter((l) => l.start > open && l.end < end),
      text,
      target: target?.split('.').at(-1),
    };
  });
}

/**
 * Calls that hand the builder to a function of the project's (`addAudit(pgm, 'projects')`,
 * `isolateTenants({ pgm, table })`): an imported helper's statements come from there. The
 * innermost such call, never a function's own definition (`function up(pgm)`, `async (pgm) =>`).
 */
function handoffsOf(s: ScannedSource, builders: string[], calls: Call[]): Call[] {
  const builder = new RegExp(`(?<![\\w$.])(?:${builders.map(escapeRegExp).join('|')})(?![\\w$])(?!\\s*[.(])`);
  const own = new Set(calls.map((c) => c.start));
  const found: Call[] = [];
  for (const m of s.mask.matchAll(/(?<![\w$.])([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)\s*\(/g)) {
    const name = m[1]!;
    if (/^(?:if|for|while|switch|catch|function|async|return|await|typeof|new)$/.test(name)) continue;
    if (own.has(m.index) || /\bfunction\s*\*?\s*$/.test(s.mask.slice(Math.max(0, m.index - 12), m.index))) continue;
    const open = m.index + m[0].length - 1;
    const end = closing(s.mask, open);
    if (/^\s*(?::[^{;=]*)?(?:=>|\{)/.test(s.mask.slice(end))) continue;
    if (!builder.test(s.mask.slice(open + 1, end - 1))) continue;
    found.push({
      line: lineOf(s.source, m.index),
      method: name,
      start: m.index,
      end,
      literals: s.literals.filter((l) => l.start > open && l.end < end),
      text: undefined,
      target: undefined,
    });
  }
  return found.filter((c) => !found.some((d) => d !== c && d.start > c.start && d.end <= c.end));
}

/** Whether `statement` is the text `parts` makes, whatever its unknown parts hold. */
function fits(parts: Piece[], statement: string): boolean {
  // Known text and unknown parts alternating; pgm.sql's `{name}` placeholders are filled from its second argument.
  const segments: Piece[] = [];
  for (const p of parts.flatMap((x) =>
    x === undefined ? [undefined] : x.split(/\{\w+\}/).flatMap((t, i) => (i === 0 ? [t] : [undefined, t])),
  )) {
    const known = p === undefined ? undefined : normalize(p);
    const prev = segments.length - 1;
    if (known === '') continue;
    if (known !== undefined && typeof segments[prev] === 'string') segments[prev] += known;
    else if (known !== undefined || segments[prev] !== undefined || prev === -1) segments.push(known);
  }
  if (typeof segments.at(-1) === 'string') segments[segments.length - 1] = segments.at(-1)!.replace(/;+$/, '');
  if (segments.filter((x) => x !== undefined).join('').length < 6) return false;
  const text = normalize(statement).replace(/;+$/, '');
  if (segments.length === 1) return text === segments[0];
  let at = 0;
  for (let i = 0; i < segments.length; i += 1) {
    const p = segments[i];
    if (p === undefined) continue;
    if (i === 0) {
      if (!text.startsWith(p)) return false;
      at = p.length;
    } else if (i === segments.length - 1) {
      return text.endsWith(p) && text.length - p.length >= at;
    } else {
      const found = text.indexOf(p, at);
      if (found === -1) return false;
      at = found + p.length;
    }
  }
  return true;
}

/** Names a generated statement mentions: quoted identifiers and node-pg-migrate's `$pga$` literals. */
function names(statement: string): string[] {
  return [
    ...[...statement.matchAll(/"((?:[^"]|"")+)"/g)].map((m) => m[1]!.replace(/""/g, '"')),
    ...[...statement.matchAll(/\$pga\$([\s\S]*?)\$pga\$/g)].map((m) => m[1]!),
  ];
}

/** `part` is a whole `_`-separated part of a generated name: `sessions` in `sessions_user_id_index`. */
const partOf = (part: string, name: string): boolean => part.length >= 3 && `_${name}_`.includes(`_${part}_`);

/** How much of the statement's names the call's arguments hold; the object it acts on counts most. */
function score(
  s: ScannedSource,
  c: Call,
  statement: string,
  wanted: string[],
  constants: Map<string, Piece[]>,
): number | undefined {
  if (c.target !== undefined && !wanted.some((n) => n === c.target || partOf(c.target!, n))) return undefined;
  const code = s.mask.slice(c.start, c.end);
  const values = [
    ...c.literals.map((l) => l.value),
    ...[...code.matchAll(/[\w$]+/g)].flatMap((m) => {
      const v = constants.get(m[0]);
      return v?.length === 1 && v[0] !== undefined ? [v[0]] : [];
    }),
  ];
  const words = new Set(values.flatMap((v) => [v, v.replace(/"/g, ''), ...v.split(/[^\w$]+/)]));
  let total = wanted.includes(c.target ?? '\0') ? 2 : 0;
  // Between calls on one object (three alterColumn on one column), the one whose other arguments
  // (a type, a default, a comment) are in the statement, and not ones that are not.
  const sent = normalize(statement).replace(/"/g, '');
  for (const v of new Set(c.literals.map((l) => normalize(l.value).replace(/"/g, '')))) {
    if (v.length >= 2 && !wanted.includes(v)) total += sent.includes(v) ? 0.25 : -0.25;
  }
  for (const n of new Set(wanted)) {
    if (words.has(n) || new RegExp(`(?:^|[{,\\s])${escapeRegExp(n)}\\s*:`).test(code)) total += 1;
    else if (values.some((v) => partOf(v, n))) total += 0.5;
  }
  return total;
}

/**
 * The calls of the direction's function, and those outside both functions (helpers they call).
 * `reversed` when down is up run backwards.
 */
function regions(
  calls: Call[],
  bodies: MigrationBodies,
  direction: 'up' | 'down',
): { own: Call[]; elsewhere: Call[]; reversed: boolean } {
  if (bodies.up === undefined) return { own: calls, elsewhere: [], reversed: false };
  const within = (span: Span | null | undefined) => (c: Call) =>
    span !== null && span !== undefined && c.start >= span.start && c.end <= span.end;
  const outside = calls.filter((c) => !within(bodies.up)(c) && !within(bodies.down)(c));
  // Without a down, node-pg-migrate runs up backwards.
  if (direction === 'down' && bodies.down === null)
    return { own: calls.filter(within(bodies.up)).reverse(), elsewhere: outside, reversed: true };
  return {
    own: calls.filter(within(direction === 'up' ? bodies.up : bodies.down)),
    elsewhere: outside,
    reversed: false,
  };
}

/** Run backwards, a call sends its opposite: `createIndex` the DROP INDEX, `renameColumn` a RENAME. */
const OPPOSITES: [RegExp, string[]][] = [
  [/^drop/, ['create', 'add']],
  [/^(create|add)(?!To)/, ['drop']],
  [/^removeFrom/, ['addTo']],
  [/^grant/, ['revoke']],
  [/^revoke/, ['grant']],
  [/^rename/, ['rename']],
];
function reverseOf(methods: ReadonlySet<string>): Set<string> {
  return new Set(
    [...methods].flatMap((m) =>
      OPPOSITES.flatMap(([verb, to]) => (verb.test(m) ? to.map((t) => m.replace(verb, t)) : [])),
    ),
  );
}

/**
 * Locates each statement `direction` sent, in order: verbatim SQL (`pgm.sql`, `pgm.db.query`,
 * interpolations as unknown parts), else a call of the method that generates its kind, naming
 * most of its objects, the next from the previous statement's call on a tie (one call can send
 * several: a loop, a table and its comments). Calls in the other direction's function are never
 * taken; helpers outside both are, when the function itself has none.
 */
export function locateStatements(
  source: string,
  statements: readonly string[],
  direction: 'up' | 'down' = 'up',
): SourceLocation[] {
  const scanned = scanSource(source);
  const constants = constantsOf(scanned);
  const bodies = migrationBodies(scanned);
  const calls = callsOf(scanned, constants, builderNames(scanned, bodies));
  const { own, elsewhere, reversed } = regions(calls, bodies, direction);
  const handoffs = regions(handoffsOf(scanned, builderNames(scanned, bodies), calls), bodies, direction).own;
  let cursor = 0;
  let handedTo = 0;
  const pick = (list: Call[], from: number, rank: (c: Call) => number | undefined): number => {
    let best = -1;
    let bestRank = -Infinity;
    for (let k = 0; k < list.length; k += 1) {
      const i = (from + k) % list.length;
      const r = rank(list[i]!);
      if (r !== undefined && r > bestRank) [best, bestRank] = [i, r];
    }
    return best;
  };
  return statements.map((statement) => {
    const firstLine = normalize(statement.split('\n').find((l) => l.trim() !== '') ?? '').replace(/;$/, '');
    const verbatim = (c: Call): number | undefined =>
      c.method !== 'sql' && c.method !== 'query'
        ? undefined
        : c.text && fits(c.text, statement)
          ? 1
          : firstLine.length >= 12 && c.literals.some((l) => normalize(l.value).includes(firstLine))
            ? 0
            : undefined;
    const kind = methodsFor(statement);
    const methods = kind && reversed ? reverseOf(kind) : kind;
    const wanted = names(statement);
    const generated = (c: Call): number | undefined =>
      methods?.has(c.method) ? score(scanned, c, statement, wanted, constants) : undefined;
    // Last, a `pgm.sql` whose text is built when it runs (`pgm.sql(readSql('players.up.sql'))`).
    const opaque = (c: Call): number | undefined =>
      c.method === 'sql' && (c.text === undefined || c.text[0] === undefined) ? 0 : undefined;
    for (const rank of [verbatim, generated, opaque]) {
      const i = pick(own, cursor, rank);
      if (i !== -1) {
        // A `pgm.db.query` runs while `up` still queues its steps, so its statement goes out before
        // theirs: it must not move the search past the calls that queued them.
        if (own[i]!.method !== 'query') cursor = i;
        return { line: own[i]!.line, exact: true };
      }
      const j = rank === opaque ? -1 : pick(elsewhere, 0, rank);
      if (j !== -1) return { line: elsewhere[j]!.line, exact: true };
    }
    // Sent from a function the migration imports: the call that handed it the builder, naming most
    // of the statement's objects (the same call on a tie: one helper sends several). Still quoted:
    // the line shows the helper, not the statement.
    const words = (c: Call) => new Set(c.literals.flatMap((l) => [l.value, ...l.value.split(/[^\w$]+/)]));
    const k = pick(handoffs, handedTo, (c) => wanted.filter((n) => words(c).has(n)).length);
    if (k !== -1) {
      handedTo = k;
      return { line: handoffs[k]!.line, exact: false };
    }
    return { line: 1, exact: false };
  });
}
