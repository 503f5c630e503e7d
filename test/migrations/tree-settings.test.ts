/**
 * A tree's TypeScript migrations load as a deploy from a checkout of that tree loads them: tsx reads
 * the tree's tsconfig.json (its `paths` aliases), and the migrations run in their package's folder
 * there — whatever folder Consort itself was started in. Until 2026-12-05 the migration process
 * worked in Consort's folder (in the PR lane the pull request's checkout, in the TDD lane the work
 * tree), so tsx read the tsconfig found from there: a base migration's alias loaded the pull
 * request's module into the baseline, run as the admin (here: the decoy folder's). The project's
 * tsconfig-paths, registered where its deploy script registers it, reads the tree's tsconfig the
 * same way, and is undone before a session moves to another tree.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import { bundledEngine, type MigrationEngine } from '../../src/migrations/engine.js';
import { applyMigrations, openMigrationRunner, type ApplyResult } from '../../src/migrations/runner.js';
import { treeSettings } from '../../src/migrations/tree-settings.js';
import { REPO_ROOT, tsxEngine7 } from '../helpers/engines.js';
import type { MigrationSession } from '../../src/ports/migration-runner.js';
import { SYSTEM_PG_URL } from '../helpers/servers.js';

const repo = REPO_ROOT;
const engine7 = tsxEngine7;

const ALIASES = JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { 'lib/*': ['src/*'] } } });
/** A migration creating the table its aliased module names. */
const NAMED =
  "import { NAME } from 'lib/names';\nexport const up = (pgm: any) => { pgm.createTable(NAME, { id: 'id' }); };\nexport const down = false;\n";

async function files(root: string, entries: Record<string, string>): Promise<string> {
  for (const [file, text] of Object.entries(entries)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  }
  return root;
}

let work: string;
let decoy: string;
let started: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'consort-tree-'));
  // Where Consort was started: a checkout whose tsconfig maps the same alias to a module of its own.
  decoy = await files(path.join(work, 'started-here'), {
    'tsconfig.json': ALIASES,
    'src/names.ts': "export const NAME = 'from_where_consort_started';\n",
    'names.txt': 'from_where_consort_started',
  });
  started = process.cwd();
  process.chdir(decoy);
});
afterAll(async () => {
  process.chdir(started);
  await rm(work, { recursive: true, force: true });
});

async function tablesAfter(
  apply: (url: string) => Promise<ApplyResult>,
): Promise<{ r: ApplyResult; tables: string[] }> {
  const db = `tree_${randomBytes(6).toString('hex')}`;
  await withClient(SYSTEM_PG_URL, (a) => a.query(`CREATE DATABASE ${quoteIdent(db)} TEMPLATE template0`));
  try {
    const url = withDatabase(SYSTEM_PG_URL, db);
    const r = await apply(url);
    const tables = await withClient(url, async (c) =>
      (
        await c.query<{ t: string }>(
          "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'pgmigrations' ORDER BY 1",
        )
      ).rows.map((x) => x.t),
    );
    return { r, tables };
  } finally {
    await withClient(SYSTEM_PG_URL, (a) => a.query(`DROP DATABASE IF EXISTS ${quoteIdent(db)} WITH (FORCE)`));
  }
}

const up = (tree: string, dir: string) => (url: string) =>
  applyMigrations({
    databaseUrl: url,
    dir: path.join(tree, dir),
    relativeTo: tree,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    engine: engine7,
  });

/** Up, on the database a test gives, through a kept session: the tree's migrations folder. */
const inSessionOf = (session: MigrationSession, tree: string, engine: MigrationEngine) => (url: string) =>
  session.apply({
    databaseUrl: url,
    dir: path.join(tree, 'migrations'),
    relativeTo: tree,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    engine,
  });

