/**
 * Test support modules: code a test imports from a test folder (`test/helpers.js`,
 * `test/expected.js`, `src/__tests__/support.ts`). With the default `build.tests` every such file is
 * a test path; with a narrower one (`**\/*.test.js`) it was the driver's, so a GREEN turn could
 * make a frozen test's `expectPhone()` helper assert nothing, or rewrite the expected values a
 * frozen test imports from `test/expected.js`, and the proof of the unchanged bug was green.
 * A changed module that a test (a frozen one, or any test of the base) imports by a relative
 * specifier, and that lies where a runner's defaults look for tests (DEFAULT_TEST_GLOBS), is
 * test-owned: only the navigator changes it, in RED. Code a test imports from `src/` stays the
 * driver's: that is the code under test. One level deep: what such a module imports is not followed.
 */
import path from 'node:path';
import { DEFAULT_TEST_GLOBS } from '../../conductor/roles.js';
import type { FileChange } from '../../conductor/events.js';
import { matchesAny } from '../../core/glob.js';

/** `from './x'`, `import('./x')`, `require('./x')`, `import './x'`: relative specifiers only. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)(['"`])(\.{1,2}\/[^'"`\n]{1,300})\1/g;
/** What node, jest and TypeScript's resolvers try for a specifier without its extension. */
const SUFFIXES = ['', '.js', '.mjs', '.cjs', '.ts', '.mts', '.cts', '.jsx', '.tsx', '.json'];
const INDEX = ['/index.js', '/index.mjs', '/index.cjs', '/index.ts', '/index.tsx', '/index.jsx'];

/** The repository paths `source` (at `from`) may load by its relative specifiers: candidates, not all files. */
export function relativeImports(source: string, from: string): string[] {
  const out = new Set<string>();
  for (const m of source.matchAll(SPECIFIER)) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), m[2]!)).replace(/\/+$/, '');
    if (target === '..' || target.startsWith('../')) continue;
    // A TypeScript test imports `./helpers.js` for `helpers.ts`.
    const stem = target.replace(/\.(?:[mc]?js|jsx)$/, '');
    for (const base of new Set([target, stem])) for (const s of [...SUFFIXES, ...INDEX]) out.add(`${base}${s}`);
  }
  return [...out];
}

/** Changed paths that could be test support: in a test folder by the defaults, but not a test path of the project's. */
export function supportCandidates(changes: readonly FileChange[], testGlobs: readonly string[]): string[] {
  return changes
    .map((c) => c.path)
    .filter((p) => !p.startsWith('../') && !p.startsWith('~/'))
    .filter((p) => matchesAny(p, DEFAULT_TEST_GLOBS) && !matchesAny(p, testGlobs));
}

/** Of `candidates`, those a test in `tests` (path and text) imports. */
export function importedByTests(
  candidates: readonly string[],
  tests: readonly { path: string; text: string }[],
): string[] {
  const imported = new Set(tests.flatMap((t) => relativeImports(t.text, t.path)));
  return candidates.filter((c) => imported.has(c));
}
