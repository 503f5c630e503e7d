/**
 * A TypeScript history whose migrations import by a tsconfig path alias, deployed as
 * Fezzzi/Household-Chores deploys it: the script registers tsconfig-paths before node-pg-migrate
 * (`ts-node -r tsconfig-paths/register node_modules/.bin/node-pg-migrate up`; here `node -r`, with
 * node-pg-migrate 9 loading the TypeScript). The check registers the project's tsconfig-paths with
 * the tree's tsconfig, as that deploy does, and the migrations load: base's in the baseline with
 * base's files, the pull request's with its own. node-pg-migrate 9's `--tsconfig-paths` is its
 * runner's option, given the same way. Where the scripts do not all say so (a `migrate:test`
 * without it), the deploy is not known: the check fails as before, with the note on the alias.
 */
import { rm, symlink, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { checkBranch, checkRepo, commitBranch, git } from '../helpers/check-repo.js';
import { MODULES } from '../helpers/history-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

const TSCONFIG = `{
  // as tsc reads it: comments and trailing commas; the paths come from the file it extends
  "extends": "./tsconfig.base.json",
  "compilerOptions": { "module": "commonjs", },
}
`;
const TSCONFIG_BASE = `{
  "compilerOptions": { "baseUrl": ".", "paths": { "api/*": ["src/api/*"], "shared/*": ["src/shared/*"] } },
}
`;
const CONFIG = 'migrations:\n  dir: src/api/migrations\nsuite:\n  command: "true"\n';

/** The Household-Chores shape, with `scripts` as its package.json's; `tsconfig-paths` linked into its node_modules when `linked`. */
async function project(prefix: string, scripts: Record<string, string>, linked: boolean): Promise<string> {
  const dir = await checkRepo(prefix, {
    'package.json': JSON.stringify({ name: 'chores', private: true, scripts }),
    '.gitignore': 'node_modules/\n',
    'tsconfig.json': TSCONFIG,
    'tsconfig.base.json': TSCONFIG_BASE,
    'src/shared/names.ts': "export const USERS = 'users';\n",
    // A module the migrations import by alias, itself importing by alias.
    'src/api/database/tables.ts': "import { USERS } from 'shared/names';\nexport const tables = { users: USERS };\n",
    'src/api/migrations/1627412448307_users.ts':
      "import { tables } from 'api/database/tables';\nexport const up = (pgm: any) => { pgm.createTable(tables.users, { id: 'id' }); };\n",
    '.github/consort.yml': CONFIG,
  });
  // The pull request's migration imports what only its own tree has: a registration kept from
  // base's tree (or base's file, loaded for the alias) would create a table named "undefined".
  await commitBranch(dir, 'feature', {
    'src/shared/names.ts': "export const USERS = 'users';\nexport const NOTES = 'notes';\n",
    'src/api/migrations/1627417143293_notes.ts':
      "import { NOTES } from 'shared/names';\nexport const up = (pgm: any) => { pgm.createTable(NOTES, { id: 'id' }); };\n",
  });
  if (linked) {
    await mkdir(path.join(dir, 'node_modules'));
    await symlink(path.join(MODULES, 'tsconfig-paths'), path.join(dir, 'node_modules/tsconfig-paths'), 'dir');
  }
  return dir;
}

let t: TestProvider;
const dirs: string[] = [];
beforeAll(async () => {
  t = await localTestProvider();
}, 60_000);
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  await t.cleanup();
});

