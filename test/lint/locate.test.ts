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

describe('locateStatements: up and down, ties, templates, kinds', () => {
  // down before up, and the same kind of call in both.
  const CJS = `exports.down = (pgm) => {
  pgm.alterColumn('invoices', 'status', { default: null });
  pgm.dropConstraint('invoices', 'invoices_total_positive');
};

exports.up = (pgm) => {
  pgm.alterColumn('invoices', 'status', { default: null });
  pgm.alterColumn('invoices', 'status', { type: 'invoice_status', using: 'status::invoice_status' });
  pgm.alterColumn('invoices', 'status', { default: 'draft' });
  pgm.addConstraint('invoices', 'invoices_total_positive', { check: 'total >= 0' });
};
`;

  it('takes up statements from up and down statements from down, in source order on a tie', () => {
    expect(
      locateStatements(CJS, [
        'ALTER TABLE "invoices"\n  ALTER "status" DROP DEFAULT;',
        'ALTER TABLE "invoices"\n  ALTER "status" SET DATA TYPE invoice_status USING status::invoice_status;',
        'ALTER TABLE "invoices"\n  ALTER "status" SET DEFAULT $pga$draft$pga$;',
        'ALTER TABLE "invoices"\n  ADD CONSTRAINT "invoices_total_positive" CHECK (total >= 0);',
      ]).map((l) => l.line),
    ).toEqual([7, 8, 9, 10]);
    expect(
      locateStatements(
        CJS,
        [
          'ALTER TABLE "invoices"\n  ALTER "status" DROP DEFAULT;',
          'ALTER TABLE "invoices" DROP CONSTRAINT "invoices_total_positive";',
        ],
        'down',
      ).map((l) => l.line),
    ).toEqual([2, 3]);
  });

  it('matches pgm.sql template literals with their interpolations as unknown parts', () => {
    const source = `import { MigrationBuilder } from 'node-pg-migrate';
import { Collection } from '../src/Collection';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.addColumn(Collection.tableName, { forum_link: { type: 'TEXT' } });
  pgm.sql(\`UPDATE \${Collection.tableName} SET forum_link = 'https://forum/' || id WHERE is_published\`);
  pgm.sql('ALTER TABLE ' + Collection.tableName + ' ALTER COLUMN price TYPE NUMERIC(78) USING price::numeric(78)');
}
`;
    expect(
      locateStatements(source, [
        'ALTER TABLE "collections"\n  ADD "forum_link" TEXT;',
        "UPDATE collections SET forum_link = 'https://forum/' || id WHERE is_published;",
        'ALTER TABLE collections ALTER COLUMN price TYPE NUMERIC(78) USING price::numeric(78);',
      ]),
    ).toEqual([
      { line: 5, exact: true },
      { line: 6, exact: true },
      { line: 7, exact: true },
    ]);
  });

  it('knows the statements of schemas, sequences, policies, constraints, type values and comments', () => {
    const source = `exports.up = (pgm) => {
  pgm.createSchema('tenancy');
  pgm.createSequence('tenant_seq', { start: 1000 });
  pgm.createPolicy('projects', 'tenant_isolation', { using: 'true' });
  pgm.renameConstraint('orders', 'orders_customer_fk', 'orders_customer_id_fkey');
  pgm.renameTypeValue('order_status', 'paid', 'settled');
  pgm.alterColumn('orders', 'note', { comment: 'Shown to the courier' });
  pgm.dropConstraint('orders', 'orders_note_check');
};
`;
    expect(
      locateStatements(source, [
        'CREATE SCHEMA "tenancy";',
        'CREATE SEQUENCE "tenant_seq"\n  START WITH 1000;',
        'CREATE POLICY "tenant_isolation" ON "projects" FOR ALL TO PUBLIC USING (true);',
        'ALTER TABLE "orders" RENAME CONSTRAINT "orders_customer_fk" TO "orders_customer_id_fkey";',
        'ALTER TYPE "order_status" RENAME VALUE $pga$paid$pga$ TO $pga$settled$pga$;',
        'COMMENT ON COLUMN "orders"."note" IS $pga$Shown to the courier$pga$;',
        'ALTER TABLE "orders" DROP CONSTRAINT "orders_note_check";',
      ]).map((l) => l.line),
    ).toEqual([2, 3, 4, 5, 6, 7, 8]);
  });

  it('reads a call to its closing parenthesis, past a pgm.func inside it', () => {
    const source = `exports.up = (pgm) => {
  pgm.createTable('users', { id: 'id', email: 'text' });
  pgm.createTable('sessions', {
    id: { type: 'uuid', primaryKey: true, default: pgm.func('gen_random_uuid()') },
    user_id: { type: 'integer', references: 'users' },
  });
};
`;
    expect(
      locateStatements(source, [
        'CREATE TABLE "users" (\n  "id" serial PRIMARY KEY,\n  "email" text\n);',
        'CREATE TABLE "sessions" (\n  "id" uuid DEFAULT gen_random_uuid() PRIMARY KEY,\n  "user_id" integer REFERENCES "users"\n);',
      ]).map((l) => l.line),
    ).toEqual([2, 3]);
  });

  it('without a down, finds the down node-pg-migrate infers on the up call it reverses', () => {
    const source = `exports.up = (pgm) => {
  pgm.createTable('tags', { id: 'id' });
  pgm.createIndex('product_tags', 'tag_id');
};
`;
    expect(locateStatements(source, ['DROP INDEX "product_tags_tag_id_index";', 'DROP TABLE "tags";'], 'down')).toEqual(
      [
        { line: 3, exact: true },
        { line: 2, exact: true },
      ],
    );
  });
});

