/**
 * Where a statement a JS/TS migration sent comes from: the `pgm.*` call, or the first line with
 * the statement quoted when no call can be told. Sources as node-pg-migrate projects write them
 * (TypeScript with types, `pgm.sql` with template literals, `pgm.db.query`).
 */
import { statementAt, statementTarget } from '../../src/lint/context.js';
import { locateStatements } from '../../src/lint/locate.js';

const TS = `/* eslint-disable @typescript-eslint/naming-convention */
import { MigrationBuilder, ColumnDefinitions } from 'node-pg-migrate';

export const shorthands: ColumnDefinitions | undefined = undefined;

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  pgm.createIndex('orders', ['lower(email)'], { name: 'orders_email_lower_idx', concurrently: true });
  pgm.sql(\`
    UPDATE orders
       SET email = lower(email)
     WHERE email <> lower(email)\`);
  await pgm.db.query('ANALYZE orders');
  pgm.addColumns('orders', { refunded_at: { type: 'timestamptz' } });
}
`;

describe('locateStatements', () => {
  it('puts generated, verbatim and pgm.db.query statements on their calls', () => {
    const lines = locateStatements(TS, [
      'CREATE INDEX CONCURRENTLY "orders_email_lower_idx" ON "orders" (lower(email));',
      'UPDATE orders\n       SET email = lower(email)\n     WHERE email <> lower(email)',
      'ANALYZE orders',
      'ALTER TABLE "orders"\n  ADD "refunded_at" timestamptz;',
    ]);
    expect(lines).toEqual([
      { line: 8, exact: true },
      { line: 9, exact: true },
      { line: 13, exact: true },
      { line: 14, exact: true },
    ]);
  });

  it('falls back to the first line, not a neighbour, when nothing names the statement', () => {
    expect(locateStatements(TS, ['SET lock_timeout = 1000'])).toEqual([{ line: 1, exact: false }]);
  });
});

describe('statementTarget and statementAt', () => {
  it.each([
    ['CREATE INDEX CONCURRENTLY "orders_email_idx" ON "orders" ("email");', [null, 'orders']],
    ['create unique index x on only app.Orders (a)', ['app', 'orders']],
    ['ALTER TABLE IF EXISTS "App"."Audit Log" ADD COLUMN id serial PRIMARY KEY', ['App', 'Audit Log']],
    ['-- comment\nALTER TABLE refunds ADD CONSTRAINT refunds_pkey PRIMARY KEY (id)', [null, 'refunds']],
  ])('%s', (statement, target) => {
    expect(statementTarget(statement)).toEqual(target);
  });

  it('finds the statement around a line', () => {
    const sql = 'CREATE TABLE a (id int);\nALTER TABLE a\n  ADD COLUMN b int;\nSELECT 1;';
    expect(statementAt(sql, 2)).toBe('ALTER TABLE a\n  ADD COLUMN b int;');
    expect(statementAt(sql, 0)).toBe('CREATE TABLE a (id int);');
  });
});
