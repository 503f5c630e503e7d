/**
 * When migrations.dir names a folder that does not exist, the error says which folder the
 * project's own scripts run node-pg-migrate on, and the setting to put it in.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isConsortError } from '../../src/core/errors.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { readMigrationSet } from '../../src/migrations/files.js';
import { dirsInScript, migrationsDirHint } from '../../src/migrations/scripted-dirs.js';

describe('dirsInScript: the folder each node-pg-migrate command of a script uses', () => {
  it.each([
    ['node-pg-migrate up -m db/migrations', [{ flag: '-m db/migrations', dir: 'db/migrations' }]],
    ['node-pg-migrate -m "db/migrations" up', [{ flag: '-m db/migrations', dir: 'db/migrations' }]],
    [
      'node-pg-migrate --migrations-dir src/db/migrations up',
      [{ flag: '--migrations-dir src/db/migrations', dir: 'src/db/migrations' }],
    ],
    ['node-pg-migrate up --migrations-dir=sql', [{ flag: '--migrations-dir sql', dir: 'sql' }]],
    ['npx node-pg-migrate up', [{ dir: 'migrations' }]],
    ['./node_modules/.bin/node-pg-migrate up -m ./db', [{ flag: '-m ./db', dir: 'db' }]],
    ['cd server && node-pg-migrate up -m migrations', [{ flag: '-m migrations', dir: 'server/migrations' }]],
    ['dotenv -- node-pg-migrate --tsx up -m db/m; echo done', [{ flag: '-m db/m', dir: 'db/m' }]],
    ['jest --runInBand', []],
    [
      `node-pg-migrate up -m 'db/my migrations' --ignore-pattern '\\..*|x' && echo "a;b" | cat`,
      [{ flag: '-m db/my migrations', dir: 'db/my migrations' }],
    ],
    ['node-pg-migrate up -m /etc', []],
  ])('%s', (script, dirs) => {
    expect(dirsInScript(script)).toEqual(dirs);
  });
});

describe('the missing migrations directory', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'consort-scripted-'));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const missing = async (configured = 'migrations') => {
    const e: unknown = await readMigrationSet(path.join(root, configured), { relativeTo: root }).then(
      () => undefined,
      (err: unknown) => err,
    );
    if (!isConsortError(e)) throw new Error(`expected a ConsortError, got ${String(e)}`);
    return e;
  };

  it("names the root package.json's script and the setting", async () => {
    await mkdir(path.join(root, 'db/migrations'), { recursive: true });
    await writeFile(
      path.join(root, 'package.json'),
      JSON.stringify({ scripts: { test: 'jest', migrate: 'node-pg-migrate -m db/migrations' } }),
    );
    const e = await missing();
    expect(e.message).toBe('No migrations directory at migrations (migrations.dir).');
    expect(e.hint).toBe(
      'package.json\'s script "migrate" runs node-pg-migrate with -m db/migrations: set migrations.dir: db/migrations in .github/consort.yml.',
    );
    // A project configured in consort.config.json is told to set it there.
    await writeFile(path.join(root, 'consort.config.json'), '{}');
    expect((await missing()).hint).toBe(
      'package.json\'s script "migrate" runs node-pg-migrate with -m db/migrations: set migrations.dir: db/migrations in consort.config.json.',
    );
    await rm(path.join(root, 'db'), { recursive: true });
    expect((await missing()).hint).toBe(
      'Create it, or set migrations.dir in consort.config.json to the folder that holds your migrations.',
    );
  });

  it("names a workspace package's script, its folder relative to the root", async () => {
    await mkdir(path.join(root, 'packages/db/sql'), { recursive: true });
    await mkdir(path.join(root, 'apps/api/migrations'), { recursive: true });
    await writeFile(path.join(root, 'package.json'), JSON.stringify({ workspaces: ['packages/*'] }));
    await writeFile(
      path.join(root, 'packages/db/package.json'),
      JSON.stringify({ scripts: { 'db:up': 'node-pg-migrate up --migrations-dir=sql' } }),
    );
    // pnpm's workspace file counts too; this package runs it with node-pg-migrate's default folder.
    await writeFile(path.join(root, 'pnpm-workspace.yaml'), "packages:\n  - 'apps/*'\n");
    await writeFile(
      path.join(root, 'apps/api/package.json'),
      JSON.stringify({ scripts: { migrate: 'node-pg-migrate up' } }),
    );
    expect((await missing()).hint).toBe(
      'packages/db/package.json\'s script "db:up" runs node-pg-migrate with --migrations-dir sql: set migrations.dir: packages/db/sql in .github/consort.yml (other scripts name apps/api/migrations).',
    );
    await rm(path.join(root, 'packages/db/sql'), { recursive: true });
    expect((await missing()).hint).toBe(
      'apps/api/package.json\'s script "migrate" runs node-pg-migrate in apps/api with its default -m migrations: set migrations.dir: apps/api/migrations in .github/consort.yml.',
    );
  });

  it('names the script of a package below the root that is no workspace (server/ beside app/)', async () => {
    // As a repository keeps its server and its mobile app side by side with no workspaces: the
    // root's package.json runs nothing, the server's own runs node-pg-migrate from its folder.
    await mkdir(path.join(root, 'src/server/db/migrations'), { recursive: true });
    await mkdir(path.join(root, 'src/mobile'), { recursive: true });
    await writeFile(path.join(root, 'package.json'), JSON.stringify({ scripts: { flow: 'flow' } }));
    await writeFile(path.join(root, 'src/mobile/package.json'), JSON.stringify({ scripts: { start: 'expo start' } }));
    await writeFile(
      path.join(root, 'src/server/package.json'),
      JSON.stringify({ scripts: { migrate: 'node-pg-migrate -m ./db/migrations' } }),
    );
    // Installed packages and dot-folders are not the repository's packages.
    await mkdir(path.join(root, 'node_modules/dep/migrations'), { recursive: true });
    await writeFile(
      path.join(root, 'node_modules/dep/package.json'),
      JSON.stringify({ scripts: { m: 'node-pg-migrate' } }),
    );
    expect((await missing()).hint).toBe(
      'src/server/package.json\'s script "migrate" runs node-pg-migrate with -m ./db/migrations: set migrations.dir: src/server/db/migrations in .github/consort.yml.',
    );
  });

  it("names node-pg-migrate's own configuration: the config package's default file, which wins over -m", async () => {
    await mkdir(path.join(root, 'db/migrations'), { recursive: true });
    await mkdir(path.join(root, 'config'));
    await writeFile(
      path.join(root, 'config/default.json'),
      JSON.stringify({ db: { url: 'postgres://localhost/app', 'migrations-dir': 'db/migrations' } }),
    );
    const manifest = (deps: Record<string, string>, scripts: Record<string, string>) =>
      writeFile(path.join(root, 'package.json'), JSON.stringify({ scripts, dependencies: deps }));
    // node-pg-migrate reads config/ only through the config package: without it, the file says nothing.
    await manifest({ 'node-pg-migrate': '^7' }, { migrate: 'node-pg-migrate -m sql' });
    expect((await missing()).hint).toBe(
      'Create it, or set migrations.dir in .github/consort.yml to the folder that holds your migrations.',
    );
    await manifest({ 'node-pg-migrate': '^7', config: '^3' }, { migrate: 'node-pg-migrate -m sql' });
    expect((await missing()).hint).toBe(
      'package.json\'s script "migrate" runs node-pg-migrate, and config/default.json\'s db section sets migrations-dir for node-pg-migrate: set migrations.dir: db/migrations in .github/consort.yml.',
    );
    // Its section is the script's --config-value; another section names nothing.
    await manifest({ config: '^3' }, { migrate: 'node-pg-migrate --config-value migrate up' });
    expect((await missing()).hint).toBe(
      'Create it, or set migrations.dir in .github/consort.yml to the folder that holds your migrations.',
    );
    // YAML too (the config package reads default.json, then default.yaml, default.yml: the last wins).
    await mkdir(path.join(root, 'db/sql'));
    await writeFile(path.join(root, 'config/default.yml'), 'db:\n  migrations-dir: db/sql\n');
    await manifest({ config: '^3' }, { migrate: 'node-pg-migrate up' });
    expect((await missing()).hint).toBe(
      'package.json\'s script "migrate" runs node-pg-migrate, and config/default.yml\'s db section sets migrations-dir for node-pg-migrate: set migrations.dir: db/sql in .github/consort.yml.',
    );
    await rm(path.join(root, 'config/default.yml'));
    // No script runs it (CI or a person does): the configuration alone still says where.
    await manifest({ 'node-pg-migrate': '^7', config: '^3' }, { test: 'jest' });
    expect((await missing()).hint).toBe(
      "config/default.json's db section sets migrations-dir for node-pg-migrate: set migrations.dir: db/migrations in .github/consort.yml.",
    );
  });

  it("names a script's --config-file (JSON, read whole without the section), never one outside the repository", async () => {
    await mkdir(path.join(root, 'server/database/migrations'), { recursive: true });
    await writeFile(
      path.join(root, 'server/migrate.json'),
      JSON.stringify({ 'migrations-dir': 'database/migrations' }),
    );
    await writeFile(
      path.join(root, 'package.json'),
      JSON.stringify({ scripts: { 'db:migrate': 'cd server && node-pg-migrate up -f migrate.json' } }),
    );
    expect((await missing()).hint).toBe(
      'package.json\'s script "db:migrate" runs node-pg-migrate, and server/migrate.json sets migrations-dir for node-pg-migrate: set migrations.dir: server/database/migrations in .github/consort.yml.',
    );
    // A JavaScript configuration is never run to find out; a file outside the repository never read.
    await writeFile(
      path.join(root, 'package.json'),
      JSON.stringify({
        scripts: { a: 'node-pg-migrate up --config-file=migrate.cjs', b: 'node-pg-migrate -f ../x.json' },
      }),
    );
    expect((await missing()).hint).toBe(
      'Create it, or set migrations.dir in .github/consort.yml to the folder that holds your migrations.',
    );
  });

  it("reads a script's --config-file as the project's node-pg-migrate does: 6 and 7 its top-level keys, 8 and 9 its section", async () => {
    // A migrate.json that keeps the app's connection under db and the migration settings beside it.
    await mkdir(path.join(root, 'database/migrations'), { recursive: true });
    await mkdir(path.join(root, 'db'), { recursive: true });
    await writeFile(
      path.join(root, 'migrate.json'),
      JSON.stringify({ db: { url: 'postgres://app@localhost/app' }, 'migrations-dir': 'database/migrations' }),
    );
    const project = async (deps: Record<string, string>, installed?: string) => {
      await writeFile(
        path.join(root, 'package.json'),
        JSON.stringify({ devDependencies: deps, scripts: { migrate: 'node-pg-migrate up -f migrate.json -m db' } }),
      );
      await rm(path.join(root, 'node_modules'), { recursive: true, force: true });
      if (installed === undefined) return;
      await mkdir(path.join(root, 'node_modules/node-pg-migrate'), { recursive: true });
      await writeFile(
        path.join(root, 'node_modules/node-pg-migrate/package.json'),
        JSON.stringify({ name: 'node-pg-migrate', version: installed }),
      );
    };
    const topLevel =
      'package.json\'s script "migrate" runs node-pg-migrate, and migrate.json sets migrations-dir for node-pg-migrate: set migrations.dir: database/migrations in .github/consort.yml.';
    const section =
      'package.json\'s script "migrate" runs node-pg-migrate with -m db: set migrations.dir: db in .github/consort.yml.';
    // 7 (as package.json asks, and as installed) applies the file's top-level migrations-dir.
    await project({ 'node-pg-migrate': '^7.9.1' });
    expect((await missing()).hint).toBe(topLevel);
    await project({ 'node-pg-migrate': '*' }, '6.2.2');
    expect((await missing()).hint).toBe(topLevel);
    // 8 and 9 read its db section, which names no folder: -m does.
    await project({ 'node-pg-migrate': '^7.9.1' }, '8.0.4');
    expect((await missing()).hint).toBe(section);
    await project({ 'node-pg-migrate': '^9.0.0' });
    expect((await missing()).hint).toBe(section);
  });

  it("names the TypeScript sources of a build's output a script migrates (-m dist/migrations after tsc)", async () => {
    await writeFile(
      path.join(root, 'package.json'),
      JSON.stringify({ scripts: { build: 'tsc', migrate: 'node-pg-migrate -m dist/migrations -j js' } }),
    );
    // No sources under src/ yet: nothing to name.
    const generic = 'Create it, or set migrations.dir in .github/consort.yml to the folder that holds your migrations.';
    expect((await missing()).hint).toBe(generic);
    await mkdir(path.join(root, 'src/migrations'), { recursive: true });
    await writeFile(path.join(root, 'src/migrations/types.d.ts'), 'export {};\n');
    expect((await missing()).hint).toBe(generic);
    await writeFile(path.join(root, 'src/migrations/1700000000000_a.ts'), 'export async function up() {}\n');
    const fromSources =
      "package.json's script \"migrate\" runs node-pg-migrate with -m dist/migrations, a folder the repository does not hold (a build writes it), and the check reads migrations from the repository: set migrations.dir: src/migrations in .github/consort.yml, the TypeScript they are built from, which the check loads through the project's TypeScript loader (tsx or ts-node) or node-pg-migrate 9's own.";
    expect((await missing()).hint).toBe(fromSources);
    // A local build's output (git ignores it) is no answer either, though it exists here.
    await execFileAsync('git', ['init', '-q'], { cwd: root });
    await writeFile(path.join(root, '.gitignore'), 'dist/\n');
    await mkdir(path.join(root, 'dist/migrations'), { recursive: true });
    expect((await missing()).hint).toBe(fromSources);
  });

  it('says what it always said when no script names a folder that exists', async () => {
    const generic = 'Create it, or set migrations.dir in .github/consort.yml to the folder that holds your migrations.';
    expect((await missing()).hint).toBe(generic);
    // A script's folder that does not exist either, or is the one configured, is no answer.
    await writeFile(
      path.join(root, 'package.json'),
      JSON.stringify({ scripts: { a: 'node-pg-migrate -m db/migrations', b: 'node-pg-migrate up' } }),
    );
    expect((await missing()).hint).toBe(generic);
    // Nor is a folder the repository links to outside it.
    const outside = await mkdtemp(path.join(os.tmpdir(), 'consort-scripted-outside-'));
    try {
      await symlink(outside, path.join(root, 'db'));
      await writeFile(path.join(root, 'package.json'), JSON.stringify({ scripts: { a: 'node-pg-migrate -m db' } }));
      expect((await missing()).hint).toBe(generic);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
    // A manifest that is not JSON, or not an object of scripts, names nothing.
    await writeFile(path.join(root, 'package.json'), '{ not json');
    expect((await missing()).hint).toBe(generic);
    expect(await migrationsDirHint(root, 'migrations')).toBeUndefined();
  });
});
