/**
 * GREEN, like RED, holds the tests that passed at the last green proof to still run: a suite that
 * stops early or a test made to skip leaves fewer failures, not a green proof.
 */
import type { ProofTest } from '../../src/conductor/events.js';
import { judgeGreen } from '../../src/conductor/proofs.js';
import { ran } from './fixtures.js';

const old: ProofTest = { id: 'customers::creates', file: 'test/customers.test.js', state: 'passed' };
const other: ProofTest = { id: 'orders::places', file: 'test/orders.test.js', state: 'passed' };
const item: ProofTest = { id: 'phones::T1 works', file: 'test/phones.test.js', state: 'passed' };
const passing = [old.id, other.id];
const judge = (tests: ProofTest[]) => judgeGreen({ outcome: ran(tests), itemTests: [item.id], frozen: {}, passing });

describe('judgeGreen and the tests that passed before', () => {
  it('is green when they all still pass', () => {
    expect(judge([old, other, item]).verdict).toBe('green');
  });

  it('refuses a suite in which one no longer ran', () => {
    expect(judge([old, item])).toMatchObject({
      verdict: 'failing',
      reason: 'previously passing tests must still pass: orders::places no longer ran',
    });
  });

  it("refuses one skipped now, in the navigator's own test file too", () => {
    const skipped = { ...other, state: 'skipped' as const };
    expect(judge([old, skipped, item])).toMatchObject({
      verdict: 'failing',
      reason: 'previously passing tests must still pass: orders::places are skipped now',
    });
    // A skip in the item's own file that only the implementation sets off (`(impl ? it.skip : it)(…)`).
    const skippedHere: ProofTest = { id: 'phones::old', file: 'test/phones.test.js', state: 'skipped' };
    expect(
      judgeGreen({
        outcome: ran([old, other, skippedHere, item]),
        itemTests: [item.id],
        frozen: {},
        passing: [...passing, 'phones::old'],
      }),
    ).toMatchObject({ verdict: 'failing', reason: expect.stringContaining('phones::old are skipped now') });
  });

  it('asks nothing of the baseline', () => {
    expect(judgeGreen({ outcome: ran([old]), itemTests: [], frozen: {} }).verdict).toBe('green');
  });
});
