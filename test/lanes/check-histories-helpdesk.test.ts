/**
 * The PR lane on helpdesk-monorepo (test/fixtures/histories): an npm-workspaces monorepo whose
 * migrations live in packages/db and run there on the package's node-pg-migrate 7.9.1 (hoisted to
 * the root's node_modules) with a migrations table of their own in a schema of their own
 * (`--migrations-table schema_migrations --schema helpdesk --create-schema`, which the configuration
 * repeats): `.sql` migrations with `-- Up Migration` / `-- Down Migration` markers beside CommonJS
 * ones, uuid-ossp and citext, an identity column, comments, a trigger whose function createTrigger
 * makes, `ALTER TYPE … ADD VALUE … BEFORE` in SQL, a data migration numbering rows it reads with
 * `pgm.db.select`, a sequence owned by a column, a materialized view refreshed where it is made,
 * forced row-level security. A second folder, packages/db/data-migrations, holds data migrations
 * that their own script (`migrate:data`) runs. Verdicts worked out by hand from the migrations.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkAgainstMain, isolatedGit as git } from '../helpers/check-repo.js';
import { history } from '../helpers/history-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

let t: TestProvider;
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => t?.cleanup());

const DATA_MIGRATION = `exports.up = (pgm) => {
  pgm.sql(\`UPDATE agents SET display_name = initcap(display_name)\`);
};

exports.down = false;
`;

const ESCALATION = {
  'packages/db/migrations/1702000000006_ticket-escalated.js': `exports.up = (pgm) => {
  pgm.addTypeValue('ticket_status', 'escalated', { ifNotExists: true, after: 'pending' });
};

// PostgreSQL cannot drop an enum value: escalated stays.
exports.down = () => {};
`,
  'packages/db/migrations/1702000000007_escalate-stale.sql': `-- Up Migration
UPDATE tickets SET status = 'escalated' WHERE status = 'pending' AND created_at < now() - interval '7 days';

-- Down Migration
UPDATE tickets SET status = 'pending' WHERE status = 'escalated';
`,
};

describe('helpdesk-monorepo: migrations in packages/db, with a schema and a migrations table of their own', () => {
  it("applies the package's history, judges each new migration, and names the data migration it did not check", async () => {
    const h = await history('helpdesk-monorepo', 3, { 'node-pg-migrate': 'node-pg-migrate-7' }, {}, undefined, {
      migrationsDir: 'packages/db/migrations',
      prFiles: { 'packages/db/data-migrations/1702000000101_display-names.js': DATA_MIGRATION },
    });
    try {
      const report = await checkAgainstMain(h.dir, 501, t.provider);
      expect(report.error).toBeUndefined();
      expect(report.stages.baseline).toMatchObject({
        status: 'passed',
        applied: ['1702000000000_extensions', '1702000000001_agents', '1702000000002_tickets'],
      });
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [
          { name: '1702000000003_ticket-on-hold', file: 'packages/db/migrations/1702000000003_ticket-on-hold.sql' },
          { name: '1702000000004_ticket-numbers' },
          { name: '1702000000005_agent-queues' },
        ],
        nodePgMigrate: { version: '7.9.1', source: 'project' },
      });
      // The deploy's settings are the configuration's: the plan has nothing to say of them. The data
      // migration is run by migrate:data on its own folder, which the check never applies: a
      // warning names it, the script and the folder the check did read (it passed unsaid before).
      expect(report.stages.plan.problems).toEqual([]);
      expect(report.stages.plan.warnings).toEqual([
        {
          kind: 'unchecked-migrations-dir',
          file: 'packages/db/data-migrations/1702000000101_display-names.js',
          name: '1702000000101_display-names',
          dir: 'packages/db/data-migrations',
          migrationsDir: 'packages/db/migrations',
          manifest: 'packages/db/package.json',
          script: 'migrate:data',
          change: 'added',
        },
      ]);
      expect(report.stages.plan.summary).toBe(
        '3 new migrations, 3 unchanged; 1 migration in another folder not checked',
      );

      // By hand: PostgreSQL cannot drop an enum label, so the SQL down (which only takes the
      // comment back) leaves on_hold — not restored, said with the label. The numbering's down
      // drops the column, and with it the sequence it owns; the view and the policy reverse.
      expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
        ['1702000000003_ticket-on-hold', 'not-restored'],
        ['1702000000004_ticket-numbers', 'reversible'],
        ['1702000000005_agent-queues', 'reversible'],
      ]);
      expect(report.stages.reversibility.migrations[0]!.detail).toContain(
        '(open, pending, closed) → (open, pending, on_hold, closed)',
      );

      // Blocking, by hand: NOT NULL set on base's populated tickets, and a UNIQUE constraint built
      // under an ACCESS EXCLUSIVE lock on it. Not blocking: the index on the view made in the same
      // migration (require-concurrent-index-creation stays a warning).
      const blocking = report.stages.lint.findings.filter((f) => f.blocking).map((f) => [f.line, f.rule]);
      expect(blocking).toEqual([
        [15, 'adding-not-nullable-field'],
        [19, 'disallowed-unique-constraint'],
      ]);

      // Everything in the package's schema, the owned sequence's default as the column reads it.
      const diff = report.stages.schemaDiff.text;
      for (const line of [
        "~ enum helpdesk.ticket_status: add label 'on_hold'",
        "+ column helpdesk.tickets.number integer NOT NULL DEFAULT nextval('helpdesk.ticket_number_seq'::regclass)",
        '+ materialized view helpdesk.agent_queues',
        '~ table helpdesk.tickets: force row security no → yes',
        "+ comment on table column helpdesk.tickets.number: 'What customers quote in their replies'",
      ])
        expect(diff).toContain(line);
      expect(diff).not.toContain('schema_migrations');
    } finally {
      await h.dispose();
    }
  });

  // node-pg-migrate's CLI applies every pending migration in one transaction unless told
  // --no-single-transaction: an enum value one migration of the deploy adds cannot be used by the
  // next (PostgreSQL: unsafe use of new value) — the deploy fails where a transaction each passes.
  it('a new enum value used by the next migration fails as the deploy, in one transaction, fails; with --no-single-transaction it applies', async () => {
    const h = await history('helpdesk-monorepo', 6, { 'node-pg-migrate': 'node-pg-migrate-7' }, {}, undefined, {
      migrationsDir: 'packages/db/migrations',
      prFiles: ESCALATION,
    });
    try {
      const report = await checkAgainstMain(h.dir, 502, t.provider);
      expect(report.stages.migrations.status).toBe('failed');
      expect(report.stages.migrations.failure).toMatchObject({
        name: '1702000000007_escalate-stale',
        code: '55P04',
        message: 'unsafe use of new value "escalated" of enum type ticket_status',
      });
      expect(report.stages.migrations.failure!.note).toBe(
        'packages/db/package.json\'s script "migrate" runs node-pg-migrate\'s CLI, which applies every pending migration in one transaction (--single-transaction, its default), so a value added to an enum is not committed until the whole deploy is: add it in a migration of its own whose up calls pgm.noTransaction() (node-pg-migrate commits before and after such a migration), or deploy with --no-single-transaction',
      );

      // The same pull request where the deploy commits each migration: both apply.
      const manifest = path.join(h.dir, 'packages/db/package.json');
      const scripts = (await readFile(manifest, 'utf8')).replace(
        '--create-schema"',
        '--create-schema --no-single-transaction"',
      );
      await writeFile(manifest, scripts);
      await git(h.dir, 'commit', '-qam', 'a transaction each');
      const each = await checkAgainstMain(h.dir, 502, t.provider);
      expect(each.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [{ name: '1702000000006_ticket-escalated' }, { name: '1702000000007_escalate-stale' }],
      });
      // By hand: the label stays after down (PostgreSQL cannot drop it), the backfill reverses.
      expect(each.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
        ['1702000000006_ticket-escalated', 'not-restored'],
        ['1702000000007_escalate-stale', 'reversible'],
      ]);
    } finally {
      await h.dispose();
    }
  });
});
