/**
 * The pairing service on real servers (embedded PostgreSQL 18 and the server at 127.0.0.1:5432):
 * created on first use with migrations and seed, reused (never recreated) afterwards, forked from
 * the branch the git branch came from, URL published to .env and the hook's cache.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseConfigText } from '../../src/config/load.js';
import { readCache } from '../../src/pairing/state.js';
import { describePairing, pairAndPublish } from '../../src/pairing/run.js';
import { pair } from '../../src/pairing/service.js';
import { pairedSchemaDiff } from '../../src/pairing/diff.js';
import { renderSchemaDiffText } from '../../src/schema/render.js';
import { fakeProjectEngine } from '../helpers/fake-engine.js';
import { localTestProvider, postgresTestProvider, query, type TestProvider } from '../helpers/servers.js';

async function gitRepo(): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'consort-pair-'));
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
  await mkdir(path.join(root, 'migrations'));
  await writeFile(
    path.join(root, 'migrations', '001_items.sql'),
    '-- Up Migration\nCREATE TABLE items (id serial PRIMARY KEY, label text NOT NULL);\n-- Down Migration\nDROP TABLE items;\n',
  );
  await writeFile(path.join(root, 'seed.sql'), "INSERT INTO items (label) VALUES ('seeded');\n");
  await writeFile(path.join(root, '.gitignore'), '.env\n');
  return root;
}

const config = parseConfigText('database:\n  seed:\n    file: seed.sql\n', 'consort.yml');

describe.each([
  ['local (embedded PostgreSQL 18)', localTestProvider],
  ['postgres (127.0.0.1:5432)', postgresTestProvider],
])('pairing on %s', (_label, open) => {
  let t: TestProvider;
  let root: string;
  beforeAll(async () => {
    [t, root] = await Promise.all([open(), gitRepo()]);
  }, 120_000);
  afterAll(async () => {
    await t?.cleanup();
    await rm(root, { recursive: true, force: true });
  });
  const request = (gitBranch: string, from?: string) => ({
    provider: t.provider,
    config,
    root,
    gitBranch,
    env: { PATH: process.env.PATH ?? '' },
    ...(from ? { from } : {}),
  });

  it('creates the paired branch on first use with migrations and seed, and reuses it (with its data) afterwards', async () => {
    const first = await pair(request('feature/Login'));
    expect(first).toMatchObject({
      outcome: 'created',
      seeded: true,
      migrations: { applied: ['001_items'], failed: null },
    });
    expect(first.branch).toMatchObject({ name: 'feature-login', parent: 'main', gitBranch: 'feature/Login' });
    expect(await query(first.url, 'SELECT label FROM items')).toEqual([{ label: 'seeded' }]);
    expect((await query(first.url, 'SELECT current_database() AS db'))[0]!.db).toBe(first.branch.database);

    await query(first.url, "INSERT INTO items (label) VALUES ('made on the branch')");
    const again = await pair(request('feature/Login'));
    expect(again).toMatchObject({ outcome: 'reused', seeded: false, migrations: { applied: [], failed: null } });
    expect(again.branch.database).toBe(first.branch.database);
    expect(again.branch.createdAt).toEqual(first.branch.createdAt);
    expect(await query(again.url, 'SELECT label FROM items ORDER BY id')).toEqual([
      { label: 'seeded' },
      { label: 'made on the branch' },
    ]);
  });

  it('forks a new git branch from the database branch of the git branch it was created from, without seeding twice', async () => {
    const child = await pair(request('feature/login-2fa', 'feature/Login'));
    expect(child).toMatchObject({ outcome: 'created', seeded: false });
    expect(child.branch.parent).toBe('feature-login');
    expect(await query(child.url, 'SELECT label FROM items ORDER BY id')).toEqual([
      { label: 'seeded' },
      { label: 'made on the branch' },
    ]);
  });

  it('pairs root git branches with database.parent itself, and applies migrations that arrive later (as after a pull)', async () => {
    const main = await pair(request('main'));
    expect(main).toMatchObject({ outcome: 'root', seeded: false, migrations: { applied: ['001_items'] } });
    expect(main.branch.name).toBe('main');
    await writeFile(
      path.join(root, 'migrations', '002_tags.sql'),
      '-- Up Migration\nCREATE TABLE tags (id int);\n-- Down Migration\nDROP TABLE tags;\n',
    );
    try {
      const login = await pair(request('feature/Login'));
      expect(login).toMatchObject({ outcome: 'reused', migrations: { applied: ['002_tags'], failed: null } });
      expect(await query(login.url, "SELECT to_regclass('tags') IS NOT NULL AS present")).toEqual([{ present: true }]);
    } finally {
      await rm(path.join(root, 'migrations', '002_tags.sql'));
    }
  });

  it('pair diff tells a renamed column from a drop and an add (one server: its OIDs are unique)', async () => {
    const r = await pair(request('feature/rename'));
    expect(r.branch.parent).toBe('main');
    await query(r.url, 'ALTER TABLE items RENAME COLUMN label TO title');
    const d = await pairedSchemaDiff(t.provider, config, 'feature/rename');
    expect(renderSchemaDiffText(d.diff)).toBe('~ column public.items.title: renamed from label');
  });

  it('says so when migrations.dir names no folder, rather than pairing in silence', async () => {
    const elsewhere = parseConfigText('migrations:\n  dir: db/migrations\n', 'consort.yml');
    const r = await pair({ ...request('feature/no-folder'), config: elsewhere });
    expect(r.migrations).toMatchObject({
      applied: [],
      failed: null,
      skipped: 'there is no migrations folder db/migrations (migrations.dir in the Consort configuration)',
    });
    expect(
      describePairing({
        result: r,
        env: { file: '.env', key: 'DATABASE_URL', status: 'skipped', ignored: true, warning: null },
      }),
    ).toContain('migrations not applied (there is no migrations folder db/migrations');
    expect((await pair(request('feature/no-folder'))).migrations.skipped).toBeNull();
  });

  it('reports a failing migration instead of throwing, and keeps the pairing', async () => {
    await writeFile(
      path.join(root, 'migrations', '003_bad.sql'),
      '-- Up Migration\nALTER TABLE nowhere ADD COLUMN x int;\n',
    );
    try {
      const r = await pair(request('fix/broken'));
      expect(r.outcome).toBe('created');
      expect(r.migrations.failed).toMatchObject({ name: '003_bad', message: expect.stringMatching(/nowhere/) });
      expect((await t.provider.get(r.branch.name))?.gitBranch).toBe('fix/broken');
    } finally {
      await rm(path.join(root, 'migrations', '003_bad.sql'));
    }
  });

  it("applies a JS migration with the project's settings from the environment, never a credential or another database's URL", async () => {
    // A migration whose import reads its settings when it loads, as a project's config module does.
    await writeFile(
      path.join(root, 'migrations', '004_region.js'),
      `const region = process.env.APP_REGION;
if (!region) throw new Error('APP_REGION is not set');
exports.up = (pgm) => {
  pgm.createTable('region_' + region, { id: 'id' });
  pgm.sql(\`COMMENT ON TABLE region_\${region} IS '\${[process.env.DEPLOY_TOKEN, process.env.DATABASE_URL].join('|')}'\`);
};
exports.down = false;
`,
    );
    try {
      const r = await pair({
        ...request('feature/region'),
        env: {
          PATH: process.env.PATH ?? '',
          APP_REGION: 'eu',
          DEPLOY_TOKEN: 'secret',
          DATABASE_URL: 'postgres://elsewhere/db',
        },
      });
      expect(r.migrations.failed).toBeNull();
      expect(r.migrations.applied).toContain('004_region');
      const [row] = await query<{ c: string }>(
        t.provider.connectionUri ? await t.provider.connectionUri(r.branch.name) : '',
        "SELECT obj_description('region_eu'::regclass) AS c",
      );
      expect(row?.c).toBe('|');
    } finally {
      await rm(path.join(root, 'migrations', '004_region.js'));
    }
  });

  it('publishes the URL to the configured dotenv file and the hook cache', async () => {
    const custom = parseConfigText('pairing:\n  envFile: config/.env.local\n  envKey: APP_DB\n', 'consort.yml');
    await mkdir(path.join(root, 'config'), { recursive: true });
    await writeFile(path.join(root, 'config', '.env.local'), 'KEEP=1\n');
    const env =
      t.namespace === 'local'
        ? { CONSORT_DATA_DIR: t.dataDir }
        : { CONSORT_POSTGRES_URL: t.adminUrl, CONSORT_NAMESPACE: t.namespace };
    const done = await pairAndPublish({
      root,
      config: custom,
      env: { PATH: process.env.PATH ?? '', ...env },
      gitBranch: 'feature/Login',
      choice: { provider: t.namespace === 'local' ? 'local' : 'postgres' },
    });
    expect(done.result).toMatchObject({ outcome: 'reused' });
    expect(done.env).toMatchObject({
      file: 'config/.env.local',
      key: 'APP_DB',
      status: 'written',
      ignored: false,
      warning: expect.stringMatching(/not git-ignored/),
    });
    expect(await readFile(path.join(root, 'config', '.env.local'), 'utf8')).toBe(`KEEP=1\nAPP_DB=${done.result.url}\n`);
    const cache = await readCache(path.join(root, '.git'));
    expect(cache).toMatchObject({
      envFile: 'config/.env.local',
      envKey: 'APP_DB',
      branches: { 'feature/Login': { name: 'feature-login', url: done.result.url } },
    });
  });
});

describe("pairing applies with the project's own node-pg-migrate", () => {
  let t: TestProvider;
  let root: string;
  beforeAll(async () => {
    [t, root] = await Promise.all([localTestProvider(), gitRepo()]);
  }, 120_000);
  afterAll(async () => {
    await t?.cleanup();
    await rm(root, { recursive: true, force: true });
  });

  it('uses the version the project installed, not the bundled one, and says which', async () => {
    const engine = await fakeProjectEngine(root, '7.9.1-project');
    const r = await pair({
      provider: t.provider,
      config,
      root,
      gitBranch: 'feature/x',
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(await engine.uses()).toEqual([`up ${path.join(root, 'migrations')}`]);
    expect(r.migrations).toMatchObject({
      applied: ['001_items'],
      failed: null,
      nodePgMigrate: { version: '7.9.1-project', source: 'project' },
    });
    expect(
      describePairing({
        result: r,
        env: { status: 'skipped', file: '.env', key: 'DATABASE_URL', ignored: true, warning: null },
      }),
    ).toContain("applied 001_items with node-pg-migrate 7.9.1-project (the project's)");
  });
});
