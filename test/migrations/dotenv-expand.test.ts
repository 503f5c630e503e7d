/**
 * expandDotenv (src/migrations/dotenv-expand.ts): dotenv-expand's expand() as node-pg-migrate's
 * CLI calls it, after dotenv.config() put each variable the environment lacked into it unexpanded.
 * The expected values are what dotenv-expand 12.0.3 and 1000.0.0 themselves give for the same
 * file and environment.
 */
import { expandDotenv } from '../../src/migrations/dotenv-expand.js';

/** The environment as the CLI's is when expand() runs: dotenv.config() has set what it lacked. */
function afterConfig(parsed: Record<string, string>, env: Record<string, string>): Record<string, string> {
  const out = { ...env };
  for (const [k, v] of Object.entries(parsed)) out[k] ??= v;
  return out;
}

it.each([
  ['a braced and a bare reference', { BASIC: 'basic', A: '${BASIC}', B: '$BASIC' }, {}, { A: 'basic', B: 'basic' }],
  ['a later line', { A: 'x-${B}', B: 'b' }, {}, { A: 'x-b' }],
  ['a chain', { A: '${B}', B: 'x$C', C: 'c' }, {}, { A: 'xc', B: 'xc' }],
  ['the environment', { HOMEDIR: '${HOME}/app' }, { HOME: '/home/ci' }, { HOMEDIR: '/home/ci/app' }],
  [
    'the environment over the file',
    { MACHINE: 'file', M: '$MACHINE' },
    { MACHINE: 'env' },
    { MACHINE: 'env', M: 'env' },
  ],
  ['unset: empty', { A: '$UNDEFINED' }, {}, { A: '' }],
  [
    'unset or empty: the default',
    { A: '${NOPE:-fallback}', B: '${EMPTY:-d}', C: '${EMPTY-d}' },
    { EMPTY: '' },
    { A: 'fallback', B: 'd', C: 'd' },
  ],
  ['set: the alternative', { A: '${HOME:+alt}', B: '${NOPE:+alt}' }, { HOME: '/h' }, { A: 'alt', B: '' }],
  ['itself: empty, or its default', { A: '$A', B: '${B:-self}' }, {}, { A: '', B: 'self' }],
  ['an escaped dollar', { A: '\\$HOME', B: 'pa\\$\\$word' }, { HOME: '/h' }, { A: '$HOME', B: 'pa$$word' }],
  ['two references to each other', { X: '${Y}', Y: '${X}' }, {}, { X: '', Y: '' }],
] as const)('expands %s', (_what, parsed, env, want) => {
  expect(expandDotenv(parsed, afterConfig(parsed, env))).toMatchObject(want);
});

it.each([
  [
    'unset and empty apart for - and +',
    { VAR: '', U: '${VAR-d}', W: '${NOPE-d}', S: '${VAR+alt}', T: '${NOPE+alt}' },
    {},
    { U: '', W: 'd', S: 'alt', T: '' },
  ],
  ['empty as unset for :- and :+', { A: '${EMPTY:-d}', B: '${EMPTY:+alt}' }, { EMPTY: '' }, { A: 'd', B: '' }],
  ['an earlier line expanded', { C: 'c', B: 'x$C', A: '${B}' }, {}, { A: 'xc', B: 'xc' }],
  ['a later line as written, not followed', { A: '${B}', B: 'x$C', C: 'c' }, {}, { A: 'x$C', B: 'xc' }],
  [
    'the environment over the file',
    { MACHINE: 'file', M: '$MACHINE' },
    { MACHINE: 'env' },
    { MACHINE: 'env', M: 'env' },
  ],
  ['a command substitution left as written', { A: '$(printf run)' }, {}, { A: '$(printf run)' }],
] as const)("expands by 1000's rules: %s", (_what, parsed, env, want) => {
  expect(expandDotenv(parsed, afterConfig(parsed, env), '1000')).toMatchObject(want);
});

it("12's rules take an empty variable as unset for - and + too", () => {
  const parsed = { VAR: '', U: '${VAR-d}', S: '${VAR+alt}' };
  expect(expandDotenv(parsed, afterConfig(parsed, {}), '12')).toMatchObject({ U: 'd', S: '' });
});

it('leaves a variable the environment held before with another value as it was', () => {
  const parsed = { SOME_ENV: 'development', OTHER: '${SOME_ENV}-x' };
  expect(expandDotenv(parsed, afterConfig(parsed, { SOME_ENV: 'production' }))).toEqual({
    SOME_ENV: 'production',
    OTHER: 'production-x',
  });
});

it('gives the same values when applied again to the environment it wrote', () => {
  const parsed = { A: '${B}', B: 'x$C', C: 'c', D: '${A:-d}' };
  const first = expandDotenv(parsed, afterConfig(parsed, {}));
  expect(expandDotenv(parsed, { ...first })).toEqual(first);
});
