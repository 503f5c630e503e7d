/**
 * The baseline is seeded with base's seed file, not the working tree's: a PR that adds a table
 * and seeds it must not break its own baseline (base's schema has no such table).
 */
import { localGitRepo } from '../../src/git/repo.js';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { resolveSides } from '../../src/cli/commands/check.js';
import { ConsortConfigSchema } from '../../src/config/schema.js';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import { commitSide, EMPTY_SIDE, workingTreeSide } from '../../src/lanes/check/sides.js';
import { createWorkdir } from '../../src/lanes/check/workdir.js';
import { migrationSetFromEntries } from '../../src/migrations/files.js';
import { applyMigrations } from '../../src/migrations/runner.js';
import { SYSTEM_PG_URL } from '../helpers/servers.js';
import { execFileAsync } from '../helpers/exec-file.js';

const run = execFileAsync;
const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
  HOME: tmpdir(),
};
const git = (cwd: string, ...args: string[]) => run('git', args, { cwd, env: GIT_ENV });

describe('commitSide: the seed as base has it', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'consort-sides-'));
    await git(root, 'init', '-q', '-b', 'main');
    await mkdir(path.join(root, 'db/migrations'), { recursive: true });
    await writeFile(
      path.join(root, 'db/migrations/1700000000000_orders.sql'),
      '-- Up Migration\nCREATE TABLE orders (id int);\n',
    );
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const config = ConsortConfigSchema.parse({
    database: { seed: { file: 'db/seed.sql' } },
    migrations: { dir: 'db/migrations' },
  });

  it('reads the seed file at the base commit, not the edited one in the working tree', async () => {
    await writeFile(path.join(root, 'db/seed.sql'), 'INSERT INTO orders VALUES (1);\n');
    await git(root, 'add', '.');
    await git(root, 'commit', '-qm', 'base');
    const { stdout } = await git(root, 'rev-parse', 'HEAD');
    // The PR adds a table and seeds it.
    await writeFile(
      path.join(root, 'db/migrations/1700000000001_refunds.sql'),
      '-- Up Migration\nCREATE TABLE refunds (id int);\n',
    );
    await writeFile(
      path.join(root, 'db/seed.sql'),
      'INSERT INTO orders VALUES (1);\nINSERT INTO refunds VALUES (1);\n',
    );
    const side = await commitSide(localGitRepo, root, 'main', stdout.trim(), config);
    expect(side.seed).toBe('INSERT INTO orders VALUES (1);\n');
    expect(side.migrations.map((m) => m.file)).toEqual(['db/migrations/1700000000000_orders.sql']);
  });

  it('is null when base has no seed file yet, and for an empty base', async () => {
    await git(root, 'add', '.');
    await git(root, 'commit', '-qm', 'base without seed');
    const { stdout } = await git(root, 'rev-parse', 'HEAD');
    await writeFile(path.join(root, 'db/seed.sql'), 'INSERT INTO orders VALUES (1);\n');
    expect((await commitSide(localGitRepo, root, 'main', stdout.trim(), config)).seed).toBeNull();
    expect(EMPTY_SIDE.seed).toBeNull();
  });
});

