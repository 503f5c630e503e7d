/**
 * Where a JS/TS migration's `up` and `down` functions are, in every form node-pg-migrate loads:
 * `exports.up = (pgm) => {…}`, `module.exports = { up(pgm) {…}, down: … }`,
 * `export async function up(pgm: MigrationBuilder): Promise<void> {…}`, `export const up = …`,
 * and an `up` defined apart and exported by name (`exports.up = up`, `module.exports = { up }`).
 * A statement `up` sent comes from a call inside `up` (or a helper it calls), never from `down`.
 */
import { closing, expressionEnd, type ScannedSource } from './js-source.js';

export interface Span {
  start: number;
  end: number;
  /** The function's first parameter (the builder node-pg-migrate passes: `pgm` by convention), when named. */
  builder?: string;
}

export interface MigrationBodies {
  up?: Span;
  /** `null` when the migration exports no down function (`false`, or none: node-pg-migrate then reverses up). */
  down?: Span | null;
}

const skipSpace = (mask: string, i: number): number => {
  while (i < mask.length && /\s/.test(mask[i]!)) i += 1;
  return i;
};

/** The first parameter's name in the list `(…)` opening at `open`, or a lone parameter (`pgm => …`). */
function firstParameter(mask: string, open: number, close: number): string | undefined {
  return /^\s*([A-Za-z_$][\w$]*)/.exec(mask.slice(open + 1, close))?.[1];
}

/**
 * The end of the function whose definition (after `=`, `:`, or its name) starts at `from`, with its
 * first parameter's name; undefined when it is not one.
 */
function functionEnd(mask: string, from: number): { end: number; builder?: string } | undefined {
  let i = skipSpace(mask, from);
  const word = (w: string): boolean => new RegExp(`^${w}\\b`).test(mask.slice(i, i + w.length + 1));
  if (word('async')) i = skipSpace(mask, i + 5);
  if (word('function')) {
    i = skipSpace(mask, i + 8);
    if (mask[i] === '*') i = skipSpace(mask, i + 1);
    i = skipSpace(mask, i + (/^[\w$]*/.exec(mask.slice(i))?.[0].length ?? 0));
  }
  if (mask[i] === '<') i = skipSpace(mask, mask.indexOf('>', i) + 1); // type parameters
  let builder: string | undefined;
  if (mask[i] === '(') {
    const close = closing(mask, i);
    builder = firstParameter(mask, i, close - 1);
    i = close;
  } else if (/[\w$]/.test(mask[i] ?? '')) {
    builder = /^[\w$]+/.exec(mask.slice(i))![0];
    i += builder.length;
  } else return undefined;
  // A return type (`: Promise<void>`) runs to the body.
  const body = /^\s*(?::[^{=]*?)?\s*(=>|\{)/.exec(mask.slice(i));
  if (!body) return undefined;
  i += body[0].length;
  const named = builder === undefined ? {} : { builder };
  if (body[1] === '{') return { end: closing(mask, i - 1), ...named };
  i = skipSpace(mask, i);
  return { end: mask[i] === '{' ? closing(mask, i) : expressionEnd(mask, i), ...named };
}

/** The span of the function exported as `name`, null when it is exported as something other than a function. */
function bodyOf(mask: string, name: 'up' | 'down'): Span | null | undefined {
  const patterns = [
    // exports.up = …, module.exports.up = …, export const up = …, const up = …
    new RegExp(`(?:\\bexports\\s*\\.\\s*${name}|\\b(?:const|let|var)\\s+${name}(?:\\s*:[^=]+)?)\\s*=(?!=)`, 'g'),
    // { up: … } and { up(pgm) { … } }, as module.exports or export default
    new RegExp(`[{,]\\s*(?:async\\s+)?${name}\\s*(?::|(?=\\())`, 'g'),
    // function up(…) { … }
    new RegExp(`\\b(?:async\\s+)?function\\s+${name}\\b`, 'g'),
  ];
  for (const pattern of patterns) {
    for (const m of mask.matchAll(pattern)) {
      const from = m.index + m[0].length;
      const isName = pattern === patterns[2];
      const fn = functionEnd(mask, isName ? m.index : from);
      if (fn !== undefined) return { start: m.index, ...fn };
      const value = /^\s*([\w$.]+)/.exec(mask.slice(from))?.[1];
      if (value === 'false' || value === 'undefined' || value === 'null') return null;
      // `exports.up = up`: the function defined under that name.
      if (value !== undefined && value !== name && /^[\w$]+$/.test(value) && !isName) {
        const defined = definedAs(mask, value);
        if (defined) return defined;
      }
    }
  }
  return undefined;
}

/** The function defined as `name` (`function name(…) {…}`, `const name = (…) => …`). */
function definedAs(mask: string, name: string): Span | undefined {
  const declared = new RegExp(`\\b(?:async\\s+)?function\\s+${name}\\b`).exec(mask);
  const assigned = new RegExp(`\\b(?:const|let|var)\\s+${name}(?:\\s*:[^=]+)?\\s*=(?!=)`).exec(mask);
  const fn = declared
    ? functionEnd(mask, declared.index)
    : assigned
      ? functionEnd(mask, assigned.index + assigned[0].length)
      : undefined;
  const start = (declared ?? assigned)?.index;
  return start !== undefined && fn !== undefined ? { start, ...fn } : undefined;
}

export function migrationBodies(scanned: ScannedSource): MigrationBodies {
  const up = bodyOf(scanned.mask, 'up');
  const down = bodyOf(scanned.mask, 'down');
  return { ...(up ? { up } : {}), down: down ?? null };
}
