/**
 * What reversibility says of a JavaScript down node-pg-migrate could not infer: its message names
 * the function inside node-pg-migrate (`pgm._alter()` for alterTable, alterPolicy…), or nothing at
 * all for an up that reads the database; the detail names the file's own calls and the fix.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { MigrationBuilder } from 'node-pg-migrate';
import { uninferableDownDetail } from '../../src/lanes/check/down-detail.js';

const cjs = (up: string) => ({ content: `exports.up = (pgm) => {\n${up}\n};\n` });
const FIX_CJS =
  'write a down that undoes the up, or if it cannot be undone declare it irreversible (`exports.down = false`)';

test("names the file's call behind node-pg-migrate's internal name", () => {
  const rls = cjs(
    "  pgm.alterTable('orders', { levelSecurity: 'ENABLE' });\n  pgm.createPolicy('orders', 'own', { using: 'true' });",
  );
  expect(uninferableDownDetail(rls, 'Impossible to automatically infer down migration for "pgm._alter()"')).toBe(
    `node-pg-migrate cannot infer the down of pgm.alterTable() (node-pg-migrate calls it "pgm._alter()"): ${FIX_CJS}`,
  );
  const adds = cjs("  pgm.addColumns('t', { a: 'int' });\n  pgm.addTypeValue('mood', 'meh');");
  expect(uninferableDownDetail(adds, 'Impossible to automatically infer down migration for "pgm._add()"')).toBe(
    `node-pg-migrate cannot infer the down of one of pgm.addColumns(), pgm.addTypeValue() (node-pg-migrate calls it "pgm._add()"): ${FIX_CJS}`,
  );
});

/** What node-pg-migrate's builder throws inferring the down of `pgm.sql(…)`, as that version words it. */
function sqlDownMessage(Builder: new (...args: never[]) => unknown): string {
  const pgm = new (
    Builder as unknown as new (...args: unknown[]) => {
      enableReverseMode(): void;
      sql(text: string): void;
    }
  )({}, {}, false, console);
  pgm.enableReverseMode();
  try {
    pgm.sql('UPDATE t SET a = 1');
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('pgm.sql reversed');
}

test('raw SQL, which node-pg-migrate 7 and 9 name by no name at all ("pgm.()"), is named pgm.sql()', () => {
  // 7.x does not export its builder: its file, beside the package's entry.
  const require = createRequire(import.meta.url);
  const entry = require.resolve('node-pg-migrate-7');
  const v7 = (require(path.join(path.dirname(entry), 'migrationBuilder.js')) as { default: never }).default;
  for (const message of [sqlDownMessage(MigrationBuilder as never), sqlDownMessage(v7)]) {
    expect(message).toBe('Impossible to automatically infer down migration for "pgm.()"');
    expect(uninferableDownDetail(cjs("  pgm.sql('UPDATE t SET a = 1');"), message)).toBe(
      `node-pg-migrate cannot infer the down of pgm.sql() (node-pg-migrate calls it "pgm.()"): ${FIX_CJS}`,
    );
  }
});

test('an up that reads the database, a named operation, another reason, and an ES module', () => {
  expect(
    uninferableDownDetail(cjs('  await pgm.db.query("SELECT 1");'), 'Impossible to automatically infer down migration'),
  ).toBe(`node-pg-migrate cannot infer the down of an up that reads the database (pgm.db): ${FIX_CJS}`);
  expect(
    uninferableDownDetail(
      cjs("  pgm.sql('SELECT 1');"),
      'Impossible to automatically infer down migration for "pgm.sql()"',
    ),
  ).toBe(`node-pg-migrate cannot infer the down of pgm.sql(): ${FIX_CJS}`);
  expect(
    uninferableDownDetail(
      { content: "export const up = (pgm) => { pgm.addConstraint('t', null, 'CHECK (a > 0)'); };\n" },
      'Impossible to automatically infer down migration for addConstraint without naming constraint',
    ),
  ).toBe(
    'Impossible to automatically infer down migration for addConstraint without naming constraint: write a down that undoes the up, or if it cannot be undone declare it irreversible (`export const down = false`)',
  );
  expect(uninferableDownDetail(cjs(''), 'relation "t" does not exist')).toBeUndefined();
});
