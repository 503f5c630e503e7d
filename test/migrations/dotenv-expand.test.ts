/**
 * expandDotenv (src/migrations/dotenv-expand.ts): dotenv-expand 12's expand() as node-pg-migrate's
 * CLI calls it, after dotenv.config() put each variable the environment lacked into it unexpanded.
 * The expected values are what dotenv-expand 12.0.3 itself gives for the same file and environment.
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
