/**
 * Names node-pg-migrate mishandles are refused in the plan, naming the file; projects that deploy
 * with `--no-check-order` get order conflicts as warnings (`migrations.checkOrder: false`).
 */
import { migrationSetFromEntries } from '../../src/migrations/files.js';
import { planMigrations } from '../../src/migrations/plan.js';

const sql = (name: string) =>
  `-- Up Migration\nSELECT 1; -- ${name.replace(/\n/g, ' ')}\n-- Down Migration\nSELECT 2;\n`;
const set = (...files: string[]) =>
  migrationSetFromEntries(files.map((f) => ({ file: `migrations/${f}`, content: sql(f) })));
const BASE = ['1700000000000_create-orders.sql', '1700000000005_add-totals.js'];

describe('planMigrations: names node-pg-migrate cannot record or Consort cannot lint', () => {
  it.each([
    ['a line break', '1700000000006_add\nindex.js', /line break/],
    ['a carriage return', '1700000000006_add\rindex.js', /line break/],
    ["a '", "1700000000006_o'brien-customers.sql", /holds a ', which breaks node-pg-migrate's insert/],
  ])('refuses a name holding %s, naming the file', (_what, file, reason) => {
    const plan = planMigrations(set(...BASE), set(...BASE, file));
    expect(plan.ok).toBe(false);
    if (plan.ok) return;
    expect(plan.problems).toHaveLength(1);
    expect(plan.problems[0]).toMatchObject({ kind: 'invalid-name', file: `migrations/${file}` });
    expect((plan.problems[0] as { reason: string }).reason).toMatch(reason);
  });

  it('accepts a name with a space (node-pg-migrate handles it)', () => {
    const plan = planMigrations(set(...BASE), set(...BASE, '1700000000006_backfill lowercase emails.js'));
    expect(plan).toMatchObject({ ok: true, warnings: [] });
  });
});

describe('planMigrations: migrations.checkOrder', () => {
  const head = [...BASE, '1700000000003_hotfix-index.sql', '1700000000007_next.sql'];

  it('by default an out-of-order migration fails the plan', () => {
    const plan = planMigrations(set(...BASE), set(...head));
    expect(plan.ok).toBe(false);
    if (!plan.ok)
      expect(plan.problems.map((p) => [p.kind, p.file])).toEqual([
        ['order-conflict', 'migrations/1700000000003_hotfix-index.sql'],
      ]);
  });

  it('with checkOrder false it is a warning and the plan passes', () => {
    const plan = planMigrations(set(...BASE), set(...head), { checkOrder: false });
    expect(plan.ok).toBe(true);
    expect(plan.warnings).toEqual([
      expect.objectContaining({
        kind: 'order-conflict',
        file: 'migrations/1700000000003_hotfix-index.sql',
        newestOnBase: '1700000000005_add-totals',
      }),
    ]);
    expect(plan.newMigrations.map((m) => m.name)).toEqual(['1700000000003_hotfix-index', '1700000000007_next']);
  });

  it('still fails other problems with checkOrder false', () => {
    const plan = planMigrations(set(...BASE), set(BASE[0]!, '1700000000003_hotfix-index.sql'), { checkOrder: false });
    expect(plan.ok).toBe(false);
    if (!plan.ok) expect(plan.problems.map((p) => p.kind)).toEqual(['history-rewritten']);
  });
});
