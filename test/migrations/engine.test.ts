/**
 * Apply what the project's deploy applies: the project's installed node-pg-migrate runs when it
 * has one, and the report says which version ran; the bundled one only when it has none. The
 * "project" here is a directory with its own node_modules/node-pg-migrate (a copy of the package
 * with its version marked), placed where its dependencies still resolve.
 */
import { randomBytes } from 'node:crypto';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runner as bundledRunner } from 'node-pg-migrate';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import { bundledEngine, describeEngine, resolveEngine, type MigrationEngine } from '../../src/migrations/engine.js';
import { engineCacheDir, lockedVersion } from '../../src/migrations/engine-pin.js';
import { migrationsPackage } from '../../src/migrations/project-packages.js';
import { NPM_INSTALL_FLAGS } from '../../src/tools/npm-install.js';
import { applyMigrations, type ApplyResult } from '../../src/migrations/runner.js';
import { SYSTEM_PG_URL } from '../helpers/servers.js';

const BUNDLED_DIR = path.join(process.cwd(), 'node_modules/node-pg-migrate');

/** `project`'s migrations up with `engine` on a database of their own (dropped afterwards), then `check`. */
async function upInFreshDatabase(
  project: string,
  engine: MigrationEngine,
  check: (r: ApplyResult, url: string) => Promise<void>,
): Promise<void> {
  const db = `engine_${randomBytes(6).toString('hex')}`;
  await withClient(SYSTEM_PG_URL, (a) => a.query(`CREATE DATABASE ${quoteIdent(db)} TEMPLATE template0`));
  try {
    const url = withDatabase(SYSTEM_PG_URL, db);
    const r = await applyMigrations({
      databaseUrl: url,
      dir: path.join(project, 'migrations'),
      relativeTo: project,
      direction: 'up',
      migrationsTable: 'pgmigrations',
      engine,
    });
    await check(r, url);
  } finally {
    await withClient(SYSTEM_PG_URL, (a) => a.query(`DROP DATABASE IF EXISTS ${quoteIdent(db)} WITH (FORCE)`));
  }
}

