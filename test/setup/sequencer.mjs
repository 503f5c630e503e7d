/**
 * The order jest starts test files in: its own (a file that failed last time first, then the
 * slowest), with the durations committed in test/setup/durations.json standing in where jest's cache
 * has none — on a fresh machine, CI's among them, jest would otherwise go by file size, and a slow
 * file started last leaves the other workers idle at the end of the run. Regenerate the durations
 * from a whole run: `npm test -- --json --outputFile=/tmp/jest.json` then
 * `node scripts/test-durations.mjs /tmp/jest.json`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Sequencer from '@jest/test-sequencer';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const committed = JSON.parse(readFileSync(path.join(root, 'test/setup/durations.json'), 'utf8'));

export default class CommittedDurations extends (Sequencer.default ?? Sequencer) {
  time(test) {
    const cached = super.time(test);
    if (cached != null) return cached;
    const seconds = committed[path.relative(root, test.path).split(path.sep).join('/')];
    // Milliseconds, as jest's cache keeps them; a file not listed yet (new) runs first, as in jest.
    return typeof seconds === 'number' ? seconds * 1000 : undefined;
  }
}
