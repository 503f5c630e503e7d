/**
 * A migration is not a test, whatever its name: `migrations/…_add_customer_phone.test.sql` matches
 * the default test globs (`**\/*.test.*`) yet the suite applies it as a migration. Were it a test,
 * the navigator could write schema changes in RED and they would then be frozen as a test file.
 */
import { parseConfigText } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/schema.js';
import type { FileChange } from '../../src/conductor/events.js';
import type { Role } from '../../src/conductor/roles.js';
import { checkScope, isTestPath } from '../../src/conductor/scope.js';
import type { Policy, TurnStep } from '../../src/conductor/state.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';

const MIGRATION = 'migrations/1730000400000_add_customer_phone.test.sql';

function refused(policy: Policy, role: Role, step: TurnStep, paths: string[]) {
  const changes: FileChange[] = paths.map((p) => ({ path: p, status: 'added' }));
  return checkScope({ policy, role, step, item: 'T1', changes, frozen: {}, hashes: {} }).map(
    (r) => `${r.path}: ${r.why}`,
  );
}

describe('a file in the migrations directory is never a test', () => {
  const policy = buildPolicy(defaultConfig(), '001-phones');

  it('whatever its name', () => {
    expect(isTestPath(policy, MIGRATION)).toBe(false);
    expect(isTestPath(policy, 'migrations/sub/2_x.spec.sql')).toBe(false);
    expect(isTestPath(policy, 'migrations/__tests__/x.sql')).toBe(false);
    // Tests elsewhere still are.
    expect(isTestPath(policy, 'test/customers.test.js')).toBe(true);
    expect(isTestPath(policy, 'src/customers.test.js')).toBe(true);
  });

  it("so the navigator's RED turn that writes one is refused", () => {
    expect(refused(policy, 'navigator', 'red', ['test/customers.test.js', MIGRATION])).toEqual([
      `${MIGRATION}: the navigator writes tests only in RED`,
    ]);
  });

  it('in a configured migrations directory too', () => {
    const config = parseConfigText('migrations:\n  dir: db/migrations/\n', 'consort.yml');
    const custom = buildPolicy(config, '001-phones');
    expect(isTestPath(custom, 'db/migrations/1_add_phone.test.sql')).toBe(false);
    expect(isTestPath(custom, 'migrations/1_add_phone.test.sql')).toBe(true);
    expect(refused(custom, 'navigator', 'red', ['db/migrations/1_add_phone.test.sql'])).toEqual([
      'db/migrations/1_add_phone.test.sql: the navigator writes tests only in RED',
    ]);
  });
});
