/** A turn's diff stat: which commits it is measured between, and git's numstat read back. */
import { diffStatOf, parseNumstat, turnSpan } from '../../src/dashboard/diff-stat.js';
import { T0, turn } from './fixture.js';

const a = 'a'.repeat(40);
const b = 'b'.repeat(40);
const turns = [
  turn({ id: 'turn-0000', role: 'navigator', step: 'red', base: a, filesChanged: ['test/x.test.js'] }, 'f', T0),
  turn(
    { id: 'turn-0001', role: 'driver', step: 'green', base: b, filesChanged: ['src/x.js', 'src/y.png'] },
    'f',
    T0 + 1,
  ),
  turn({ id: 'turn-0002', role: 'driver', step: 'refactor', filesChanged: [] }, 'f', T0 + 2),
];

it.each([
  ["to the next turn's start", 'turn-0000', 'HEAD', { from: a, to: b }],
  ['the last turn with a base: to the head', 'turn-0001', 'HEAD', { from: b, to: 'HEAD' }],
  ['no base recorded', 'turn-0002', 'HEAD', null],
  ['no such turn', 'turn-9', 'HEAD', null],
  ['no head known', 'turn-0001', null, null],
])('turnSpan: %s', (_name, id, head, span) => {
  expect(turnSpan(turns, id, head)).toEqual(span);
});

it('reads numstat (binary files have no counts) and leaves files the turn did not keep at 0', () => {
  const counts = parseNumstat('12\t3\tsrc/x.js\0-\t-\tsrc/y.png\0');
  expect(diffStatOf({ ...turns[1]!, filesChanged: ['src/x.js', 'src/y.png', 'src/gone.js'] }, counts)).toEqual([
    { path: 'src/x.js', added: 12, removed: 3 },
    { path: 'src/y.png', added: null, removed: null },
    { path: 'src/gone.js', added: 0, removed: 0 },
  ]);
  expect(diffStatOf(turns[1]!, null)).toEqual([
    { path: 'src/x.js', added: null, removed: null },
    { path: 'src/y.png', added: null, removed: null },
  ]);
});
