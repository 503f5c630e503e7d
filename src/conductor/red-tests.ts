/** How a RED proof's tests read in the run's output and in `consort log`. */
import { count } from '../core/plural.js';

/** "1 test fails for the right reason" (of the item's tests, those that fail; older logs name only the item's). */
export function redTests(event: { tests: readonly string[]; failing?: readonly string[] | undefined }): string {
  const n = (event.failing ?? event.tests).length;
  const of =
    event.failing && event.failing.length !== event.tests.length ? ` (of the item's ${event.tests.length})` : '';
  return `${count(n, 'test')}${of} ${n === 1 ? 'fails' : 'fail'} for the right reason`;
}