it("registers the project's tsconfig-paths as its deploy script does, and not where another script on the folder does not", async () => {
  const dir = await project(
    'alias-register',
    { migrate: 'node -r tsconfig-paths/register node_modules/.bin/node-pg-migrate up -m src/api/migrations' },
    true,
  );
  dirs.push(dir);
  const report = await checkBranch(dir, 'feature', 11, t.provider);
  expect(report.stages.baseline.status).toBe('passed');
  expect(report.stages.migrations.status).toBe('passed');
  expect(report.stages.migrations.applied.map((m) => m.name)).toEqual(['1627417143293_notes']);
  expect(report.stages.migrations.nodePgMigrate?.pathAliases).toEqual({
    name: 'tsconfig-paths',
    version: '4.2.0',
    source: 'project',
    how: `-r tsconfig-paths/register in package.json's script "migrate"`,
  });
  expect(report.stages.migrations.summary).toContain(
    `path aliases through the project's tsconfig-paths 4.2.0 (-r tsconfig-paths/register in package.json's script "migrate")`,
  );
  // The table the pull request's own names.ts names, not base's (which has no NOTES).
  expect(JSON.stringify(report.stages.schemaDiff)).toContain('notes');
  expect(JSON.stringify(report.stages.schemaDiff)).not.toContain('undefined');

  // A script that applies the folder without it: which one deploys is unknown, nothing is registered.
  await git(dir, 'checkout', '-q', 'main');
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'chores',
      private: true,
      scripts: {
        migrate: 'node -r tsconfig-paths/register node_modules/.bin/node-pg-migrate up -m src/api/migrations',
        'migrate:test': 'node-pg-migrate up -m src/api/migrations',
      },
    }),
  );
  await git(dir, 'commit', '-qam', 'a second script');
  await git(dir, 'checkout', '-q', 'feature');
  await git(dir, 'merge', '-q', 'main');
  const unknown = await checkBranch(dir, 'feature', 12, t.provider);
  // (base's migrations are unchanged: the baseline built above is reused)
  expect(unknown.stages.migrations.status).toBe('failed');
  // (node-pg-migrate 9 loads every file before it runs one: base's is the first that cannot load)
  expect(unknown.stages.migrations.summary).toContain("Cannot find module 'api/database/tables'");
  expect(unknown.stages.migrations.failure?.note).toContain(
    'api/database/tables is a TypeScript path alias ("api/*" in the compilerOptions.paths of tsconfig.base.json), not a package',
  );
  expect(unknown.stages.migrations.nodePgMigrate?.pathAliases).toBeUndefined();
}, 180_000);

it("gives node-pg-migrate 9 the tree's tsconfig when the deploy runs it with --tsconfig-paths", async () => {
  const dir = await project(
    'alias-runner',
    { migrate: 'node-pg-migrate up -m src/api/migrations --tsconfig-paths true' },
    false,
  );
  dirs.push(dir);
  const report = await checkBranch(dir, 'feature', 13, t.provider);
  expect(report.stages.baseline.status).toBe('passed');
  expect(report.stages.migrations.status).toBe('passed');
  expect(report.stages.migrations.nodePgMigrate?.pathAliases).toEqual(
    expect.objectContaining({ name: 'jiti', source: 'engine', how: expect.stringContaining('--tsconfig-paths true') }),
  );
  expect(report.stages.migrations.summary).toContain('path aliases through its own jiti');
}, 180_000);

it('resolves them with tsx (node-pg-migrate 7 --tsx), base included, whose tree the check copies into node_modules/.cache', async () => {
  const dir = await project('alias-tsx', { migrate: 'node-pg-migrate up --tsx -m src/api/migrations' }, false);
  dirs.push(dir);
  await mkdir(path.join(dir, 'node_modules'));
  await symlink(path.join(MODULES, 'node-pg-migrate-7'), path.join(dir, 'node_modules/node-pg-migrate'), 'dir');
  await symlink(path.join(MODULES, 'tsx'), path.join(dir, 'node_modules/tsx'), 'dir');
  const report = await checkBranch(dir, 'feature', 14, t.provider);
  expect(report.stages.baseline.status).toBe('passed');
  expect(report.stages.migrations.status).toBe('passed');
  expect(report.stages.migrations.applied.map((m) => m.name)).toEqual(['1627417143293_notes']);
  expect(report.stages.migrations.nodePgMigrate).toMatchObject({
    version: '7.9.1',
    source: 'project',
    typescript: { name: 'tsx', source: 'project' },
  });
  expect(JSON.stringify(report.stages.schemaDiff)).toContain('notes');
}, 180_000);
