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

/**
 * The Household-Chores shape, with `scripts` as its package.json's; `installed` linked into its
 * node_modules (the name it is installed as → Consort's package standing in for it).
 */
async function project(
  prefix: string,
  scripts: Record<string, string>,
  installed: Record<string, string> = {},
): Promise<string> {
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
  if (Object.keys(installed).length > 0) await mkdir(path.join(dir, 'node_modules'));
  for (const [as, pkg] of Object.entries(installed))
    await symlink(path.join(MODULES, pkg), path.join(dir, 'node_modules', as), 'dir');
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
    { 'tsconfig-paths': 'tsconfig-paths' },
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
  const dir = await project('alias-runner', {
    migrate: 'node-pg-migrate up -m src/api/migrations --tsconfig-paths true',
  });
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
  const dir = await project(
    'alias-tsx',
    { migrate: 'node-pg-migrate up --tsx -m src/api/migrations' },
    { 'node-pg-migrate': 'node-pg-migrate-7', tsx: 'tsx' },
  );
  dirs.push(dir);
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
