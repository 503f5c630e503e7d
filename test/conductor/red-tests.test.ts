/** RED's line counts the tests that fail, not every test of the file the navigator changed. */
import { redTests } from '../../src/conductor/red-tests.js';

it.each([
  [{ tests: ['a', 'b'], failing: ['b'] }, "1 test (of the item's 2) fails for the right reason"],
  [{ tests: ['a', 'b'], failing: ['a', 'b'] }, '2 tests fail for the right reason'],
  [{ tests: ['a'] }, '1 test fails for the right reason'], // a log written before `failing` was recorded
])('%j', (event, line) => {
  expect(redTests(event)).toBe(line);
});