describe('--head <ref> without the migrations folder', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'consort-headdir-'));
    await git(root, 'init', '-q', '-b', 'main');
    // The project keeps its migrations where its script says, not in node-pg-migrate's default folder.
    await writeFile(
      path.join(root, 'package.json'),
      JSON.stringify({ scripts: { 'migrate:up': 'node-pg-migrate up --migrations-dir db/sql' } }),
    );
    await mkdir(path.join(root, 'db/sql'), { recursive: true });
    await writeFile(path.join(root, 'db/sql/001_init.sql'), 'CREATE TABLE posts (id int);\n');
    await git(root, 'add', '.');
    await git(root, 'commit', '-qm', 'base');
    await git(root, 'checkout', '-qb', 'pr');
    await writeFile(path.join(root, 'db/sql/002_index.sql'), 'CREATE INDEX posts_id ON posts (id);\n');
    await git(root, 'add', '.');
    await git(root, 'commit', '-qm', 'pr');
    await git(root, 'checkout', '-q', 'main');
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const config = ConsortConfigSchema.parse({});

  it('is the error the working tree gives, naming the folder the script uses, not a change without migrations', async () => {
    const { stdout } = await git(root, 'rev-parse', 'pr');
    await expect(
      resolveSides(localGitRepo, root, config, { base: 'main', head: 'pr' }, () => undefined),
    ).rejects.toMatchObject({
      code: 'config',
      message: `No migrations directory at migrations (migrations.dir) in pr (commit ${stdout.trim().slice(0, 12)}).`,
      hint: expect.stringContaining('set migrations.dir: db/sql'),
    });
    // The working tree, checked out at the same commit, says the same.
    await git(root, 'checkout', '-q', 'pr');
    await expect(resolveSides(localGitRepo, root, config, { base: 'main' }, () => undefined)).rejects.toMatchObject({
      code: 'config',
      hint: expect.stringContaining('set migrations.dir: db/sql'),
    });
  });

  it('a base without the folder is a base before the first migration', async () => {
    const moved = ConsortConfigSchema.parse({ migrations: { dir: 'db/sql' } });
    await git(root, 'checkout', '-q', '--orphan', 'empty');
    await git(root, 'rm', '-rqf', 'db');
    await git(root, 'commit', '-qm', 'empty', '--allow-empty');
    const { base, head } = await resolveSides(
      localGitRepo,
      root,
      moved,
      { base: 'empty', head: 'pr' },
      () => undefined,
    );
    expect(base.migrations).toEqual([]);
    expect(head.migrations.map((m) => m.file)).toEqual(['db/sql/001_init.sql', 'db/sql/002_index.sql']);
  });
});

describe('a migrations folder git ignores (a build writes it)', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'consort-built-'));
    await git(root, 'init', '-q', '-b', 'main');
    await writeFile(path.join(root, '.gitignore'), 'dist/\n');
    await mkdir(path.join(root, 'src/migrations'), { recursive: true });
    await writeFile(path.join(root, 'src/migrations/1700000000000_a.ts'), 'export async function up() {}\n');
    await git(root, 'add', '.');
    await git(root, 'commit', '-qm', 'base');
    // What `tsc` left in the working tree.
    await mkdir(path.join(root, 'dist/migrations'), { recursive: true });
    await writeFile(path.join(root, 'dist/migrations/1700000000000_a.js'), 'exports.up = async () => {};\n');
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('is refused, naming the sources it is built from, rather than every migration counting as new', async () => {
    const built = ConsortConfigSchema.parse({ migrations: { dir: 'dist/migrations' } });
    await expect(resolveSides(localGitRepo, root, built, { base: 'main' }, () => undefined)).rejects.toMatchObject({
      code: 'config',
      message:
        'The migrations directory dist/migrations (migrations.dir) is ignored by git: a build writes it, so no commit holds it and the check would count every migration in it as new.',
      hint: expect.stringContaining('Set migrations.dir: src/migrations in .github/consort.yml'),
    });
    // The sources themselves are read as they are.
    const sources = ConsortConfigSchema.parse({ migrations: { dir: 'src/migrations' } });
    const { head } = await resolveSides(localGitRepo, root, sources, { base: 'main' }, () => undefined);
    expect(head.migrations.map((m) => m.file)).toEqual(['src/migrations/1700000000000_a.ts']);
  });
});

