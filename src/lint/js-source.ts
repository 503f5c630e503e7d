/**
 * Just enough of a JavaScript/TypeScript reader to find a migration's structure: the source with
 * comments and the text of its string literals blanked (so a `}` or `pgm.x(` inside a string or
 * comment is never taken for code), and every literal's decoded text. Lengths are kept, so an
 * index in the mask is the same index in the source.
 */

export interface Literal {
  /** Index of the first character of the text (after the quote, or after `` ` ``/`}` for a template part). */
  start: number;
  end: number;
  /** The text, escapes decoded. */
  value: string;
  /** How many `${…}` the literal sits in: a string inside an interpolation is not part of the outer text. */
  depth: number;
}

export interface ScannedSource {
  source: string;
  /** The source with comments and literal text replaced by spaces; quotes, `${`, `}` and code's line breaks kept. */
  mask: string;
  literals: Literal[];
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', 0: '\0' };
const decode = (raw: string): string =>
  raw.replace(/\\(?:\r?\n|(.))/g, (_m, c: string | undefined) => (c === undefined ? '' : (ESCAPES[c] ?? c)));

/** A `/` here starts a regular expression, not a division: after an operator, a keyword or nothing. */
function regexStarts(mask: string[], at: number): boolean {
  let i = at - 1;
  while (i >= 0 && /\s/.test(mask[i]!)) i -= 1;
  if (i < 0) return true;
  if (/[(,=:[!&|?{};+\-*%<>~^]/.test(mask[i]!)) return true;
  return /\b(return|typeof|case|do|else|in|of|void|yield|await)$/.test(mask.slice(Math.max(0, i - 7), i + 1).join(''));
}

export function scanSource(source: string): ScannedSource {
  const mask = [...source];
  const literals: Literal[] = [];
  // Each open `${` holds the brace depth its `}` closes at.
  const templates: number[] = [];
  let braces = 0;
  // A literal's line breaks go too: a line break in the mask is one between statements.
  const blank = (from: number, to: number, keepLines = false): void => {
    for (let k = from; k < to; k += 1) if (!keepLines || mask[k] !== '\n') mask[k] = ' ';
  };
  /** Reads a template's text from `i` to its closing `` ` `` or a `${`; returns where it stopped. */
  const templatePart = (i: number): number => {
    let j = i;
    while (j < source.length && source[j] !== '`' && !(source[j] === '$' && source[j + 1] === '{'))
      j += source[j] === '\\' ? 2 : 1;
    literals.push({ start: i, end: j, value: decode(source.slice(i, j)), depth: templates.length });
    blank(i, j);
    if (source[j] === '$') {
      templates.push(braces);
      braces += 1;
      return j + 2;
    }
    return j + 1;
  };
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      const to = end === -1 ? source.length : end;
      blank(i, to);
      i = to;
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      const to = end === -1 ? source.length : end + 2;
      blank(i, to, true);
      i = to;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < source.length && source[j] !== c && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1;
      literals.push({ start: i + 1, end: j, value: decode(source.slice(i + 1, j)), depth: templates.length });
      blank(i + 1, j);
      i = j + 1;
    } else if (c === '`') {
      i = templatePart(i + 1);
    } else if (c === '/' && regexStarts(mask, i)) {
      let j = i + 1;
      let inClass = false;
      while (j < source.length && source[j] !== '\n' && (inClass || source[j] !== '/')) {
        if (source[j] === '[') inClass = true;
        else if (source[j] === ']') inClass = false;
        j += source[j] === '\\' ? 2 : 1;
      }
      blank(i + 1, j);
      i = j + 1;
    } else if (c === '{') {
      braces += 1;
      i += 1;
    } else if (c === '}') {
      braces -= 1;
      i += 1;
      if (templates.length > 0 && braces === templates.at(-1)) {
        templates.pop();
        i = templatePart(i);
      }
    } else i += 1;
  }
  return { source, mask: mask.join(''), literals };
}

const OPEN: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/** Index just past the bracket that closes the one at `open` (the end of the source when none does). */
export function closing(mask: string, open: number): number {
  let depth = 0;
  for (let i = open; i < mask.length; i += 1) {
    if (OPEN[mask[i]!] !== undefined) depth += 1;
    else if (mask[i] === ')' || mask[i] === ']' || mask[i] === '}') {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return mask.length;
}

/**
 * Where the expression starting at `from` ends: a `;` or `,` outside brackets, a bracket that
 * closes one opened before it, or a line break after which the expression cannot go on.
 */
export function expressionEnd(mask: string, from: number): number {
  let depth = 0;
  for (let i = from; i < mask.length; i += 1) {
    const c = mask[i]!;
    if (OPEN[c] !== undefined) depth += 1;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return i;
      depth -= 1;
    } else if (depth === 0 && (c === ';' || c === ',')) return i;
    else if (depth === 0 && c === '\n') {
      const before = mask.slice(from, i).trimEnd();
      const after = mask.slice(i).trimStart();
      if (before !== '' && !/[=+\-*/%&|?:.,(<>]$/.test(before) && !/^[+\-*/%&|?:.=<>]/.test(after)) return i;
    }
  }
  return mask.length;
}
