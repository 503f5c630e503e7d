import { globToRegExp, matchesAny, matchesGlob } from '../../src/core/glob.js';

describe('path globs for role scopes', () => {
  it.each([
    ['test/a.test.js', 'test/**', true],
    ['test', 'test/**', true],
    ['src/test/a.js', 'test/**', false],
    ['a.test.js', '**/*.test.*', true],
    ['src/deep/a.test.ts', '**/*.test.*', true],
    ['src/deep/a.ts', '**/*.test.*', false],
    ['a/b/c/d', 'a/**/d', true],
    ['a/d', 'a/**/d', true],
    ['a/bd', 'a/**/d', false],
    ['.consort/features/001-x/state.json', '**', true],
    ['.github/workflows/ci.yml', '.github/**', true],
    ['src/a.js', 'src/*.{js,ts}', true],
    ['src/a.md', 'src/*.{js,ts}', false],
    ['src/x/a.js', 'src/*.js', false],
    ['v1', 'v[0-9]', true],
    ['ab', 'a[!b]', false],
    ['x.y', 'x?y', true],
    ['x/y', 'x?y', false],
    ['a+b(c).js', 'a+b(c).js', true],
    ['./src/a.js', 'src/**', true],
  ])('%s against %s: %s', (path, glob, expected) => {
    expect(matchesGlob(path, glob)).toBe(expected);
  });

  it('reads a list in order: the last matching entry decides, ! excludes', () => {
    const driver = ['**', '!test/**', '!.consort/**'];
    expect(matchesAny('src/a.js', driver)).toBe(true);
    expect(matchesAny('migrations/1_x.sql', driver)).toBe(true);
    expect(matchesAny('test/a.test.js', driver)).toBe(false);
    expect(matchesAny('.consort/features/001-x/gates.json', driver)).toBe(false);
    expect(matchesAny('anything', [])).toBe(false);
    expect(matchesAny('src/a.js', ['!test/**'])).toBe(false);
    // A later entry re-includes what an earlier one excluded.
    const reads = ['**', '!.consort/**', '.consort/features/001-x/feature-spec.json'];
    expect(matchesAny('.consort/features/001-x/feature-spec.json', reads)).toBe(true);
    expect(matchesAny('.consort/features/001-x/state.json', reads)).toBe(false);
  });

  it('compiles each glob once', () => {
    expect(globToRegExp('src/**')).toBe(globToRegExp('src/**'));
  });
});