describe('migrations that import project code run where their imports resolve', () => {
  let root: string;
  let db: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'consort-tree-'));
    await git(root, 'init', '-q', '-b', 'main');
    await mkdir(path.join(root, 'migrations'));
    await mkdir(path.join(root, 'src'));
    await writeFile(path.join(root, 'package.json'), '{ "name": "kinds-app", "private": true, "type": "commonjs" }\n');
    await writeFile(path.join(root, 'src/kinds.js'), "exports.KINDS = ['card', 'invoice'];\n");
    await writeFile(
      path.join(root, 'migrations/1700000000000_payment-kinds.js'),
      [
        "const { KINDS } = require('../src/kinds');",
        '',
        "exports.up = (pgm) => { pgm.createType('payment_kind', KINDS); };",
        "exports.down = (pgm) => { pgm.dropType('payment_kind'); };",
        '',
      ].join('\n'),
    );
    await git(root, 'add', '.');
    await git(root, 'commit', '-qm', 'base');
    db = `tree_${randomBytes(6).toString('hex')}`;
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const config = ConsortConfigSchema.parse({});

  async function applyIn(dirs: { dir: string; relativeTo: string }) {
    await withClient(SYSTEM_PG_URL, (a) => a.query(`CREATE DATABASE ${quoteIdent(db)} TEMPLATE template0`));
    try {
      const url = withDatabase(SYSTEM_PG_URL, db);
      const r = await applyMigrations({ databaseUrl: url, ...dirs, direction: 'up', migrationsTable: 'pgmigrations' });
      const labels = r.ok
        ? await withClient(url, async (c) =>
            (await c.query<{ l: string }>(`SELECT unnest(enum_range(NULL::payment_kind))::text AS l`)).rows.map(
              (x) => x.l,
            ),
          )
        : [];
      return { r, labels };
    } finally {
      await withClient(SYSTEM_PG_URL, (a) => a.query(`DROP DATABASE IF EXISTS ${quoteIdent(db)} WITH (FORCE)`));
    }
  }

  it('a base commit is extracted whole, so its migration finds ../src/kinds', async () => {
    const { stdout } = await git(root, 'rev-parse', 'HEAD');
    const side = await commitSide(localGitRepo, root, 'main', stdout.trim(), config);
    expect(side.tree).toEqual({ kind: 'commit', repo: root, sha: stdout.trim() });
    const workdir = await createWorkdir(root, localGitRepo);
    try {
      const extracted = await workdir.extract('base', config.migrations.dir, root, stdout.trim(), side.migrations);
      const { r, labels } = await applyIn(extracted);
      expect(r.ok).toBe(true);
      expect(labels).toEqual(['card', 'invoice']);
      // Only the migration files in a scratch directory: the import cannot resolve.
      const copied = await workdir.write('copied', config.migrations.dir, migrationSetFromEntries(side.migrations));
      const broken = await applyIn(copied);
      expect(broken.r.ok).toBe(false);
      if (!broken.r.ok)
        expect(broken.r.failed).toMatchObject({
          kind: 'load',
          error: { message: expect.stringContaining('Error loading migration files') },
        });
    } finally {
      await workdir.dispose();
    }
  });

  it('a migrations.dir through a file of the commit is a configuration error that says so', async () => {
    const { stdout } = await git(root, 'rev-parse', 'HEAD');
    const files = (await git(root, 'ls-files')).stdout.split('\n').filter(Boolean);
    const file = files.find((f) => !f.includes('/'))!;
    const workdir = await createWorkdir(root, localGitRepo);
    try {
      await expect(workdir.extract('base', `${file}/migrations`, root, stdout.trim(), [])).rejects.toMatchObject({
        code: 'config',
        message: `migrations.dir ${file}/migrations is not a folder in the commit ${stdout.trim().slice(0, 12)}: a part of it is a file.`,
      });
    } finally {
      await workdir.dispose();
    }
  });

  it('consort check builds its sides that way: base from its commit, the change from the working tree', async () => {
    const { stdout } = await git(root, 'rev-parse', 'HEAD');
    const { base, head } = await resolveSides(localGitRepo, root, config, { base: 'main' }, () => undefined);
    expect(base.tree).toEqual({ kind: 'commit', repo: root, sha: stdout.trim() });
    expect(head.tree).toEqual({ kind: 'dir', dir: root });
  });

  it('the working tree side runs from the working tree itself', async () => {
    const side = await workingTreeSide(root, 'working tree', null, config);
    expect(side.tree).toEqual({ kind: 'dir', dir: root });
    const { r, labels } = await applyIn({ dir: path.join(root, 'migrations'), relativeTo: root });
    expect(r.ok).toBe(true);
    expect(labels).toEqual(['card', 'invoice']);
  });
});

describe("the scratch directory in a monorepo: under the node_modules nearest the migrations' package", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'consort-workdir-mono-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("the package's own node_modules, else the root's hoisted one, else the temp directory", async () => {
    const db = path.join(root, 'packages/db');
    await mkdir(db, { recursive: true });
    const at = { root, dir: db };
    const parentOf = async () => {
      const w = await createWorkdir(at);
      await w.dispose();
      return path.dirname(w.root);
    };
    expect(await parentOf()).toBe(tmpdir());
    await mkdir(path.join(root, 'node_modules'));
    expect(await parentOf()).toBe(path.join(root, 'node_modules/.cache/consort'));
    // The package's own install: a migration's import of the package's dependencies resolves from there.
    await mkdir(path.join(db, 'node_modules'));
    expect(await parentOf()).toBe(path.join(db, 'node_modules/.cache/consort'));
  });
});
