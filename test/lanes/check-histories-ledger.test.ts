/**
 * The PR lane on ledger-cjs (test/fixtures/histories): CommonJS migrations on the bundled
 * node-pg-migrate 9 in the style of bookkeeping histories — domains (`pgm.createDomain` with a
 * check, NOT NULL), a sequence, a range-partitioned table (`createTable`'s `partition` option) whose
 * partitions a loop makes with template-literal `pgm.sql`, an async up that asks the server its
 * version (`pgm.db.select`) to choose an index's options, a materialized view, a domain renamed.
 * Base holds the domains and the partitioned table; the pull request adds a partition, a view and
 * a column on the partitioned table. One check, every stage looked at; verdicts worked out by hand.
 */
import { checkAgainstMain } from '../helpers/check-repo.js';
import { history } from '../helpers/history-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

let t: TestProvider;
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => t?.cleanup());

describe('ledger-cjs: domains and a partitioned table on the bundled node-pg-migrate 9', () => {
  it("the pull request's role may change base's partitioned table, and the diff says each change once", async () => {
    const h = await history('ledger-cjs', 2, {});
    try {
      const report = await checkAgainstMain(h.dir, 401, t.provider);
      expect(report.error).toBeUndefined();
      expect(report.stages.plan).toMatchObject({
        status: 'passed',
        newMigrations: ['1705000000002_april-and-totals', '1705000000003_entry-reference'],
      });
      // A partition of base's table, and a column on it: both need its owner, which the pull
      // request's confined role must be (the partitioned table and each partition alike).
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [{ name: '1705000000002_april-and-totals' }, { name: '1705000000003_entry-reference' }],
      });
      // By hand: down drops the view and the partition, but not the constraint up added to the
      // domain (a slip such histories carry), so up cannot run again; the domain rename and the
      // column reverse.
      expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
        ['1705000000002_april-and-totals', 'not-restored'],
        ['1705000000003_entry-reference', 'reversible'],
      ]);
      const april = report.stages.reversibility.migrations[0]!;
      expect(JSON.stringify(april)).toContain('amount_positive_range');
      // The column added to the partitioned table and the domain its amount now has are one line
      // each: every partition has them by being one.
      const diff = report.stages.schemaDiff.text;
      expect(diff).toContain('+ column public.entries.reference text');
      expect(diff).toContain('~ column public.entries.amount: public.amount_minor → public.amount_cents');
      expect(diff).not.toMatch(/column public\.entries_(2024_0\d|default)\./);
      expect(diff).toContain(
        "+ table public.entries_2024_04 PARTITION OF public.entries FOR VALUES FROM ('2024-04-01') TO ('2024-05-01')",
      );
      expect(diff).toContain('+ materialized view public.monthly_totals');
      // The index's options were chosen by the server's version, read inside up (PostgreSQL 15+).
      expect(diff).toMatch(/monthly_totals_month_currency_unique_index .*NULLS NOT DISTINCT/);
      expect(
        report.stages.lint.findings.map((f) => [f.file.replace('migrations/', ''), f.line, f.rule]),
      ).toContainEqual(['1705000000002_april-and-totals.js', 22, 'ban-alter-domain-with-add-constraint']);
    } finally {
      await h.dispose();
    }
  });
});
