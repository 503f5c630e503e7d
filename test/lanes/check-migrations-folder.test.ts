/**
 * What in the migrations directory is a migration: what node-pg-migrate loads, nothing more. The
 * fixture (test/fixtures/histories/league-cjs) keeps its SQL in `migrations/sql/` beside a helper
 * that reads it with `__dirname`, and a `.gitkeep` from when the folder was empty; its pull request
 * adds a migration and its two SQL files. Neither the subfolder's files nor the dotfile are
 * migrations: listed from base's commit, the subfolder's files read as migrations the pull request
 * deleted; handed to node-pg-migrate 6's programmatic runner without an ignorePattern (only its CLI
 * defaults to one), the `.gitkeep` is loaded as a migration and the baseline fails.
 *
 * node-pg-migrate 6 here is a stand-in: 7.9.1 (Consort's devDependency node-pg-migrate-7) behind
 * 6's runner contract, where no ignorePattern means every file is loaded (6.2.2's
 * `loadMigrationFiles`: `ignorePattern === undefined ? files : files.filter(...)`). Nothing is
 * downloaded.
 */
import { cp, mkdir, mkdtemp, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkAgainstMain, isolatedGit } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

const git = isolatedGit;
const FIXTURE = path.join(process.cwd(), 'test/fixtures/histories/league-cjs');
const MODULES = path.join(process.cwd(), 'node_modules');
const NEW = '1700000000002_standings';

let t: TestProvider;
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => t?.cleanup());

/** A node-pg-migrate 6 whose runner, like 6's, loads every file when given no ignorePattern. */
async function nodePgMigrate6(modules: string): Promise<void> {
  const dir = path.join(modules, 'node-pg-migrate');
  await mkdir(dir);
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'node-pg-migrate', version: '6.2.2-standin', main: 'index.js' }),
  );
  await writeFile(
    path.join(dir, 'index.js'),
    `const seven = require(${JSON.stringify(path.join(MODULES, 'node-pg-migrate-7'))});
// 6.2.2: no ignorePattern, no filter ('(?!)' matches no name).
exports.default = (options) => seven.default({ ...options, ignorePattern: options.ignorePattern ?? '(?!)' });
`,
  );
}

/** The fixture as a repository: `main` without the newest migration and its SQL, the branch with them. */
async function league(
  engine: 'node-pg-migrate-6' | 'node-pg-migrate-7',
  config = '',
  files: Record<string, string> = {},
): Promise<{ dir: string; dispose(): Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), 'consort-league-'));
  await cp(FIXTURE, root, { recursive: true });
  await writeFile(path.join(root, '.gitignore'), 'node_modules/\n');
  await mkdir(path.join(root, '.github'));
  await writeFile(path.join(root, '.github/consort.yml'), `suite:\n  command: "true"\n${config}`);
  for (const [file, content] of Object.entries(files)) await writeFile(path.join(root, file), content);
  const modules = path.join(root, 'node_modules');
  await mkdir(modules);
  if (engine === 'node-pg-migrate-6') await nodePgMigrate6(modules);
  else await symlink(path.join(MODULES, 'node-pg-migrate-7'), path.join(modules, 'node-pg-migrate'), 'dir');
  const later = [
    `migrations/${NEW}.js`,
    ...(await readdir(path.join(root, 'migrations/sql')))
      .filter((f) => f.startsWith(NEW))
      .map((f) => `migrations/sql/${f}`),
  ];
  const aside = path.join(root, '.later');
  await mkdir(aside);
  for (const f of later) await rename(path.join(root, f), path.join(aside, path.basename(f)));
  await git(root, 'init', '-q', '-b', 'main');
  await git(root, 'add', '-A');
  await git(root, 'commit', '-qm', 'base');
  await git(root, 'checkout', '-qb', 'standings');
  for (const f of later) await rename(path.join(aside, path.basename(f)), path.join(root, f));
  await rm(aside, { recursive: true });
  await git(root, 'add', '-A');
  await git(root, 'commit', '-qm', 'the pull request');
  return { dir: root, dispose: () => rm(root, { recursive: true, force: true }) };
}

const check = (dir: string, pr: number) => checkAgainstMain(dir, pr, t.provider);

describe('league-cjs: SQL kept in a subfolder of the migrations directory, and a .gitkeep', () => {
  it.each(['node-pg-migrate-7', 'node-pg-migrate-6'] as const)(
    'with %s: the JS files are the migrations, base applies, and the new one reverses',
    async (engine) => {
      const h = await league(engine);
      try {
        const report = await check(h.dir, engine === 'node-pg-migrate-6' ? 331 : 332);
        expect(report.error).toBeUndefined();
        expect(report.stages.plan).toMatchObject({ status: 'passed', newMigrations: [NEW], problems: [] });
        expect(report.stages.plan.summary).toContain('2 unchanged');
        expect(report.stages.baseline).toMatchObject({ status: 'passed' });
        expect(report.stages.migrations).toMatchObject({
          status: 'passed',
          applied: [{ name: NEW, file: `migrations/${NEW}.js` }],
        });
        expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([[NEW, 'reversible']]);
        expect(report.stages.schemaDiff.text).toContain('standings');
        expect(report.conclusion).toBe('success');
      } finally {
        await h.dispose();
      }
    },
    120_000,
  );
});

describe('migrations.ignorePattern: a README in the migrations directory, skipped as the deploy skips it', () => {
  // The project deploys with `node-pg-migrate up --ignore-pattern '\..*|README\.md'`.
  const README = { 'migrations/README.md': 'One JS file per migration; the SQL it runs is in sql/.\n' };

  it.each(['node-pg-migrate-7', 'node-pg-migrate-6'] as const)(
    'with %s and the key set, the README is no migration and the check passes',
    async (engine) => {
      const h = await league(engine, "migrations:\n  ignorePattern: '\\..*|README\\.md'\n", README);
      try {
        const report = await check(h.dir, engine === 'node-pg-migrate-6' ? 333 : 334);
        expect(report.error).toBeUndefined();
        expect(report.stages.plan).toMatchObject({ status: 'passed', newMigrations: [NEW], problems: [] });
        expect(report.stages.plan.summary).toContain('2 unchanged');
        expect(report.stages.migrations.applied.map((m) => m.name)).toEqual([NEW]);
        expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([[NEW, 'reversible']]);
        expect(report.conclusion).toBe('success');
      } finally {
        await h.dispose();
      }
    },
    120_000,
  );

  it('without it, the baseline fails on the README and says which key to set', async () => {
    const h = await league('node-pg-migrate-7', '', README);
    try {
      const report = await check(h.dir, 335);
      expect(report.conclusion).toBe('failure');
      expect(report.stages.baseline.status).toBe('failed');
      expect(report.stages.baseline.summary).toContain('migrations/README.md could not be loaded');
      expect(report.stages.baseline.summary).toContain('set migrations.ignorePattern');
    } finally {
      await h.dispose();
    }
  }, 120_000);
});
