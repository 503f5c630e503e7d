/** Timeout advice that cannot apply: the statements after squawk's one finding, read against the base. */
import { statementsFrom, timeoutNote } from '../../src/lint/timeouts.js';

const base = new Set(['orders', 'public.orders', 'billing.ledger', 'ledger']);
const note = (...statements: string[]) => timeoutNote('require-lock-timeout', statements, base);

describe('timeoutNote', () => {
  it.each([
    [
      'a new table, its key, index and comments',
      [
        'ALTER TABLE invoices ADD PRIMARY KEY (id)',
        'CREATE INDEX i ON invoices (x)',
        "COMMENT ON COLUMN public.invoices.x IS 'y'",
        'COMMENT ON TABLE invoices IS $$z$$',
      ],
    ],
    [
      'quoted and schema-qualified new names',
      [
        'ALTER TABLE "Billing"."Invoices" ADD COLUMN n int',
        'CREATE UNIQUE INDEX CONCURRENTLY u ON billing.invoices (n)',
      ],
    ],
    [
      'new functions, types and views; rows and grants never ask for a timeout',
      [
        'CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$',
        "CREATE TYPE mood AS ENUM ('ok')",
        'CREATE VIEW v AS SELECT * FROM orders',
        'INSERT INTO orders VALUES (1)',
        'GRANT SELECT ON orders TO r',
        'UPDATE orders SET id = id',
      ],
    ],
    [
      'a foreign key between two new tables',
      ['CREATE TABLE b (a_id bigint REFERENCES a (id))', 'ALTER TABLE c ADD FOREIGN KEY (b) REFERENCES b (id)'],
    ],
  ])('notes %s', (_title, statements) => {
    expect(note(...statements)).toMatch(/nothing live waits on these locks/);
  });

  it.each([
    ['an ALTER on a live table', ['ALTER TABLE invoices ADD PRIMARY KEY (id)', 'ALTER TABLE orders ADD COLUMN n int']],
    ['a live table named with its schema', ['ALTER TABLE billing.ledger ADD COLUMN n int']],
    ['a foreign key to a live table', ['CREATE TABLE refunds (order_id bigint REFERENCES orders (id))']],
    ['a partition of a live table', ['CREATE TABLE orders_2026 PARTITION OF orders FOR VALUES FROM (1) TO (2)']],
    ['a table inheriting a live one', ['CREATE TABLE child (x int) INHERITS (orders)']],
    [
      'a DO block (its statements are not read)',
      ['CREATE INDEX i ON invoices (x)', 'DO $$ BEGIN ALTER TABLE orders ADD COLUMN y int; END $$'],
    ],
    ['a replaced function or view', ['CREATE OR REPLACE VIEW v AS SELECT 1']],
    ['a dropped index (its table cannot be told)', ['DROP INDEX orders_idx']],
    ['a drop of several tables', ['DROP TABLE a, orders']],
    ['an explicit LOCK', ['LOCK TABLE invoices', 'LOCK TABLE orders']],
    ['a comment on a live column', ["COMMENT ON COLUMN orders.id IS 'x'"]],
  ])('keeps it for %s', (_title, statements) => {
    expect(note(...statements)).toBeUndefined();
  });

  it('is only about the timeout rules', () => {
    expect(timeoutNote('prefer-bigint-over-int', ['CREATE INDEX i ON invoices (x)'], base)).toBeUndefined();
  });
});

describe('statementsFrom', () => {
  it('starts at the statement around the line and runs to the end', () => {
    const sql = 'CREATE TABLE a (id int);\nALTER TABLE a\n  ADD COLUMN b int;\nCREATE INDEX i ON a (b);\n';
    expect(statementsFrom(sql, 2)).toEqual(['ALTER TABLE a\n  ADD COLUMN b int', 'CREATE INDEX i ON a (b)']);
    expect(statementsFrom(sql, 0)).toHaveLength(3);
  });
});
