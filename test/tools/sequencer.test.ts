/**
 * test/setup/sequencer.mjs: with no jest cache (a fresh machine), files start in the order of the
 * committed weights, heaviest first; a file the weights do not know starts with the heaviest.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Sequencer from '../setup/sequencer.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const weights = (
  JSON.parse(readFileSync(path.join(root, 'test', 'setup', 'durations.json'), 'utf8')) as {
    files: Record<string, number>;
  }
).files;

// A context whose config turns jest's cache off: only the committed weights can order the files.
const context = { config: { cache: false, cacheDirectory: '/nonexistent', id: 'sequencer-test' } };
const testOf = (rel: string) => ({ path: path.join(root, rel), context });

it('orders files the cache does not know by the committed weights, unknown files first', () => {
  const byWeight = Object.entries(weights).sort(([, a], [, b]) => b - a);
  expect(byWeight.length).toBeGreaterThan(10);
  const heavy = byWeight[0]![0];
  const light = byWeight[byWeight.length - 1]![0];
  const middle = byWeight.find(([, w]) => w < weights[heavy]! && w > weights[light]!)![0];
  const unknown = 'test/never/written.test.ts';

  const sequencer = new Sequencer({});
  const sorted = sequencer.sort([light, middle, unknown, heavy].map(testOf)) as Array<{ path: string }>;
  expect(sorted.map((t) => path.relative(root, t.path))).toEqual([
    ...[unknown, heavy].sort(), // the same weight: by path
    middle,
    light,
  ]);
});
