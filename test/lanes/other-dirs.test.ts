/**
 * uncheckedMigrationDirs (src/lanes/check/other-dirs.ts): the migrations a change adds, edits or
 * deletes in the other folders a project's scripts run node-pg-migrate on, from a base commit to the
 * working tree; not the checked folder, not a folder git ignores (a build's output), not what is
 * unchanged.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkRepo, git } from '../helpers/check-repo.js';
import { localGitRepo } from '../../src/git/repo.js';
import { uncheckedMigrationDirs } from '../../src/lanes/check/other-dirs.js';

const MIGRATION = 'exports.up = (pgm) => {\n  pgm.sql("SELECT 1");\n};\n';
const SCRIPTS = {
  migrate: 'node-pg-migrate -m migrations',
  'migrate:data': 'node-pg-migrate -m data-migrations -t data_migrations',
  'migrate:built': 'node-pg-migrate -m dist/migrations',
  'migrate:new-seed': 'node-pg-migrate create -m seeds',
};

let dir: string;
beforeAll(async () => {
  dir = await checkRepo('other-dirs', {
    'package.json': JSON.stringify({ name: 'p', private: true, scripts: SCRIPTS }),
    '.gitignore': 'dist/\n',
    'migrations/1700000000000_a.js': MIGRATION,
    'data-migrations/1700000000099_gone.js': MIGRATION,
    'data-migrations/1700000000100_kept.js': MIGRATION,
    'data-migrations/1700000000101_edited.js': MIGRATION,
  });
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

it('names what the change adds, edits or deletes in another scripted folder, and nothing else', async () => {
  const base = (await git(dir, 'rev-parse', 'HEAD')).stdout.trim();
  const files: Record<string, string> = {
    'migrations/1700000000001_b.js': MIGRATION, // the checked folder: the check applies it
    'data-migrations/1700000000101_edited.js': MIGRATION.replace('SELECT 1', 'SELECT 2'),
    'data-migrations/1700000000102_new.js': MIGRATION,
    'dist/migrations/1700000000000_a.js': MIGRATION, // ignored by git: a build made it
    'seeds/1700000000200_seed.js': MIGRATION, // only `create` names it
  };
  await rm(path.join(dir, 'data-migrations/1700000000099_gone.js'));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  const found = await uncheckedMigrationDirs(
    {
      workspace: dir,
      base: { ref: 'main', sha: base, migrations: [], tree: { kind: 'commit', repo: dir, sha: base } },
      head: { ref: 'HEAD', sha: null, migrations: [], tree: { kind: 'dir', dir } },
    },
    { dir: 'migrations', ignorePattern: '\\..*' },
    localGitRepo,
  );
  const common = {
    dir: 'data-migrations',
    migrationsDir: 'migrations',
    manifest: 'package.json',
    script: 'migrate:data',
  };
  expect(found).toEqual([
    {
      kind: 'unchecked-migrations-dir',
      file: 'data-migrations/1700000000101_edited.js',
      name: '1700000000101_edited',
      ...common,
      change: 'edited',
    },
    {
      kind: 'unchecked-migrations-dir',
      file: 'data-migrations/1700000000102_new.js',
      name: '1700000000102_new',
      ...common,
      change: 'added',
    },
    {
      kind: 'unchecked-migrations-dir',
      file: 'data-migrations/1700000000099_gone.js',
      name: '1700000000099_gone',
      ...common,
      change: 'deleted',
    },
  ]);
});

it("reads a script's --config-file as that package's node-pg-migrate does (6 and 7: its top-level keys)", async () => {
  // A node-pg-migrate 7 project whose data script names its folder in a --config-file beside a db
  // section: 7 applies the top-level migrations-dir (8 and 9 would read the section and use -m).
  const repo = await checkRepo('other-dirs-7', {
    'package.json': JSON.stringify({
      name: 'p',
      private: true,
      devDependencies: { 'node-pg-migrate': '7.9.1' },
      scripts: { migrate: 'node-pg-migrate up', 'migrate:data': 'node-pg-migrate up -f data.json -m migrations' },
    }),
    'data.json': JSON.stringify({
      db: { url: 'postgres://app@localhost/app' },
      'migrations-dir': 'data-migrations',
      'migrations-table': 'data_migrations',
    }),
    'migrations/1700000000000_a.js': MIGRATION,
  });
  try {
    const base = (await git(repo, 'rev-parse', 'HEAD')).stdout.trim();
    await mkdir(path.join(repo, 'data-migrations'));
    await writeFile(path.join(repo, 'data-migrations/1700000000100_backfill.js'), MIGRATION);
    const found = await uncheckedMigrationDirs(
      {
        workspace: repo,
        base: { ref: 'main', sha: base, migrations: [], tree: { kind: 'commit', repo, sha: base } },
        head: { ref: 'HEAD', sha: null, migrations: [], tree: { kind: 'dir', dir: repo } },
      },
      { dir: 'migrations', ignorePattern: '\\..*' },
      localGitRepo,
    );
    expect(found).toEqual([
      {
        kind: 'unchecked-migrations-dir',
        file: 'data-migrations/1700000000100_backfill.js',
        name: '1700000000100_backfill',
        dir: 'data-migrations',
        migrationsDir: 'migrations',
        manifest: 'package.json',
        script: 'migrate:data',
        change: 'added',
      },
    ]);
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
});

it('reads the scripts of the package that owns migrations.dir when it is a nested folder, no workspace', async () => {
  const repo = await checkRepo('other-dirs-nested', {
    'package.json': JSON.stringify({ name: 'app', private: true }),
    'db/package.json': JSON.stringify({
      name: 'db',
      private: true,
      scripts: { migrate: 'node-pg-migrate up', 'migrate:data': 'node-pg-migrate up -m data-migrations' },
    }),
    'db/migrations/1700000000000_a.js': MIGRATION,
  });
  try {
    const base = (await git(repo, 'rev-parse', 'HEAD')).stdout.trim();
    await mkdir(path.join(repo, 'db/data-migrations'));
    await writeFile(path.join(repo, 'db/data-migrations/1700000000100_backfill.js'), MIGRATION);
    const found = await uncheckedMigrationDirs(
      {
        workspace: repo,
        base: { ref: 'main', sha: base, migrations: [], tree: { kind: 'commit', repo, sha: base } },
        head: { ref: 'HEAD', sha: null, migrations: [], tree: { kind: 'dir', dir: repo } },
      },
      { dir: 'db/migrations', ignorePattern: '\\..*' },
      localGitRepo,
    );
    expect(found).toEqual([
      {
        kind: 'unchecked-migrations-dir',
        file: 'db/data-migrations/1700000000100_backfill.js',
        name: '1700000000100_backfill',
        dir: 'db/data-migrations',
        migrationsDir: 'db/migrations',
        manifest: 'db/package.json',
        script: 'migrate:data',
        change: 'added',
      },
    ]);
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
});
