/**
 * The suite's branch (`<branch>-suite`) gets the pull request's migrations beside the PR branch
 * (run.ts, prepareSuiteBranch): its outcome is read only once the PR branch's have applied. What
 * that must not change: a failing migration (SQL or JavaScript) is reported exactly as on the PR
 * branch, once, and every temporary branch goes; a noTransaction migration (CREATE INDEX
 * CONCURRENTLY) applies on both; and where the migrations run as the admin on a
 * server every branch shares (roles are the server's, not a branch's), the suite's copy of a
 * migration must not win a race the PR branch's then loses; a run cancelled while the migrations
 * apply ends the statement running and starts no migration request after the cancel (neither the
 * suite's copy nor reversibility's steps). On the run's shared embedded PostgreSQL 18.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { CheckCancelled } from '../../src/lanes/check/cancel.js';
import { cleanupPull } from '../../src/lanes/check/cleanup.js';
import type { BranchProvider } from '../../src/ports/branch-provider.js';
import type { MigrationRunner } from '../../src/ports/migration-runner.js';
import { CheckReport } from '../../src/report/check-report.js';
import { testPorts } from '../helpers/check-ports.js';
import { checkBranch, checkRepo, commitBranch, CUSTOMERS_BASE, git, temporaryBranches } from '../helpers/check-repo.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';

const config = (role?: 'admin') =>
  [
    'migrations:',
    '  dir: migrations',
    'suite:',
    '  command: "true"',
    ...(role ? ['check:', `  migrationsRole: ${role}`] : []),
    '',
  ].join('\n');

let t: TestProvider;
let dir: string;
beforeAll(async () => {
  t = await localTestProvider();
  dir = await checkRepo('check-suite-beside', {
    'migrations/1700000000000_base.sql': CUSTOMERS_BASE,
    '.github/consort.yml': config(),
  });
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t?.cleanup();
});

/** The lane's temporary branches still present. */
const temporary = () => temporaryBranches(t.provider);

describe('a failing migration', () => {
  it.each([
    [
      'SQL',
      'migrations/1700000000001_broken.sql',
      '-- Up Migration\nCREATE TABLE ok (id bigint);\nCREATE TABEL broken (id bigint);\n-- Down Migration\nDROP TABLE ok;\n',
      { code: '42601', line: 3, file: 'migrations/1700000000001_broken.sql' },
    ],
    [
      'JavaScript',
      'migrations/1700000000001_broken.js',
      `exports.up = (pgm) => { pgm.sql('CREATE TABLE ok (id bigint)'); throw new Error('the migration gave up'); };\nexports.down = (pgm) => { pgm.sql('DROP TABLE ok'); };\n`,
      { message: expect.stringContaining('the migration gave up'), file: 'migrations/1700000000001_broken.js' },
    ],
  ])(
    '(%s) is reported once, as on the PR branch, and every temporary branch goes',
    async (kind, file, text, failure) => {
      const pr = kind === 'SQL' ? 41 : 42;
      await git(dir, 'checkout', '-q', 'main');
      await commitBranch(dir, `broken-${pr}`, { [file]: text });
      const log: string[] = [];
      const report = await checkBranch(dir, `broken-${pr}`, pr, t.provider, (l) => log.push(l));
      try {
        expect(report.conclusion).toBe('failure');
        expect(report.stages.migrations).toMatchObject({ status: 'failed', applied: [], failure });
        expect(report.stages.suite).toMatchObject({
          status: 'skipped',
          summary: 'not run: the migrations did not apply',
        });
        // One failure line, the PR branch's: nothing from the suite's copy of the same migrations.
        expect(log.filter((l) => l.includes('broken') && !l.includes(' lint: '))).toEqual([
          expect.stringMatching(new RegExp(`^  ✗ migrations: ${file.replace(/[.]/g, '\\.')} failed: `)),
        ]);
        expect(log.filter((l) => l.includes(`pr-${pr}-suite`))).toEqual([]);
        // A JS migration whose own code threw sent no SQL to lint: the summary says so (not "nothing to lint").
        if (kind === 'JavaScript')
          expect(report.stages.lint.summary).toBe(
            `not linted: ${file} (it sent no SQL: JS/TS migrations are linted on the SQL they send as they apply)`,
          );
        expect(await temporary()).toEqual([]);
        // The PR branch holds what applied before the failure: nothing of the broken migration.
        const url = await t.provider.connectionUri(`pr-${pr}`);
        expect(await query(url, "SELECT to_regclass('ok') AS ok")).toEqual([{ ok: null }]);
      } finally {
        await cleanupPull(t.provider, pr);
      }
    },
    120_000,
  );
});

