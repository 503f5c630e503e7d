/**
 * Longest files first, even on a machine that has never run the suite (CI's, a newcomer's).
 *
 * jest's own sequencer orders by the durations in its cache and, with no cache, by file size. On a
 * fresh machine that puts a short file with much code ahead of a long one with little, and the run
 * ends with one worker busy on a 100-second file the others could have overlapped. This sequencer
 * keeps jest's order wherever its cache knows the file (failed first, then longest first) and uses
 * the committed relative weights in test/setup/durations.json for files the cache does not know;
 * a file in neither (new) counts as long, so it starts early.
 *
 * Regenerate the weights after a full run: `npm run test:durations` (scripts/test-durations.mjs).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Sequencer from '@jest/test-sequencer';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const DefaultSequencer = Sequencer.default ?? Sequencer;

/** Relative path (from the repository root) → seconds, from the committed file. */
function committedWeights() {
  try {
    const parsed = JSON.parse(readFileSync(path.join(here, 'durations.json'), 'utf8'));
    return parsed && typeof parsed.files === 'object' ? parsed.files : {};
  } catch {
    return {};
  }
}

export default class CommittedWeightSequencer extends DefaultSequencer {
  sort(tests) {
    const weights = committedWeights();
    if (Object.keys(weights).length === 0) return super.sort(tests); // none committed: jest's own order
    const known = Object.values(weights);
    const unknownWeight = known.length > 0 ? Math.max(...known) : 0;
    const weightOf = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached / 1000;
      const rel = path.relative(root, test.path).split(path.sep).join('/');
      return weights[rel] ?? unknownWeight;
    };
    const failed = (test) => (this.hasFailed(test) ? 1 : 0);
    return [...tests].sort((a, b) => failed(b) - failed(a) || weightOf(b) - weightOf(a) || (a.path < b.path ? -1 : 1));
  }
}
