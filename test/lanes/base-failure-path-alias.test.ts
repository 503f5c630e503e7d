/**
 * A TypeScript history whose migrations import by a tsconfig path alias (`import { tables } from
 * 'api/database/tables'` with `"paths": { "api/*": ["src/api/*"] }`), deployed with
 * `ts-node -r tsconfig-paths/register node_modules/.bin/node-pg-migrate`, as
 * Fezzzi/Household-Chores does. node-pg-migrate loads migrations with Node's resolution, which
 * never reads `paths`: the baseline fails to load them, and the hint said to install the
 * dependencies (npm ci), which changes nothing. It names the alias and the import that loads.
 */
import { rm } from 'node:fs/promises';
import { baseFailure } from '../../src/lanes/check/baseline.js';
import { pathAlias } from '../../src/migrations/path-alias.js';
import { checkBranch, checkRepo, commitBranch } from '../helpers/check-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

const TSCONFIG = `{
  // as tsc reads it: comments and trailing commas
  "extends": "./tsconfig.base.json",
  "compilerOptions": { "module": "commonjs", /* "strict": true */ },
}
`;
const TSCONFIG_BASE = `{
  "compilerOptions": {
    "baseUrl": ".",
    "paths": { "api/*": ["src/api/*"], "shared/*": ["src/shared/*",], },
  },
}
`;

describe('base migrations that import by a tsconfig path alias', () => {
  let t: TestProvider;
  let dir: string;
  beforeAll(async () => {
    t = await localTestProvider();
    dir = await checkRepo('path-alias', {
      'package.json': JSON.stringify({ name: 'chores', private: true }),
      'tsconfig.json': TSCONFIG,
      'tsconfig.base.json': TSCONFIG_BASE,
      'src/shared/names.ts': "export const USERS = 'users';\n",
      // A module the migrations import relatively, itself importing by alias.
      'src/api/database/tables.ts': "import { USERS } from 'shared/names';\nexport const tables = { users: USERS };\n",
      'src/api/migrations/1627412448307_users.ts':
        "import { tables } from 'api/database/tables';\nexport const up = (pgm: any) => { pgm.createTable(tables.users, { id: 'id' }); };\n",
      '.github/consort.yml': 'migrations:\n  dir: src/api/migrations\nsuite:\n  command: "true"\n',
    });
    await commitBranch(dir, 'feature', {
      'src/api/migrations/1627417143293_notes.ts':
        "export const up = (pgm: any) => { pgm.createTable('notes', { id: 'id' }); };\n",
    });
  }, 60_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await t.cleanup();
  });

  it('names the alias and the relative import, not an install', async () => {
    const report = await checkBranch(dir, 'feature', 7, t.provider);
    expect(report.stages.baseline.status).toBe('failed');
    const summary = report.stages.baseline.summary;
    expect(summary).toContain("Cannot find module 'api/database/tables'");
    expect(summary).toContain(
      'api/database/tables is a TypeScript path alias ("api/*" in the compilerOptions.paths of tsconfig.base.json), not a package',
    );
    expect(summary).toContain("Import it by a relative path in the migrations ('../database/tables')");
    expect(summary).not.toContain('npm ci');
  }, 120_000);

  it('names the module that imports by alias when it is not the migration (the first of the require stack)', async () => {
    const f = await baseFailure(
      {
        kind: 'load',
        name: '1627412448307_users',
        file: 'src/api/migrations/1627412448307_users.ts',
        error: {
          message:
            "Can't get migration files: Error: Cannot find module 'shared/names'\nRequire stack:\n- src/api/database/tables.ts\n- src/api/migrations/1627412448307_users.ts\n- /opt/node_modules/node-pg-migrate/dist/runner.js",
        },
      },
      'main',
      false,
      async () => false,
      undefined,
      undefined,
      (specifier) => pathAlias(dir, 'src/api/migrations', specifier),
    );
    expect(f.hint).toContain('shared/names is a TypeScript path alias ("shared/*"');
    expect(f.hint).toContain(
      "Import it by a relative path in src/api/database/tables.ts (and wherever else the migrations' imports use one) ('../../shared/names')",
    );
  });

  it('reads which alias a module is, and where it points from the module importing it', async () => {
    expect(await pathAlias(dir, 'src/api/migrations', 'shared/names')).toEqual({
      tsconfig: 'tsconfig.base.json',
      pattern: 'shared/*',
      target: 'src/shared/names',
    });
    // A package, a relative import, or a project without paths: no alias.
    expect(await pathAlias(dir, 'src/api/migrations', 'lodash')).toBeUndefined();
    expect(await pathAlias(dir, 'src/api/migrations', './x')).toBeUndefined();
  });
});

describe("a pull request's migration that imports by a tsconfig path alias", () => {
  let t: TestProvider;
  let dir: string;
  beforeAll(async () => {
    t = await localTestProvider();
    dir = await checkRepo('path-alias-pr', {
      'package.json': JSON.stringify({ name: 'chores', private: true }),
      'tsconfig.json': TSCONFIG,
      'tsconfig.base.json': TSCONFIG_BASE,
      'src/shared/names.ts': "export const NOTES = 'notes';\n",
      'src/api/migrations/1627412448307_users.ts':
        "export const up = (pgm: any) => { pgm.createTable('users', { id: 'id' }); };\n",
      '.github/consort.yml': 'migrations:\n  dir: src/api/migrations\nsuite:\n  command: "true"\n',
    });
    await commitBranch(dir, 'feature', {
      'src/api/migrations/1627417143293_notes.ts':
        "import { NOTES } from 'shared/names';\nexport const up = (pgm: any) => { pgm.createTable(NOTES, { id: 'id' }); };\n",
    });
  }, 60_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await t.cleanup();
  });

  it('fails the migrations stage with the note on the alias', async () => {
    const report = await checkBranch(dir, 'feature', 8, t.provider);
    expect(report.stages.migrations.status).toBe('failed');
    expect(report.stages.migrations.summary).toContain("Cannot find module 'shared/names'");
    expect(report.stages.migrations.failure?.note).toContain(
      'shared/names is a TypeScript path alias ("shared/*" in the compilerOptions.paths of tsconfig.base.json), not a package',
    );
    expect(report.stages.migrations.failure?.note).toContain(
      "Import it by a relative path in the migrations ('../../shared/names')",
    );
  }, 120_000);
});
