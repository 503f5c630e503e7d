/**
 * The PR lane on kanban-sql (test/fixtures/histories): .sql migrations written as psql scripts on
 * the bundled node-pg-migrate 9, and a CommonJS one that reads its settings from the project's
 * `.env`. Base holds the boards (a body between BEGIN; and COMMIT;) and a status enum; the pull
 * request adds a label to the enum and uses it in the same file (`COMMIT; BEGIN;` between), and
 * lanes whose defaults come from `KANBAN_DEFAULT_LANE` and `KANBAN_WIP_LIMIT`, set in `.env`, which
 * node-pg-migrate's CLI loads through dotenv (the project depends on it). Verdicts by hand.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { withClient } from '../../src/db/sql.js';
import { checkAgainstMain, isolatedGit as git } from '../helpers/check-repo.js';
import { HISTORIES, history } from '../helpers/history-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

let t: TestProvider;
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => t?.cleanup());

/** The project's .env, committed (Consort's own .gitignore keeps a fixture's .env out of this repository). */
const DOTENV = [
  "# Local development settings (node-pg-migrate's CLI loads this file through dotenv)",
  'DATABASE_URL=postgres://kanban:kanban@127.0.0.1:1/kanban_dev',
  'export KANBAN_DEFAULT_LANE="Inbox" # the lane new boards start with',
  'KANBAN_WIP_LIMIT=5',
  '',
].join('\n');

