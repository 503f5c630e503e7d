/** How a run's settings differ from those the stopped run planned under (src/conductor/policy-change.ts). */
import { policyChanges } from '../../src/conductor/policy-change.js';
import { policy } from './fixtures.js';

describe('policyChanges', () => {
  it('is empty for the same settings, and before any run', () => {
    expect(policyChanges(policy(), policy())).toEqual([]);
    expect(policyChanges(null, policy({ gateMode: 'proxy' }))).toEqual([]);
  });

  it('names each setting that differs, with its flag or configuration key', () => {
    expect(
      policyChanges(
        policy({ gateMode: 'proxy', experiments: 3 }),
        policy({ gateMode: 'human', experiments: 1, tests: ['spec/**'] }),
      ),
    ).toEqual([
      'gates (--gates, gates.mode): proxy → human',
      'experiments (--experiments, build.experiments): 3 → 1',
      'build.tests changed',
    ]);
  });

  it('does not count a field the stored state predates, when the new value is its default', () => {
    const { harness: _h, locked: _l, ...older } = policy({ harness: [], locked: [] });
    expect(policyChanges(older as ReturnType<typeof policy>, policy({ harness: [], locked: [] }))).toEqual([]);
  });
});
