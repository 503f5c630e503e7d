/**
 * A pull request's migration that Postgres rejects keeps the error's DETAIL and HINT: the duplicated
 * key a unique index cannot take, and why a new enum value cannot be used in the migration that adds
 * it (node-pg-migrate runs each migration in one transaction). They are in the report's `failure` and
 * under the error in the terminal and markdown reports, as psql shows them.
 */
import { rm } from 'node:fs/promises';
import { renderCheckMarkdown } from '../../src/report/markdown.js';
import { renderCheckTerminal } from '../../src/report/terminal.js';
import { checkBranch, checkRepo, commitBranch } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

let t: TestProvider;
let dir: string;
beforeAll(async () => {
  t = await localTestProvider();
  dir = await checkRepo('pr-detail-hint', {
    'migrations/1700000000000_orders.sql': [
      '-- Up Migration',
      "CREATE TYPE order_status AS ENUM ('pending', 'paid');",
      "CREATE TABLE orders (id int, email text, status order_status NOT NULL DEFAULT 'pending');",
      "INSERT INTO orders VALUES (1, 'a@example.com', 'paid'), (2, 'a@example.com', 'paid');",
      '-- Down Migration',
      'DROP TABLE orders;',
      'DROP TYPE order_status;',
      '',
    ].join('\n'),
    '.github/consort.yml': 'suite:\n  command: "true"\n',
  });
  await commitBranch(dir, 'enum-value', {
    'migrations/1700000000001_refunded.js': [
      'exports.up = (pgm) => {',
      "  pgm.addTypeValue('order_status', 'refunded');",
      '  pgm.sql("UPDATE orders SET status = \'refunded\' WHERE id = 2");',
      '};',
      'exports.down = false;',
      '',
    ].join('\n'),
  });
  await commitBranch(
    dir,
    'unique-email',
    {
      'migrations/1700000000001_unique-email.sql':
        '-- Up Migration\nCREATE UNIQUE INDEX orders_email ON orders (email);\n-- Down Migration\nDROP INDEX orders_email;\n',
    },
    'main',
  );
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t.cleanup();
});

it("keeps Postgres' HINT: a new enum value used in the migration that adds it", async () => {
  const report = await checkBranch(dir, 'enum-value', 11, t.provider);
  expect(report.stages.migrations.failure).toMatchObject({
    file: 'migrations/1700000000001_refunded.js',
    line: 3,
    code: '55P04',
    hint: 'New enum values must be committed before they can be used.',
  });
  const error = [
    'ERROR 55P04: unsafe use of new value "refunded" of enum type order_status',
    'HINT: New enum values must be committed before they can be used.',
  ].join('\n');
  expect(renderCheckTerminal(report, { width: 200 })).toContain(error.replace(/^/gm, '  '));
  expect(renderCheckMarkdown(report)).toContain(`\`\`\`text\n${error}\n\`\`\``);
}, 120_000);

it("keeps Postgres' DETAIL: the key a unique index found twice", async () => {
  const report = await checkBranch(dir, 'unique-email', 12, t.provider);
  expect(report.stages.migrations.failure).toMatchObject({
    file: 'migrations/1700000000001_unique-email.sql',
    code: '23505',
    detail: 'Key (email)=(a@example.com) is duplicated.',
  });
  expect(renderCheckTerminal(report, { width: 200 })).toContain(
    '\n  DETAIL: Key (email)=(a@example.com) is duplicated.\n',
  );
}, 120_000);