describe('TypeScript migrations load as in a checkout of their tree', () => {
  it("resolve a tsconfig alias with the tree's tsconfig, not the one where Consort was started", async () => {
    const tree = await files(path.join(work, 'tree'), {
      'tsconfig.json': ALIASES,
      'src/names.ts': "export const NAME = 'from_the_tree';\n",
      'migrations/1700000000000_named.ts': NAMED,
    });
    const { r, tables } = await tablesAfter(up(tree, 'migrations'));
    expect(r.ok).toBe(true);
    expect(tables).toEqual(['from_the_tree']);
  }, 60_000);

  it("run in their package's folder of the tree, with the tsconfig above it in the tree (a monorepo)", async () => {
    const tree = await files(path.join(work, 'mono'), {
      'tsconfig.json': ALIASES.replace('src/*', 'packages/db/src/*'),
      'package.json': JSON.stringify({ private: true, workspaces: ['packages/*'] }),
      'packages/db/package.json': JSON.stringify({ name: 'db', private: true }),
      'packages/db/src/names.ts': "export const NAME = 'from_the_package';\n",
      'packages/db/names.txt': 'read_in_the_package',
      'packages/db/migrations/1700000000000_named.ts': NAMED,
      // A migration reading a file by a relative path, as its deploy (`cd packages/db && npm run migrate`) finds it.
      'packages/db/migrations/1700000000001_read.ts':
        "import { readFileSync } from 'node:fs';\nexport const up = (pgm: any) => { pgm.createTable(readFileSync('names.txt', 'utf8').trim(), { id: 'id' }); };\nexport const down = false;\n",
    });
    expect(await treeSettings(tree, path.join(tree, 'packages/db/migrations'))).toEqual({
      tree,
      cwd: path.join(tree, 'packages/db'),
      tsconfig: path.join(tree, 'tsconfig.json'),
    });
    const { r, tables } = await tablesAfter(up(tree, 'packages/db/migrations'));
    expect(r.ok).toBe(true);
    expect(tables).toEqual(['from_the_package', 'read_in_the_package']);
  }, 60_000);

  it('a tree the check copied into node_modules/.cache resolves its aliases as a checkout does (tsx skips node_modules); its own dependencies do not', async () => {
    // tsx resolves `paths` only for files outside every node_modules; the check's copy of a commit's
    // tree lives in the project's node_modules/.cache/consort (workdir.ts).
    const tree = await files(path.join(work, 'project', 'node_modules', '.cache', 'consort', 'check-1', 'base'), {
      'tsconfig.json': JSON.stringify({
        compilerOptions: { baseUrl: '.', paths: { 'lib/*': ['missing/*', 'src/*'], 'lib/deep/*': ['deep/*'] } },
      }),
      'src/names.ts': "export const NAME = 'from_the_copy';\n",
      'deep/names.ts': "export const NAME = 'longest_prefix';\n",
      'migrations/1700000000000_named.ts': NAMED,
      'migrations/1700000000001_deep.ts': NAMED.replace("'lib/names'", "'lib/deep/names'"),
    });
    const { r, tables } = await tablesAfter(up(tree, 'migrations'));
    expect(r.ok).toBe(true);
    expect(tables).toEqual(['from_the_copy', 'longest_prefix']);
    // A dependency in the tree's own node_modules importing by the alias is not given it, as tsx does not.
    await files(tree, {
      'node_modules/dep/index.js': "module.exports = require('lib/names');\n",
      'migrations/1700000000002_dep.ts':
        "import { NAME } from 'dep';\nexport const up = (pgm: any) => { pgm.createTable(NAME + '_dep', { id: 'id' }); };\nexport const down = false;\n",
    });
    const dep = await tablesAfter(up(tree, 'migrations'));
    expect(JSON.stringify(dep.r.ok ? null : dep.r.failed)).toContain("Cannot find module 'lib/names'");
  }, 60_000);

  it('a tree without a tsconfig has no alias, as its deploy has none: the import fails, nothing else is loaded', async () => {
    const tree = await files(path.join(work, 'bare'), {
      'src/names.ts': "export const NAME = 'from_the_bare_tree';\n",
      'migrations/1700000000000_named.ts': NAMED,
    });
    expect((await treeSettings(tree, path.join(tree, 'migrations'))).tsconfig).toBeUndefined();
    const { r, tables } = await tablesAfter(up(tree, 'migrations'));
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r.ok ? null : r.failed)).toContain("Cannot find module 'lib/names'");
    expect(tables).toEqual([]);
  }, 60_000);

  it("one process moving from one tree to another reads each tree's tsconfig", async () => {
    const tree = (name: string, target: string) =>
      files(path.join(work, name), {
        'tsconfig.json': ALIASES.replace('src/*', `${target}/*`),
        [`${target}/names.ts`]: `export const NAME = '${name}_${target}';\n`,
        'migrations/1700000000000_named.ts': NAMED,
      });
    const first = await tree('first', 'src');
    const second = await tree('second', 'lib');
    const session = openMigrationRunner();
    try {
      const inSession = (t: string) => inSessionOf(session, t, engine7);
      expect((await tablesAfter(inSession(first))).tables).toEqual(['first_src']);
      expect((await tablesAfter(inSession(second))).tables).toEqual(['second_lib']);
    } finally {
      await session.close();
    }
  }, 60_000);

  it('requests from three trees at once each run in their own tree, one tree at a time', async () => {
    const trees = await Promise.all(
      ['one', 'two', 'three'].map((name, i) =>
        files(path.join(work, `side-${name}`), {
          'tsconfig.json': ALIASES.replace('src/*', `dir${i}/*`),
          [`dir${i}/names.ts`]: `export const NAME = '${name}_dir${i}';\n`,
          'migrations/1700000000000_named.ts': NAMED,
        }),
      ),
    );
    const session = openMigrationRunner();
    try {
      const inSession = (t: string) => inSessionOf(session, t, engine7);
      // Each on a database of its own, so the session sends them side by side.
      const got = await Promise.all(trees.map((t) => tablesAfter(inSession(t))));
      expect(got.map((g) => g.tables)).toEqual([['one_dir0'], ['two_dir1'], ['three_dir2']]);
    } finally {
      await session.close();
    }
  }, 60_000);
});