describe('locateStatements: a builder not named pgm', () => {
  it("finds the calls on up's and down's own parameter, whatever it is called", () => {
    const source = `exports.up = async (db) => {
  db.createTable('payments', { id: 'id', amount: { type: 'numeric', notNull: true } });
  db.createIndex('payments', 'amount');
};

exports.down = function (migration) {
  migration.dropIndex('payments', 'amount');
  migration.dropTable('payments');
};
`;
    expect(
      locateStatements(source, [
        'CREATE TABLE "payments" (\n  "id" serial PRIMARY KEY,\n  "amount" numeric NOT NULL\n);',
        'CREATE INDEX "payments_amount_index" ON "payments" ("amount");',
      ]),
    ).toEqual([
      { line: 2, exact: true },
      { line: 3, exact: true },
    ]);
    expect(locateStatements(source, ['DROP INDEX "payments_amount_index";', 'DROP TABLE "payments";'], 'down')).toEqual(
      [
        { line: 7, exact: true },
        { line: 8, exact: true },
      ],
    );
  });

  it("finds a helper's calls on a parameter typed MigrationBuilder", () => {
    const source = `import type { MigrationBuilder } from 'node-pg-migrate';

function timestamps(b: MigrationBuilder, table: string): void {
  b.addColumns(table, { created_at: { type: 'timestamptz', default: b.func('now()') } });
}

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.createTable('refunds', { id: 'id' });
  timestamps(pgm, 'refunds');
}
`;
    expect(
      locateStatements(source, [
        'CREATE TABLE "refunds" (\n  "id" serial PRIMARY KEY\n);',
        'ALTER TABLE "refunds"\n  ADD "created_at" timestamptz DEFAULT now();',
      ]),
    ).toEqual([
      { line: 8, exact: true },
      { line: 4, exact: true },
    ]);
  });

  it('puts statements an imported helper sent on the call that handed it the builder, quoted', () => {
    // A project's own module (`lib/audit.js`) adds columns and indexes the same way on every table:
    // its calls are not in this file, the call that gave it `pgm` is.
    const source = `import { addAudit } from '../lib/audit.js';
import { isolateTenants } from '../lib/rls.js';

export const up = (pgm) => {
  pgm.createTable('tasks', { id: 'id' });
  isolateTenants(pgm, 'tasks');
  addAudit(pgm, { schema: 'app', name: 'projects' });
};

export const down = (pgm) => {
  pgm.dropTable('tasks');
};
`;
    expect(
      locateStatements(source, [
        'CREATE TABLE "tasks" (\n  "id" serial PRIMARY KEY\n);',
        'ALTER TABLE "tasks" ENABLE ROW LEVEL SECURITY;',
        'CREATE POLICY "tenant_isolation" ON "tasks" FOR ALL USING (true);',
        'ALTER TABLE "app"."projects"\n  ADD "updated_at" timestamptz;',
        'CREATE INDEX "projects_updated_at_index" ON "app"."projects" ("updated_at");',
      ]),
    ).toEqual([
      { line: 5, exact: true },
      { line: 6, exact: false },
      { line: 6, exact: false },
      { line: 7, exact: false },
      { line: 7, exact: false },
    ]);
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
