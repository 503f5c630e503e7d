/**
 * Path globs for role scopes (`reads`, `writes`) and test locations. A small matcher with
 * picomatch's common syntax rather than a dependency, because scope decisions are part of what the
 * conductor proves and must behave identically in the CLI, the Action bundle and the App:
 *
 *   `*`  any characters except `/`     `?`  one character except `/`
 *   `**` as a whole segment: zero or more segments (`test/**`, `**\/*.test.js`, `a/**\/b`)
 *   `{a,b}` alternatives (may nest)    `[abc]`, `[a-z]`, `[!a]` character classes
 *   a list is read in order, the last entry that matches decides (as in .gitignore):
 *   `['**', '!test/**']` is everything but tests; `['**', '!.consort/**', '.consort/spec.json']`
 *   re-includes one file
 *
 * Paths are relative, with `/` separators. Unlike picomatch's default, `*` and `**` also match
 * names starting with a dot, so `**` really means "everything" and exclusions are explicit.
 *
 * `{ nocase: true }` matches letters in either case, as a case-insensitive file system (macOS's
 * APFS, Windows' NTFS) opens them: there `JEST.CONFIG.JS` is what jest opens as `jest.config.js`,
 * and `Node_Modules/` what node searches as `node_modules/`. What a role may not write is judged so.
 */
export interface GlobOptions {
  nocase?: boolean;
}

const cache = new Map<string, RegExp>();

function escape(ch: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
}

function translate(glob: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    const atSegmentStart = i === 0 || glob[i - 1] === '/';
    if (ch === '*' && glob[i + 1] === '*' && atSegmentStart && (i + 2 === glob.length || glob[i + 2] === '/')) {
      if (i + 2 === glob.length) {
        // `a/**` also matches `a` itself; a lone `**` matches everything.
        if (out.endsWith('\\/')) out = `${out.slice(0, -2)}(?:/.*)?`;
        else out += '.*';
        i += 1;
      } else {
        out += '(?:.*/)?';
        i += 2;
      }
    } else if (ch === '*') out += '[^/]*';
    else if (ch === '?') out += '[^/]';
    else if (ch === '{') {
      depth += 1;
      out += '(?:';
    } else if (ch === '}' && depth > 0) {
      depth -= 1;
      out += ')';
    } else if (ch === ',' && depth > 0) out += '|';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end === -1) out += '\\[';
      else {
        const body = glob
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        out += `(?!/)[${body}]`;
        i = end;
      }
    } else out += escape(ch);
  }
  return out;
}

export function globToRegExp(glob: string, options: GlobOptions = {}): RegExp {
  const key = options.nocase ? `i:${glob}` : glob;
  let re = cache.get(key);
  if (re === undefined) {
    re = new RegExp(`^${translate(glob.replace(/^\.\//, ''))}$`, options.nocase ? 'i' : '');
    cache.set(key, re);
  }
  return re;
}

export function matchesGlob(path: string, glob: string, options: GlobOptions = {}): boolean {
  return globToRegExp(glob, options).test(path.replace(/^\.\//, ''));
}

/** In a list: the last pattern that matches decides; `!pattern` deselects. Nothing matching: not selected. */
export function matchesAny(path: string, patterns: readonly string[], options: GlobOptions = {}): boolean {
  for (let i = patterns.length - 1; i >= 0; i--) {
    const p = patterns[i]!;
    const negated = p.startsWith('!');
    if (matchesGlob(path, negated ? p.slice(1) : p, options)) return !negated;
  }
  return false;
}