describe("the project's tsconfig-paths, registered as its deploy script registers it", () => {
  it("reads each tree's tsconfig (and what it extends), and is undone before another tree's migrations", async () => {
    // node-pg-migrate 9 (jiti) with `-r tsconfig-paths/register`, Consort's own tsconfig-paths as the project's.
    const engine: MigrationEngine = { ...(await bundledEngine()), tsconfigPaths: { via: 'register', workspace: repo } };
    const legacy =
      "import { NAME } from 'old/names';\nexport const up = (pgm: any) => { pgm.createTable(NAME, { id: 'id' }); };\n";
    const first = await files(path.join(work, 'paths-first'), {
      'tsconfig.json': JSON.stringify({ extends: './tsconfig.base.json' }),
      'tsconfig.base.json': JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { 'old/*': ['src/*'] } } }),
      'src/names.ts': "export const NAME = 'first_src';\n",
      'migrations/1700000000000_named.ts': legacy,
    });
    // The same import, in a tree whose tsconfig has no such alias: its deploy cannot load it either.
    const second = await files(path.join(work, 'paths-second'), {
      'tsconfig.json': ALIASES,
      'src/names.ts': "export const NAME = 'second_src';\n",
      'migrations/1700000000000_named.ts': legacy,
    });
    const session = openMigrationRunner();
    try {
      const inSession = (t: string) => inSessionOf(session, t, engine);
      expect((await tablesAfter(inSession(first))).tables).toEqual(['first_src']);
      const { r, tables } = await tablesAfter(inSession(second));
      expect(tables).toEqual([]);
      expect(r.ok ? '' : r.failed.error.message).toContain("Cannot find module 'old/names'");
    } finally {
      await session.close();
    }
  }, 60_000);
});