describe('resolveEngine', () => {
  let project: string;
  beforeAll(async () => {
    project = path.join(process.cwd(), 'node_modules/.cache', `consort-engine-${randomBytes(4).toString('hex')}`);
    const pkgDir = path.join(project, 'node_modules/node-pg-migrate');
    await mkdir(path.dirname(pkgDir), { recursive: true });
    await cp(BUNDLED_DIR, pkgDir, { recursive: true });
    const pkg = JSON.parse(await readFile(path.join(pkgDir, 'package.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(path.join(pkgDir, 'package.json'), JSON.stringify({ ...pkg, version: '9.0.0-project.1' }));
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({
        name: 'shop',
        private: true,
        type: 'commonjs',
        dependencies: { 'node-pg-migrate': '9.0.0-project.1' },
      }),
    );
    await mkdir(path.join(project, 'migrations'));
    await writeFile(
      path.join(project, 'migrations/1700000000000_orders.js'),
      "exports.up = (pgm) => { pgm.createTable('orders', { id: 'id', email: { type: 'text', notNull: true } }); pgm.createIndex('orders', 'email'); };\n",
    );
  });
  afterAll(async () => {
    await rm(project, { recursive: true, force: true });
  });

  it('uses the bundled one when the project has none, and says so', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'consort-no-npm-'));
    try {
      const engine = await resolveEngine(empty);
      expect(engine).toMatchObject({ source: 'bundled', version: '9.0.0' });
      expect(engine.runner).toBe(bundledRunner);
      expect(describeEngine(engine)).toBe('node-pg-migrate 9.0.0 (bundled with Consort)');
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it("calls a project's node-pg-migrate that npm hoisted into one copy with Consort's the project's", async () => {
    // `npm i -D consort-db node-pg-migrate` in a fresh project: one node_modules/node-pg-migrate
    // serves both. It runs as the bundled one, but the line the user reads names it as theirs.
    const shared = await mkdtemp(path.join(tmpdir(), 'consort-hoisted-'));
    try {
      await mkdir(path.join(shared, '.git'));
      await mkdir(path.join(shared, 'node_modules'));
      await symlink(BUNDLED_DIR, path.join(shared, 'node_modules/node-pg-migrate'));
      const engine = await resolveEngine(shared);
      expect(engine).toMatchObject({ source: 'bundled', version: '9.0.0', sharedWithProject: true });
      expect(engine.runner).toBe(bundledRunner);
      expect(describeEngine(engine)).toBe("node-pg-migrate 9.0.0 (the project's, the same copy Consort uses)");
    } finally {
      await rm(shared, { recursive: true, force: true });
    }
  });

  it("runs the project's own copy and reports its version", async () => {
    const engine = await resolveEngine(project);
    expect(engine).toMatchObject({
      source: 'project',
      version: '9.0.0-project.1',
      dir: path.join(project, 'node_modules/node-pg-migrate'),
    });
    expect(engine.runner).not.toBe((await bundledEngine()).runner);
    expect(describeEngine(engine)).toBe("node-pg-migrate 9.0.0-project.1 (the project's)");

    await upInFreshDatabase(project, engine, async (r, url) => {
      expect(r.ok).toBe(true);
      // The capture works through the project's runner too: lint and the report see the SQL it sent.
      expect(r.applied.map((m) => m.sql.some((s) => /CREATE INDEX/.test(s)))).toEqual([true]);
      const rows = await withClient(
        url,
        async (c) => (await c.query<{ name: string }>('SELECT name FROM pgmigrations')).rows,
      );
      expect(rows).toEqual([{ name: '1700000000000_orders' }]);
    });
  });
});

describe('lockedVersion: the exact version a lockfile pins', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'consort-lock-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));
  const pins = async (file: string, text: string) => {
    await writeFile(path.join(dir, file), text);
    return lockedVersion(dir);
  };

  it.each([
    [
      'package-lock.json',
      '7.9.1',
      JSON.stringify({
        lockfileVersion: 3,
        packages: { '': { name: 'shop' }, 'node_modules/node-pg-migrate': { version: '7.9.1' } },
      }),
    ],
    [
      'package-lock.json',
      '6.2.2',
      JSON.stringify({ lockfileVersion: 1, dependencies: { 'node-pg-migrate': { version: '6.2.2' } } }),
    ],
    [
      'npm-shrinkwrap.json',
      '8.0.3',
      JSON.stringify({ lockfileVersion: 2, packages: { 'node_modules/node-pg-migrate': { version: '8.0.3' } } }),
    ],
    [
      'pnpm-lock.yaml',
      '7.9.1',
      "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      node-pg-migrate:\n        specifier: ^7.9.0\n        version: 7.9.1(pg@8.13.1)\n",
    ],
    ['pnpm-lock.yaml', '6.2.2', 'lockfileVersion: 5.4\ndevDependencies:\n  node-pg-migrate: 6.2.2_pg@8.7.3\n'],
    [
      'yarn.lock',
      '7.9.1',
      '# yarn lockfile v1\n\n"node-pg-migrate@^7.0.0", node-pg-migrate@^7.9.0:\n  version "7.9.1"\n  resolved "https://registry.yarnpkg.com/node-pg-migrate/-/node-pg-migrate-7.9.1.tgz"\n',
    ],
    [
      'yarn.lock',
      '8.0.3',
      '__metadata:\n  version: 8\n\n"node-pg-migrate@npm:^8.0.0":\n  version: 8.0.3\n  resolution: "node-pg-migrate@npm:8.0.3"\n',
    ],
  ])('%s pins %s', async (file, version, text) => {
    expect(await pins(file, text)).toEqual({ version, lockfile: file });
  });

  it('pins nothing when the lockfile does not hold it, holds a range, or is not valid', async () => {
    expect(await lockedVersion(dir)).toBeUndefined();
    expect(
      await pins('package-lock.json', JSON.stringify({ packages: { 'node_modules/pg': { version: '8.13.1' } } })),
    ).toBeUndefined();
    expect(await pins('package-lock.json', '{ not json')).toBeUndefined();
    expect(await pins('yarn.lock', 'node-pg-migrate@latest:\n  version "latest; rm -rf /"\n')).toBeUndefined();
  });

  describe('in a monorepo, for the package that owns the migrations', () => {
    const db = () => ({ root: dir, dir: path.join(dir, 'packages/db') });
    const workspacesLock = (packages: Record<string, { version: string }>) =>
      JSON.stringify({
        lockfileVersion: 3,
        packages: { '': { name: 'mono', workspaces: ['packages/*'] }, ...packages },
      });

    it("a workspaces lockfile's entry under the package wins over the hoisted one", async () => {
      await mkdir(path.join(dir, 'packages/db'), { recursive: true });
      await writeFile(
        path.join(dir, 'package-lock.json'),
        workspacesLock({
          'node_modules/node-pg-migrate': { version: '9.0.0' },
          'packages/db/node_modules/node-pg-migrate': { version: '7.9.1' },
        }),
      );
      expect(await lockedVersion(db())).toEqual({ version: '7.9.1', lockfile: 'package-lock.json' });
      // The root's own migrations get the hoisted one, as before.
      expect(await lockedVersion(dir)).toEqual({ version: '9.0.0', lockfile: 'package-lock.json' });
    });

    it('the hoisted entry, when the package has none of its own', async () => {
      await mkdir(path.join(dir, 'packages/db'), { recursive: true });
      await writeFile(
        path.join(dir, 'package-lock.json'),
        workspacesLock({ 'node_modules/node-pg-migrate': { version: '8.0.3' } }),
      );
      expect(await lockedVersion(db())).toEqual({ version: '8.0.3', lockfile: 'package-lock.json' });
    });

    it("the package's own lockfile first, then the root's", async () => {
      await mkdir(path.join(dir, 'packages/db'), { recursive: true });
      await writeFile(
        path.join(dir, 'package-lock.json'),
        workspacesLock({ 'node_modules/node-pg-migrate': { version: '9.0.0' } }),
      );
      await writeFile(
        path.join(dir, 'packages/db/package-lock.json'),
        JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/node-pg-migrate': { version: '7.9.1' } } }),
      );
      expect(await lockedVersion(db())).toEqual({ version: '7.9.1', lockfile: 'packages/db/package-lock.json' });
    });

    it("pnpm: the package's importer, not the root's", async () => {
      await mkdir(path.join(dir, 'packages/db'), { recursive: true });
      await writeFile(
        path.join(dir, 'pnpm-lock.yaml'),
        "lockfileVersion: '9.0'\nimporters:\n  .:\n    devDependencies:\n      node-pg-migrate:\n        specifier: ^9.0.0\n        version: 9.0.0\n  packages/db:\n    dependencies:\n      node-pg-migrate:\n        specifier: 7.9.1\n        version: 7.9.1(pg@8.13.1)\n",
      );
      expect(await lockedVersion(db())).toEqual({ version: '7.9.1', lockfile: 'pnpm-lock.yaml' });
      expect(await lockedVersion({ root: dir, dir: path.join(dir, 'packages/web') })).toBeUndefined();
    });

    it.each([
      [
        'classic',
        '# yarn lockfile v1\n\nnode-pg-migrate@^6.2.2:\n  version "6.2.2"\n  dependencies:\n    yargs "~17.3.0"\n\n"node-pg-migrate@^7.0.0", node-pg-migrate@^7.9.0:\n  version "7.9.1"\n',
      ],
      [
        'berry',
        '__metadata:\n  version: 8\n\n"node-pg-migrate@npm:^6.2.2":\n  version: 6.2.2\n\n"node-pg-migrate@npm:^7.0.0, node-pg-migrate@npm:^7.9.0":\n  version: 7.9.1\n',
      ],
    ])("yarn (%s): the entry for the range the package declares, not the lockfile's first", async (_kind, lock) => {
      await mkdir(path.join(dir, 'packages/db'), { recursive: true });
      await mkdir(path.join(dir, 'packages/web'), { recursive: true });
      await writeFile(path.join(dir, 'yarn.lock'), lock);
      await writeFile(
        path.join(dir, 'packages/db/package.json'),
        JSON.stringify({ name: 'db', devDependencies: { 'node-pg-migrate': '^7.0.0' } }),
      );
      await writeFile(
        path.join(dir, 'packages/web/package.json'),
        JSON.stringify({ name: 'web', dependencies: { 'node-pg-migrate': '^6.2.2' } }),
      );
      expect(await lockedVersion(db())).toEqual({ version: '7.9.1', lockfile: 'yarn.lock' });
      expect(await lockedVersion({ root: dir, dir: path.join(dir, 'packages/web') })).toEqual({
        version: '6.2.2',
        lockfile: 'yarn.lock',
      });
      // A package that declares none: the first entry, as before.
      expect(await lockedVersion(dir)).toEqual({ version: '6.2.2', lockfile: 'yarn.lock' });
    });
  });
});

describe('a project whose lockfile pins a node-pg-migrate it has not installed', () => {
  // The cache lives under Consort's node_modules, so the installed copy's own imports (jiti, glob,
  // yargs) resolve as they would inside the real install's prefix. npm is a stand-in first on PATH
  // that records its arguments and lays out the bundled package under the asked-for version:
  // nothing is downloaded.
  let scratch: string;
  let env: NodeJS.ProcessEnv;
  let npmLog: string;
  let project: string;
  beforeAll(async () => {
    scratch = path.join(process.cwd(), 'node_modules/.cache', `consort-engine-pin-${randomBytes(4).toString('hex')}`);
    // The project outside Consort's tree: from there node-pg-migrate does not resolve at all.
    project = await mkdtemp(path.join(tmpdir(), 'consort-locked-shop-'));
    npmLog = path.join(scratch, 'npm.log');
    await mkdir(path.join(scratch, 'bin'), { recursive: true });
    await writeFile(
      path.join(scratch, 'bin/npm'),
      `#!${process.execPath}
const fs = require('fs'), path = require('path');
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(npmLog)}, JSON.stringify(args) + '\\n');
const prefix = args[args.indexOf('--prefix') + 1];
const version = args.at(-1).replace(/^node-pg-migrate@/, '');
const dest = path.join(prefix, 'node_modules/node-pg-migrate');
fs.cpSync(${JSON.stringify(BUNDLED_DIR)}, dest, { recursive: true });
const pkg = JSON.parse(fs.readFileSync(path.join(dest, 'package.json'), 'utf8'));
fs.writeFileSync(path.join(dest, 'package.json'), JSON.stringify({ ...pkg, version }));
`,
    );
    await chmod(path.join(scratch, 'bin/npm'), 0o755);
    await mkdir(path.join(project, 'migrations'), { recursive: true });
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({
        name: 'shop',
        private: true,
        type: 'commonjs',
        dependencies: { 'node-pg-migrate': '^9.0.0-lock' },
      }),
    );
    await writeFile(
      path.join(project, 'package-lock.json'),
      JSON.stringify({
        lockfileVersion: 3,
        packages: { '': { name: 'shop' }, 'node_modules/node-pg-migrate': { version: '9.0.0-lock.1' } },
      }),
    );
    await writeFile(
      path.join(project, 'migrations/1700000000000_orders.js'),
      "exports.up = (pgm) => { pgm.createTable('orders', { id: 'id' }); };\n",
    );
    env = {
      PATH: `${path.join(scratch, 'bin')}${path.delimiter}${process.env.PATH}`,
      HOME: process.env.HOME,
      CONSORT_TOOLS_DIR: path.join(scratch, 'tools'),
    };
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
    await rm(project, { recursive: true, force: true });
  });

  it('installs that exact version once into the cache, runs it and says so', async () => {
    const log: string[] = [];
    const engine = await resolveEngine(project, { env, log: (l) => log.push(l) });
    const dir = path.join(engineCacheDir('9.0.0-lock.1', env), 'node_modules/node-pg-migrate');
    expect(engine).toMatchObject({ source: 'lockfile', version: '9.0.0-lock.1', dir });
    expect(describeEngine(engine)).toBe("node-pg-migrate 9.0.0-lock.1 (the version the project's lockfile pins)");
    expect(log).toEqual([
      expect.stringContaining(
        `Installing node-pg-migrate@9.0.0-lock.1, the version the project's lockfile pins, into ${engineCacheDir('9.0.0-lock.1', env)}`,
      ),
    ]);
    const calls = (await readFile(npmLog, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as string[]);
    expect(calls).toEqual([
      [
        'install',
        ...NPM_INSTALL_FLAGS,
        '--prefix',
        engineCacheDir('9.0.0-lock.1', env),
        'node-pg-migrate@9.0.0-lock.1',
      ],
    ]);

    // From the cache next time: npm is not asked again, and the cached copy applies migrations.
    const again = await resolveEngine(project, { env });
    expect(again).toMatchObject({ source: 'lockfile', dir });
    expect((await readFile(npmLog, 'utf8')).trim().split('\n')).toHaveLength(1);
    await upInFreshDatabase(project, again, async (r) => {
      expect(r).toMatchObject({ ok: true, applied: [{ name: '1700000000000_orders' }] });
    });
  });

  it("in a monorepo, installs the version the root's workspaces lockfile pins for the package owning migrations.dir", async () => {
    // Outside Consort's tree, as the project above: from there node-pg-migrate does not resolve.
    const mono = await mkdtemp(path.join(tmpdir(), 'consort-locked-mono-'));
    await mkdir(path.join(mono, 'packages/db/migrations'), { recursive: true });
    await writeFile(path.join(mono, 'packages/db/package.json'), JSON.stringify({ name: 'db', private: true }));
    await writeFile(
      path.join(mono, 'package-lock.json'),
      JSON.stringify({
        lockfileVersion: 3,
        packages: {
          '': { name: 'mono', workspaces: ['packages/*'] },
          'packages/db/node_modules/node-pg-migrate': { version: '9.0.0-lock.2' },
        },
      }),
    );
    // From the root, nothing pins node-pg-migrate: the bundled one.
    expect(await resolveEngine(mono, { env })).toBe(await bundledEngine());
    try {
      const engine = await resolveEngine(mono, { migrationsDir: 'packages/db/migrations', env });
      expect(engine).toMatchObject({
        source: 'lockfile',
        version: '9.0.0-lock.2',
        dir: path.join(engineCacheDir('9.0.0-lock.2', env), 'node_modules/node-pg-migrate'),
      });
    } finally {
      await rm(mono, { recursive: true, force: true });
    }
  });

  it('uses the bundled one when the lockfile pins the bundled version (nothing to install)', async () => {
    const same = path.join(scratch, 'same');
    await mkdir(same, { recursive: true });
    await writeFile(
      path.join(same, 'package-lock.json'),
      JSON.stringify({ packages: { 'node_modules/node-pg-migrate': { version: (await bundledEngine()).version } } }),
    );
    // (Inside this repository its own node_modules is found first: Consort's copy, shared.)
    const mine = await bundledEngine();
    const engine = await resolveEngine(same, { env });
    expect(engine).toMatchObject({ source: 'bundled', version: mine.version, dir: mine.dir });
    expect(engine.runner).toBe(bundledRunner);
  });
});

describe("which node_modules is the project's", () => {
  // Copies of the bundled package under a marked version; inside Consort's tree so their own
  // imports resolve when loaded.
  let scratch: string;
  const install = async (at: string, version: string) => {
    const pkgDir = path.join(at, 'node_modules/node-pg-migrate');
    await mkdir(path.dirname(pkgDir), { recursive: true });
    await cp(BUNDLED_DIR, pkgDir, { recursive: true });
    const pkg = JSON.parse(await readFile(path.join(pkgDir, 'package.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(path.join(pkgDir, 'package.json'), JSON.stringify({ ...pkg, version }));
  };
  beforeAll(async () => {
    scratch = path.join(process.cwd(), 'node_modules/.cache', `consort-engine-where-${randomBytes(4).toString('hex')}`);
    await mkdir(scratch, { recursive: true });
  });
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it("a monorepo's hoisted install at the repository root is the project's", async () => {
    const mono = path.join(scratch, 'mono');
    await mkdir(path.join(mono, '.git'), { recursive: true });
    await install(mono, '9.0.0-hoisted.1');
    const pkg = path.join(mono, 'packages/db');
    await mkdir(pkg, { recursive: true });
    expect(await resolveEngine(pkg)).toMatchObject({ source: 'project', version: '9.0.0-hoisted.1' });
  });

  it("in a monorepo, the package owning migrations.dir: its own install first, else the root's hoisted one", async () => {
    const mono = path.join(scratch, 'mono-pkg');
    await mkdir(path.join(mono, '.git'), { recursive: true });
    await install(mono, '9.0.0-hoisted.1');
    const db = path.join(mono, 'packages/db');
    await mkdir(path.join(db, 'migrations'), { recursive: true });
    await writeFile(path.join(db, 'package.json'), JSON.stringify({ name: 'db', private: true }));
    await install(db, '7.9.1-db.1');
    await mkdir(path.join(mono, 'packages/web/migrations'), { recursive: true });
    await writeFile(path.join(mono, 'packages/web/package.json'), JSON.stringify({ name: 'web', private: true }));
    expect(await resolveEngine(mono, { migrationsDir: 'packages/db/migrations' })).toMatchObject({
      source: 'project',
      version: '7.9.1-db.1',
      dir: path.join(db, 'node_modules/node-pg-migrate'),
    });
    // Nested deeper (packages/db/sql/migrations) still belongs to packages/db.
    expect(await resolveEngine(mono, { migrationsDir: 'packages/db/sql/migrations' })).toMatchObject({
      version: '7.9.1-db.1',
    });
    expect(await resolveEngine(mono, { migrationsDir: 'packages/web/migrations' })).toMatchObject({
      source: 'project',
      version: '9.0.0-hoisted.1',
    });
    expect(await resolveEngine(mono, { migrationsDir: 'migrations' })).toMatchObject({ version: '9.0.0-hoisted.1' });
  });

  it('a node_modules above the repository (or above a checkout with no repository) is not', async () => {
    const outer = path.join(scratch, 'outer');
    await install(outer, '9.0.0-stray.1');
    const repo = path.join(outer, 'repo');
    await mkdir(path.join(repo, '.git'), { recursive: true });
    expect(await resolveEngine(repo)).toBe(await bundledEngine());
    // The App's tarball checkout in the temp directory: no .git anywhere above it.
    const tmp = await mkdtemp(path.join(tmpdir(), 'consort-app-root-'));
    try {
      await install(tmp, '9.0.0-stray.2');
      const checkout = path.join(tmp, 'consort-app-x1y2');
      await mkdir(checkout);
      expect(await resolveEngine(checkout)).toBe(await bundledEngine());
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});

describe('migrationsPackage: which package owns migrations.dir', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'consort-owner-'));
    await mkdir(path.join(root, 'packages/db/src/migrations'), { recursive: true });
    await writeFile(path.join(root, 'package.json'), '{}');
    await writeFile(path.join(root, 'packages/db/package.json'), '{}');
    await mkdir(path.join(root, 'db/migrations'), { recursive: true });
    // A marker package.json in the migrations folder itself (`"type"` for its files) owns nothing.
    await mkdir(path.join(root, 'marked/migrations'), { recursive: true });
    await writeFile(path.join(root, 'marked/migrations/package.json'), '{"type":"commonjs"}');
    await mkdir(path.join(root, 'packages/db/marked'), { recursive: true });
    await writeFile(path.join(root, 'packages/db/marked/package.json'), '{"type":"commonjs"}');
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it.each([
    ['packages/db/src/migrations', 'packages/db'],
    ['packages/db/migrations', 'packages/db'],
    ['./packages/db/migrations/', 'packages/db'],
    ['db/migrations', '.'],
    ['marked/migrations', '.'],
    ['packages/db/marked', 'packages/db'],
    ['migrations', '.'],
    ['.', '.'],
    ['../elsewhere/migrations', '.'],
  ])('%s belongs to %s', async (dir, owner) => {
    expect(await migrationsPackage(root, dir)).toEqual({ root, dir: path.join(root, owner) });
  });

  it('never a package.json above the root', async () => {
    const inner = path.join(root, 'packages/db/src');
    expect(await migrationsPackage(inner, 'migrations')).toEqual({ root: inner, dir: inner });
  });
});

describe("a project's node-pg-migrate 3 or 4", () => {
  // Stands in for the real 3.x/4.x (not downloaded): like them, it uses `dbClient` only when it is
  // an instance of the Client of its own copy of pg (anything else is a configuration, and a client
  // of its own takes over the given one's socket), and logs through `log` alone, as 3 does. Past
  // that it runs node-pg-migrate 7. Both happen on the real 3.18.1 and 4.8.0 with Node 22.
  let project: string;
  beforeAll(async () => {
    project = path.join(process.cwd(), 'node_modules/.cache', `consort-engine-old-${randomBytes(4).toString('hex')}`);
    const pkgDir = path.join(project, 'node_modules/node-pg-migrate');
    await mkdir(pkgDir, { recursive: true });
    // A pg of the project's own: another module, another Client class than Consort's.
    await cp(path.join(process.cwd(), 'node_modules/pg'), path.join(project, 'node_modules/pg'), { recursive: true });
    await writeFile(
      path.join(pkgDir, 'package.json'),
      JSON.stringify({ name: 'node-pg-migrate', version: '4.8.0', main: 'index.js' }),
    );
    await writeFile(
      path.join(pkgDir, 'index.js'),
      `const pg = require('pg');
const later = require('node-pg-migrate-7');
exports.default = async (options) => {
  const external = options.dbClient instanceof pg.Client;
  const client = external ? options.dbClient : new pg.Client(options.dbClient);
  if (!external) await client.connect();
  const log = typeof options.log === 'function' ? options.log : () => undefined;
  return later.default({ ...options, dbClient: client, logger: { debug: log, info: log, warn: log, error: log } });
};
`,
    );
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'shop', private: true, dependencies: { 'node-pg-migrate': '4.8.0' } }),
    );
    await mkdir(path.join(project, 'migrations'));
    await writeFile(
      path.join(project, 'migrations/1600000000000_orders.js'),
      "exports.up = (pgm) => { pgm.createTable('orders', { id: 'id', email: { type: 'text', notNull: true } }); pgm.createIndex('orders', 'email'); };\n",
    );
  });
  afterAll(async () => {
    await rm(project, { recursive: true, force: true });
  });

  it('applies with it on the connection Consort gives it, and the capture sees its statements', async () => {
    const engine = await resolveEngine(project);
    expect(engine).toMatchObject({ source: 'project', version: '4.8.0' });
    await upInFreshDatabase(project, engine, async (r) => {
      // Before: "Lost the database connection while applying migrations: invalid frontend message type 0".
      expect(r.ok).toBe(true);
      // And with 3's `log`: the statements are the migration's, for lint and the report.
      expect(r.applied).toEqual([
        expect.objectContaining({
          name: '1600000000000_orders',
          sql: expect.arrayContaining([expect.stringMatching(/^CREATE INDEX/)]) as unknown,
        }),
      ]);
    });
  });
});