describe('kanban-sql: psql-style .sql migrations and a .env on the bundled node-pg-migrate 9', () => {
  it("applies the pull request's migrations with the .env node-pg-migrate's CLI would load, and the branch's URL", async () => {
    const h = await history('kanban-sql', 2, {}, { '.env': DOTENV });
    try {
      const report = await checkAgainstMain(h.dir, 601, t.provider);
      expect(report.error).toBeUndefined();
      expect(report.stages.baseline).toMatchObject({
        status: 'passed',
        applied: ['1706000000000_boards', '1706000000001_card-status'],
      });
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [{ name: '1706000000002_card-blocked' }, { name: '1706000000003_board-lanes' }],
      });
      // The lanes' defaults are the .env's.
      const diff = report.stages.schemaDiff.text;
      expect(diff).toContain("    name text NOT NULL DEFAULT 'Inbox'::text\n    wip_limit integer NOT NULL DEFAULT 5");
      // By hand: the enum label stays after down (PostgreSQL cannot drop one), the lanes reverse.
      expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
        ['1706000000002_card-blocked', 'not-restored'],
        ['1706000000003_board-lanes', 'reversible'],
      ]);
      // Lint: the COMMIT that ends node-pg-migrate's transaction early is said; the BEGIN after it,
      // which node-pg-migrate's own COMMIT ends, is not called uncommitted.
      const rules = report.stages.lint.findings.map((f) => [
        f.file.replace('migrations/170600000000', ''),
        f.line,
        f.rule,
      ]);
      expect(rules).toContainEqual(['2_card-blocked.sql', 4, 'transaction-nesting']);
      expect(rules.map((r) => r[2])).not.toContain('ban-uncommitted-transaction');
    } finally {
      await h.dispose();
    }
  });

  it.each([
    ['the bundled 9.0.0', {}, '^9.0.0', '9.0.0'],
    ["the project's 7.9.1", { 'node-pg-migrate': 'node-pg-migrate-7' }, '7.9.1', '7.9.1'],
  ])(
    "expands the .env's ${VAR} references where the project has dotenv-expand, on %s, and reports none of its values",
    async (_on, links, range, version) => {
      // node-pg-migrate's CLI (7.9.1's tryRequire, 9's tryImport) runs dotenv-expand's expand() after dotenv where it resolves.
      const manifest = JSON.parse(await readFile(path.join(HISTORIES, 'kanban-sql/package.json'), 'utf8')) as {
        devDependencies: Record<string, string>;
      };
      manifest.devDependencies['dotenv-expand'] = '^12.0.1';
      manifest.devDependencies['node-pg-migrate'] = range;
      const env = [
        'KANBAN_TEAM=Ops',
        'KANBAN_DEFAULT_LANE="${KANBAN_TEAM} inbox"',
        'KANBAN_WIP_LIMIT=${KANBAN_WIP:-7}',
        'KANBAN_API_TOKEN=tok-a1b2c3-never-reported',
        '',
      ].join('\n');
      const h = await history('kanban-sql', 2, links, { '.env': env, 'package.json': JSON.stringify(manifest) });
      try {
        const report = await checkAgainstMain(h.dir, 603, t.provider);
        expect(report.error).toBeUndefined();
        expect(report.stages.migrations).toMatchObject({ status: 'passed', nodePgMigrate: { version } });
        expect(report.stages.schemaDiff.text).toContain(
          "    name text NOT NULL DEFAULT 'Ops inbox'::text\n    wip_limit integer NOT NULL DEFAULT 7",
        );
        expect(JSON.stringify(report)).not.toContain('tok-a1b2c3');
      } finally {
        await h.dispose();
      }
    },
  );

  it('loads the file --envPath names in the migrate script of a nested package that is not a workspace', async () => {
    // The repository's root has a package.json of its own and no workspaces; db/ runs its migrations.
    const h = await history(
      'kanban-sql',
      2,
      {},
      {
        'package.json': JSON.stringify({ name: 'kanban-app', private: true }),
        '.github/consort.yml': 'migrations:\n  dir: db/migrations\nsuite:\n  command: "true"\n',
        'db/package.json': JSON.stringify({
          name: 'kanban-db',
          private: true,
          scripts: { migrate: 'node-pg-migrate up --envPath config/migrate.env' },
          devDependencies: { dotenv: '^16.4.5', 'node-pg-migrate': '^9.0.0' },
        }),
        'db/.env': 'KANBAN_DEFAULT_LANE=Unused\nKANBAN_WIP_LIMIT=1\n',
        'db/config/migrate.env': 'KANBAN_DEFAULT_LANE=Backlog\nKANBAN_WIP_LIMIT=3\n',
      },
      { under: 'db', rootLinks: {} },
    );
    try {
      const report = await checkAgainstMain(h.dir, 604, t.provider);
      expect(report.error).toBeUndefined();
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [{ name: '1706000000002_card-blocked' }, { name: '1706000000003_board-lanes' }],
      });
      expect(report.stages.schemaDiff.text).toContain(
        "    name text NOT NULL DEFAULT 'Backlog'::text\n    wip_limit integer NOT NULL DEFAULT 3",
      );
    } finally {
      await h.dispose();
    }
  });

  it("builds a new baseline when base's .env changes, never naming a value of it", async () => {
    // Base applies the lanes migration, which reads its defaults from .env: a baseline built with
    // the old .env would fork the pull request's branch from a schema the new one does not give.
    const h = await history('kanban-sql', 4, {}, { '.env': DOTENV }, undefined, {
      prFiles: {
        'migrations/1706000000004_notes.sql':
          '-- Up Migration\nCREATE TABLE notes (id serial PRIMARY KEY);\n\n-- Down Migration\nDROP TABLE notes;\n',
      },
    });
    const wipDefault = async (baseline: string) =>
      withClient(await t.provider.connectionUri(baseline), async (db) => {
        const { rows } = await db.query<{ d: string }>(
          "SELECT column_default AS d FROM information_schema.columns WHERE table_name = 'lanes' AND column_name = 'wip_limit'",
        );
        return rows[0]?.d;
      });
    try {
      const first = await checkAgainstMain(h.dir, 605, t.provider);
      expect(first.stages.baseline).toMatchObject({ status: 'passed', reused: false });
      const built = first.stages.baseline.name!;
      expect(await wipDefault(built)).toBe('5');
      // Nothing changed: the same baseline.
      const again = await checkAgainstMain(h.dir, 605, t.provider);
      expect(again.stages.baseline).toMatchObject({ status: 'passed', reused: true, name: built });

      await git(h.dir, 'checkout', '-q', 'main');
      await writeFile(path.join(h.dir, '.env'), DOTENV.replace('KANBAN_WIP_LIMIT=5', 'KANBAN_WIP_LIMIT=9'));
      await git(h.dir, 'commit', '-qam', 'a higher limit');
      await git(h.dir, 'checkout', '-q', 'feature');

      const after = await checkAgainstMain(h.dir, 605, t.provider);
      expect(after.error).toBeUndefined();
      expect(after.stages.baseline).toMatchObject({ status: 'passed', reused: false });
      expect(after.stages.baseline.name).not.toBe(built);
      expect(await wipDefault(after.stages.baseline.name!)).toBe('9');
      expect(after.stages.migrations).toMatchObject({ status: 'passed', applied: [{ name: '1706000000004_notes' }] });
      for (const report of [first, again, after]) expect(JSON.stringify(report)).not.toContain('Inbox');
    } finally {
      await h.dispose();
    }
  });

  it('a COMMIT before a concurrent index: fails as the deploy would, says why, and lists what that COMMIT kept', async () => {
    // The psql way out of a transaction does not work under node-pg-migrate: the file is one query,
    // and PostgreSQL runs what follows its COMMIT as one implicit transaction. The deploy applies
    // the pull request's migrations in one transaction (node-pg-migrate's CLI default), so that
    // COMMIT also committed the two before it, recorded: they stay on the branch.
    const h = await history('kanban-sql', 2, {}, { '.env': DOTENV }, undefined, {
      prFiles: {
        'migrations/1706000000004_cards-board-index.sql':
          '-- Up Migration\nCOMMIT;\nCREATE INDEX CONCURRENTLY IF NOT EXISTS cards_board_id_idx ON cards (board_id);\n\n-- Down Migration\nDROP INDEX IF EXISTS cards_board_id_idx;\n',
      },
    });
    try {
      const report = await checkAgainstMain(h.dir, 602, t.provider);
      expect(report.stages.migrations).toMatchObject({
        status: 'failed',
        applied: [{ name: '1706000000002_card-blocked' }, { name: '1706000000003_board-lanes' }],
        failure: { name: '1706000000004_cards-board-index', code: '25001' },
      });
      expect(report.stages.migrations.failure?.note).toContain(
        'PostgreSQL runs the statements after that COMMIT as one implicit transaction',
      );
      expect(report.conclusion).toBe('failure');
    } finally {
      await h.dispose();
    }
  });
});