it('a JS migration that fails at its second statement is linted on what it sent, and one after it is named as not linted', async () => {
  await git(dir, 'checkout', '-q', 'main');
  await commitBranch(dir, 'half-sent', {
    'migrations/1700000000001_age.js': `exports.up = (pgm) => {
  pgm.addColumn('customers', { age: { type: 'integer', notNull: true } });
  pgm.sql('ALTER TABLE no_such_table ADD COLUMN x bigint');
};
exports.down = (pgm) => { pgm.dropColumn('customers', 'age'); };
`,
    'migrations/1700000000002_later.js': `exports.up = (pgm) => { pgm.createTable('later', { id: 'id' }); };\n`,
  });
  const report = await checkBranch(dir, 'half-sent', 48, t.provider, () => undefined);
  try {
    expect(report.stages.migrations).toMatchObject({
      status: 'failed',
      failure: { file: 'migrations/1700000000001_age.js', code: '42P01' },
    });
    // Before, the failing migration's SQL was never linted and the stage said "nothing to lint".
    expect(report.stages.lint.findings).toContainEqual(
      expect.objectContaining({ rule: 'adding-required-field', file: 'migrations/1700000000001_age.js', line: 2 }),
    );
    expect(report.stages.lint.summary).toMatch(/; not linted: migrations\/1700000000002_later\.js \(it sent no SQL/);
  } finally {
    await cleanupPull(t.provider, 48);
  }
}, 120_000);

it('migrations a failure rolled back with it (one transaction, as the deploy script runs them) are linted on what they sent', async () => {
  // node-pg-migrate's CLI, which the project's script runs, applies the lot in one transaction: the
  // JS migration ran, then the typo after it failed and took it back. Before, lint said the JS one
  // "sent no SQL" and skipped it, so its ban-drop-column went unreported until the typo was fixed.
  const single = await checkRepo('check-single-tx', {
    'migrations/1700000000000_base.sql': CUSTOMERS_BASE,
    '.github/consort.yml': config(),
    'package.json': JSON.stringify({
      name: 'single-tx',
      private: true,
      scripts: { migrate: 'node-pg-migrate -m migrations' },
    }),
  });
  try {
    await commitBranch(single, 'rolled-back', {
      'migrations/1700000000001_drop_name.js':
        "exports.up = (pgm) => {\n  pgm.dropColumn('customers', 'name');\n};\nexports.down = false;\n",
      'migrations/1700000000002_typo.sql': '-- Up Migration\nALTR TABLE customers ADD COLUMN nick text;\n',
    });
    const report = await checkBranch(single, 'rolled-back', 49, t.provider);
    try {
      expect(report.stages.migrations).toMatchObject({
        status: 'failed',
        applied: [],
        failure: { file: 'migrations/1700000000002_typo.sql', code: '42601' },
      });
      expect(report.stages.lint.findings).toContainEqual(
        expect.objectContaining({ rule: 'ban-drop-column', file: 'migrations/1700000000001_drop_name.js', line: 2 }),
      );
      expect(report.stages.lint.summary).not.toContain('not linted');
    } finally {
      await cleanupPull(t.provider, 49);
    }
  } finally {
    await rm(single, { recursive: true, force: true });
  }
});

describe('a noTransaction migration (CREATE INDEX CONCURRENTLY)', () => {
  it("applies on the PR branch and, beside it, on the suite's branch, which the suite is given", async () => {
    await git(dir, 'checkout', '-q', 'main');
    await commitBranch(dir, 'concurrently', {
      'migrations/1700000000001_index.js': `exports.up = (pgm) => {
  pgm.noTransaction();
  pgm.sql('CREATE INDEX CONCURRENTLY customers_name_idx ON customers (name)');
};
exports.down = (pgm) => {
  pgm.noTransaction();
  pgm.sql('DROP INDEX CONCURRENTLY customers_name_idx');
};
`,
      '.github/consort.yml': config().replace(
        'command: "true"',
        `command: psql "$DATABASE_URL" -Atc "SELECT current_database() || ' ' || count(*) FROM pg_indexes WHERE indexname = 'customers_name_idx'" > suite-probe.txt`,
      ),
    });
    // The suite's branch is a copy of the baseline with the migration applied there (not the fallback, a fork of pr-47).
    const parents: Record<string, string | undefined> = {};
    const tracing: BranchProvider = Object.create(t.provider, {
      create: {
        value: async (o: Parameters<BranchProvider['create']>[0]) => {
          parents[o.name] = o.parent;
          return t.provider.create(o);
        },
      },
    });
    const report = await checkBranch(dir, 'concurrently', 47, tracing, () => undefined, { PATH: process.env.PATH! });
    try {
      expect(report.stages.migrations).toMatchObject({ status: 'passed' });
      expect(report.stages.reversibility.migrations).toEqual([
        expect.objectContaining({ name: '1700000000001_index', verdict: 'reversible' }),
      ]);
      expect(report.stages.suite.status).toBe('passed');
      const [database, indexes] = (await readFile(path.join(dir, 'suite-probe.txt'), 'utf8')).trim().split(' ');
      expect([database, indexes]).toEqual([expect.stringMatching(/pr.47.suite$/), '1']);
      expect(parents['pr-47-suite']).toBe(report.stages.baseline.name);
      expect(report.conclusion).toBe('success');
      expect(await temporary()).toEqual([]);
    } finally {
      await rm(path.join(dir, 'suite-probe.txt'), { force: true });
      await cleanupPull(t.provider, 47);
    }
  }, 120_000);
});

// Before the describe that puts check.migrationsRole: admin on main: these run as the branch's role
// (as the admin, reversibility's copy waits for the PR branch's migrations instead).
describe('a run cancelled while the migrations apply', () => {
  /** A migration that takes a while: the cancel lands while the PR branch applies it. */
  const SLOW = {
    'migrations/1700000000001_slow.sql':
      '-- Up Migration\nSELECT pg_sleep(5);\nCREATE TABLE slow (id int);\n-- Down Migration\nDROP TABLE slow;\n',
  };
  /** The same in JavaScript: applied in the migrations' child process. */
  const SLOW_JS = {
    'migrations/1700000000001_slow.js':
      "exports.up = (pgm) => { pgm.sql('SELECT pg_sleep(5)'); pgm.createTable('slow', { id: 'int' }); };\nexports.down = (pgm) => { pgm.dropTable('slow'); };\n",
  };

  it.each([
    ['SQL, reversibility on the PR branch (every migration has a down)', 45, SLOW],
    [
      'SQL, reversibility on a copy of the baseline (one has no down)',
      46,
      { ...SLOW, 'migrations/1700000000002_no_down.sql': '-- Up Migration\nCREATE TABLE no_down (id int);\n' },
    ],
    ['JavaScript, reversibility on the PR branch', 48, SLOW_JS],
  ])(
    '(%s) ends the statement running, starts no migration request after the cancel, concludes cancelled, leaves no temporary branch',
    async (_where, pr, files: Record<string, string>) => {
      await git(dir, 'checkout', '-q', 'main');
      await commitBranch(dir, `slow-${pr}`, files);
      const controller = new AbortController();
      // Every migration request of the run's session, and whether the run was cancelled when it was made.
      const requests: { database: string; afterCancel: boolean }[] = [];
      const migrations: MigrationRunner = {
        ...testPorts.migrations,
        open: (options) => {
          const session = testPorts.migrations.open(options);
          return {
            ...session,
            apply: (o, how) => {
              const database = new URL(o.databaseUrl).pathname.slice(1);
              requests.push({ database, afterCancel: controller.signal.aborted });
              // The PR branch's own request (not -suite, not -rev): cancelled while it sleeps.
              if (new RegExp(`pr.${pr}$`).test(database) && o.direction === 'up')
                setTimeout(() => controller.abort(new CheckCancelled('SIGTERM')), 1000);
              return session.apply(o, how);
            },
          };
        },
      };
      const report = CheckReport.parse(
        await checkBranch(
          dir,
          `slow-${pr}`,
          pr,
          t.provider,
          () => undefined,
          {},
          {
            migrations,
            signal: controller.signal,
          },
        ),
      );
      try {
        expect(report.conclusion).toBe('cancelled');
        expect(report.cancelled).toEqual({ reason: 'SIGTERM' });
        // The sleeping statement was ended by the cancel (it did not run on to its end and commit).
        expect(report.stages.migrations).toMatchObject({ status: 'skipped', summary: 'cancelled' });
        const url = await t.provider.connectionUri(`pr-${pr}`);
        expect(await query(url, "SELECT to_regclass('slow') AS slow")).toEqual([{ slow: null }]);
        expect(requests.some((r) => new RegExp(`pr.${pr}$`).test(r.database))).toBe(true);
        expect(requests.filter((r) => r.afterCancel)).toEqual([]);
        expect(await temporary()).toEqual([]);
      } finally {
        await cleanupPull(t.provider, pr);
      }
    },
    120_000,
  );
});

describe('migrations that run as the admin (check.migrationsRole: admin)', () => {
  const role = `beside_${randomBytes(4).toString('hex')}`;
  afterAll(() => query(t.adminUrl, `DROP ROLE IF EXISTS ${role}`));

  it("make a server-wide role idempotently: the suite's copy does not make the PR branch's fail", async () => {
    await git(dir, 'checkout', '-q', 'main');
    await commitBranch(dir, 'opt-out', { '.github/consort.yml': config('admin') });
    await git(dir, 'checkout', '-q', 'main');
    await git(dir, 'merge', '-q', '--ff-only', 'opt-out');
    // The common guard for a role the schema grants to. Roles are the server's, so on the local and
    // postgres providers every branch's copy of this migration makes (or finds) the same role.
    await commitBranch(dir, 'reporting-role', {
      'migrations/1700000000001_reporting.sql': `-- Up Migration
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role}') THEN CREATE ROLE ${role} NOLOGIN; END IF;
END $$;
SELECT pg_sleep(1);
CREATE TABLE reports (id int);
GRANT SELECT ON reports TO ${role};
-- Down Migration
DROP TABLE reports;
`,
    });
    const report = await checkBranch(dir, 'reporting-role', 43, t.provider);
    try {
      expect(report.stages.migrations).toMatchObject({ status: 'passed', ranAs: 'admin' });
      expect(report.stages.suite.status).toBe('passed');
      expect(report.conclusion).toBe('success');
      expect(await temporary()).toEqual([]);
    } finally {
      await cleanupPull(t.provider, 43);
    }
  }, 120_000);

  it("beside a migration with no down (reversibility on a copy of the baseline): the copy's ups do not make the PR branch's fail", async () => {
    const other = `${role}_b`;
    // The second has no `-- Down Migration`: reversibility works on a copy of the baseline, started
    // beside the migrations, where it applies the first (and takes it down) before the second.
    await git(dir, 'checkout', '-q', 'main');
    await commitBranch(dir, 'reporting-role-no-down', {
      'migrations/1700000000001_reporting.sql': `-- Up Migration
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${other}') THEN CREATE ROLE ${other} NOLOGIN; END IF;
END $$;
SELECT pg_sleep(1);
CREATE TABLE reports (id int);
GRANT SELECT ON reports TO ${other};
-- Down Migration
DROP TABLE reports;
`,
      'migrations/1700000000002_audit.sql': '-- Up Migration\nCREATE TABLE audit (id int);\n',
    });
    const report = await checkBranch(dir, 'reporting-role-no-down', 44, t.provider);
    try {
      expect([report.stages.migrations.status, report.stages.migrations.summary]).toEqual([
        'passed',
        expect.stringContaining('2 migrations applied to pr-44 as the admin'),
      ]);
      expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
        ['1700000000001_reporting', 'reversible'],
        ['1700000000002_audit', 'missing-down'],
      ]);
      expect(await temporary()).toEqual([]);
    } finally {
      await cleanupPull(t.provider, 44);
      await query(t.adminUrl, `DROP ROLE IF EXISTS ${other}`);
    }
  }, 120_000);
});
