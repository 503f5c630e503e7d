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

describe('planMigrations: the order node-pg-migrate 6–8 give a number not followed by `_`', () => {
  // 6–8 read the order number from the text before the first `_` (0 when it is not all digits);
  // 9 reads the leading digits. The plan orders names as the engine that applies them does.
  const base = ['0001_users.js', '0002_posts.js'];

  it.each(['7.9.1', '6.2.2', '8.0.4'])(
    'on %s, `0003-pins.js` after `0002_posts.js` is an order conflict renamed with `_`',
    (v) => {
      const plan = planMigrations(set(...base), set(...base, '0003-pins.js'), { engineVersion: v });
      expect(plan).toMatchObject({
        ok: false,
        problems: [
          {
            kind: 'order-conflict',
            file: 'migrations/0003-pins.js',
            newestOnBase: '0002_posts',
            suggestedName: '0003_pins.js',
            suggestedFile: 'migrations/0003_pins.js',
          },
        ],
      });
    },
  );

  it('on 9 (and when the engine is not known) the same file is in order', () => {
    for (const options of [{ engineVersion: '9.0.0' }, {}])
      expect(planMigrations(set(...base), set(...base, '0003-pins.js'), options)).toMatchObject({
        ok: true,
        warnings: [],
      });
  });

  it('a 13-digit timestamp with a space or `-` after it, and no number free: the next free one, with `_`', () => {
    const timestamps = ['1700000000000_orders.sql', '1700000000005_totals.sql'];
    const plan = planMigrations(
      set(...timestamps),
      set(...timestamps, '1700000000005 refunds.sql', '1700000000003-hotfix.sql'),
      { engineVersion: '7.9.1' },
    );
    expect(plan.ok).toBe(false);
    if (!plan.ok)
      expect(plan.problems.map((p) => [p.kind, p.file, 'suggestedName' in p ? p.suggestedName : null])).toEqual([
        ['order-conflict', 'migrations/1700000000003-hotfix.sql', '1700000000006_hotfix.sql'],
        ['order-conflict', 'migrations/1700000000005 refunds.sql', '1700000000007_refunds.sql'],
      ]);
  });

  it('a history numbered with `-` throughout orders by name there: nothing to say', () => {
    const dashed = ['001-users.js', '002-posts.sql'];
    expect(planMigrations(set(...dashed), set(...dashed, '003-pins.js'), { engineVersion: '7.9.1' })).toMatchObject({
      ok: true,
      warnings: [],
    });
  });

  it('a name of digits alone: 7–8 read `0003.js` (0), 6 reads `0003` (3)', () => {
    expect(planMigrations(set(...base), set(...base, '0003.js'), { engineVersion: '7.9.1' })).toMatchObject({
      ok: false,
      problems: [{ kind: 'order-conflict', suggestedName: '0003_.js' }],
    });
    expect(planMigrations(set(...base), set(...base, '0003.js'), { engineVersion: '6.2.2' })).toMatchObject({
      ok: true,
      warnings: [],
    });
  });

  it('a `_` name after a larger-numbered `-` one on base is in order there (6–8 sort that one as 0)', () => {
    // 7.9.1 sorts `0009-tags.js` (0) before `0001_users.js` (1): `0008_pins.js` (8) comes last.
    const mixed = ['0001_users.js', '0009-tags.js'];
    for (const v of ['6.2.2', '7.9.1', '8.0.4'])
      expect(planMigrations(set(...mixed), set(...mixed, '0008_pins.js'), { engineVersion: v })).toMatchObject({
        ok: true,
        warnings: [],
      });
    // On 9 it sorts by the leading digits, so the same file precedes `0009-tags.js`.
    expect(planMigrations(set(...mixed), set(...mixed, '0008_pins.js'), { engineVersion: '9.0.0' })).toMatchObject({
      ok: false,
      problems: [{ kind: 'order-conflict', newestOnBase: '0009-tags' }],
    });
  });

  it('a `_` name below the newest `_` number on base is an order conflict named after that one', () => {
    const mixed = ['0001_users.js', '0005_posts.js', '0009-tags.js'];
    expect(planMigrations(set(...mixed), set(...mixed, '0003_pins.js'), { engineVersion: '7.9.1' })).toMatchObject({
      ok: false,
      problems: [{ kind: 'order-conflict', newestOnBase: '0005_posts', suggestedName: '0006_pins.js' }],
    });
  });

  it('in a history numbered with `-`, a name sorting before the newest is renumbered in the same style', () => {
    const dashed = ['001-users.js', '010-posts.sql'];
    expect(planMigrations(set(...dashed), set(...dashed, '005-pins.js'), { engineVersion: '7.9.1' })).toMatchObject({
      ok: false,
      problems: [{ kind: 'order-conflict', newestOnBase: '010-posts', suggestedName: '011-pins.js' }],
    });
  });

  it('with checkOrder false it is a warning', () => {
    const plan = planMigrations(set(...base), set(...base, '0003-pins.js'), {
      engineVersion: '7.9.1',
      checkOrder: false,
    });
    expect(plan).toMatchObject({ ok: true, warnings: [{ kind: 'order-conflict', suggestedName: '0003_pins.js' }] });
  });
});
