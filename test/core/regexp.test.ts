import { escapeRegExp } from '../../src/core/regexp.js';

it.each(['001_init.sql', 'a+b (copy)[1].sql', '^$.*+?{}|\\', 'café-é', ''])(
  'escapeRegExp(%j) matches exactly itself',
  (s) => {
    expect(new RegExp(`^${escapeRegExp(s)}$`).test(s)).toBe(true);
    expect(new RegExp(`^${escapeRegExp(s)}$`, 'u').test(s)).toBe(true);
  },
);

it('a metacharacter is matched literally, never as an operator', () => {
  expect(new RegExp(`^${escapeRegExp('a.c')}$`).test('abc')).toBe(false);
  expect(new RegExp(`^${escapeRegExp('a*')}$`).test('aaa')).toBe(false);
  expect(new RegExp(escapeRegExp('(x|y)')).test('y')).toBe(false);
});
