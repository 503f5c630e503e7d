/**
 * Leases on the run's shared embedded server: a lease is a pooled branch of a template, returned by
 * name or URL; a run's teardown returns its own, expiry returns a crashed holder's; the run's setup
 * builds the template once per migration state and keeps its pool filled while workers take from it.
 */
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { TemplateBranchProvider } from '../../src/branches/template-provider.js';
import { isLeaseName, leaseBranch, leaseForUrl, releaseBranch, sweepLeases } from '../../src/isolation/lease.js';
import { Leaser, leaseForFile, parseRunSpec, startTestDatabases } from '../../src/isolation/run.js';
import { prepareTestTemplate } from '../../src/isolation/template.js';
import { loadConfig } from '../../src/config/load.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/isolation-project', import.meta.url));

let t: TestProvider;
let p: TemplateBranchProvider;
let project: string;

beforeAll(async () => {
  t = await localTestProvider();
  p = t.provider;
  project = await mkdtemp(path.join(os.tmpdir(), 'consort-lease-'));
  await cp(FIXTURE, project, { recursive: true });
});
afterAll(async () => {
  await p?.settled();
  await t?.cleanup();
  if (project) await rm(project, { recursive: true, force: true });
});

async function poolReady(template: string, wanted: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await p.poolStatus(template))[0]?.ready === wanted) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the pool of ${template} never got back to ${wanted} ready copies`);
}

async function gone(name: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await p.get(name)) === undefined) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} was given back but never dropped`);
}

describe('the test template', () => {
  it('is the parent with the migrations applied and the seed loaded, built once per migration state', async () => {
    const first = await prepareTestTemplate(p, { root: project, poolSize: 2, env: {} });
    expect(first).toMatchObject({ reused: false, pool: { size: 2, ready: 2 } });
    expect(first.name).toMatch(/^tests-[0-9a-f]{12}$/);
    expect(await query(await p.connectionUri(first.name), 'SELECT body FROM notes ORDER BY id')).toEqual([
      { body: 'seeded one' },
      { body: 'seeded two' },
    ]);
    expect((await prepareTestTemplate(p, { root: project, poolSize: 2, env: {} })).reused).toBe(true);

    // A new migration is a new template; the old one (no lease out) goes.
    await writeFile(
      path.join(project, 'migrations', '1730000100000_add_tag.sql'),
      '-- Up Migration\nALTER TABLE notes ADD COLUMN tag text;\n-- Down Migration\nALTER TABLE notes DROP COLUMN tag;\n',
    );
    try {
      const second = await prepareTestTemplate(p, { root: project, poolSize: 1, env: {} });
      expect(second).toMatchObject({ reused: false, removed: [first.name] });
      expect(
        await query(
          await p.connectionUri(second.name),
          "SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'notes' AND column_name = 'tag'",
        ),
      ).toEqual([{ n: 1 }]);
      expect(await p.get(first.name)).toBeUndefined();
      await p.delete(second.name);
    } finally {
      await rm(path.join(project, 'migrations', '1730000100000_add_tag.sql'));
    }
  });

  /** The labels of the `note_kind` enum on the branch `name`. */
  const noteKinds = async (name: string) =>
    (
      await query<{ l: string }>(await p.connectionUri(name), 'SELECT unnest(enum_range(NULL::note_kind))::text AS l')
    ).map((r) => r.l);

  it('is another template when only a file a migration imports changed (an enum built from the app)', async () => {
    const migration = path.join(project, 'migrations', '1730000200000_kinds.js');
    const kinds = path.join(project, 'src', 'kinds.js');
    await mkdir(path.dirname(kinds), { recursive: true });
    await writeFile(kinds, "module.exports = ['draft', 'final'];\n");
    await writeFile(
      migration,
      "const kinds = require('../src/kinds.js');\nexports.up = (pgm) => pgm.createType('note_kind', kinds);\nexports.down = (pgm) => pgm.dropType('note_kind');\n",
    );
    try {
      const first = await prepareTestTemplate(p, { root: project, poolSize: 0, env: {} });
      expect(await noteKinds(first.name)).toEqual(['draft', 'final']);
      await writeFile(kinds, "module.exports = ['draft', 'final', 'archived'];\n");
      const second = await prepareTestTemplate(p, { root: project, poolSize: 0, env: {} });
      expect(second.name).not.toBe(first.name);
      expect(await noteKinds(second.name)).toEqual(['draft', 'final', 'archived']);
      await p.delete(second.name);
    } finally {
      await rm(migration);
      await rm(path.join(project, 'src'), { recursive: true, force: true });
    }
  });

  it('is another template when only a workspace package a migration imports changed (@notes/kinds)', async () => {
    const migration = path.join(project, 'migrations', '1730000200000_kinds.js');
    const pkg = path.join(project, 'packages', 'kinds');
    await mkdir(pkg, { recursive: true });
    await writeFile(path.join(pkg, 'package.json'), '{ "name": "@notes/kinds", "main": "index.js" }\n');
    await writeFile(path.join(pkg, 'index.js'), "module.exports = ['draft', 'final'];\n");
    // What npm workspaces install: a link into the repository.
    await mkdir(path.join(project, 'node_modules', '@notes'), { recursive: true });
    await symlink('../../packages/kinds', path.join(project, 'node_modules', '@notes', 'kinds'), 'dir');
    await writeFile(
      migration,
      "const kinds = require('@notes/kinds');\nexports.up = (pgm) => pgm.createType('note_kind', kinds);\nexports.down = (pgm) => pgm.dropType('note_kind');\n",
    );
    try {
      const first = await prepareTestTemplate(p, { root: project, poolSize: 0, env: {} });
      expect(await noteKinds(first.name)).toEqual(['draft', 'final']);
      await writeFile(path.join(pkg, 'index.js'), "module.exports = ['draft', 'final', 'archived'];\n");
      const second = await prepareTestTemplate(p, { root: project, poolSize: 0, env: {} });
      expect(second.name).not.toBe(first.name);
      expect(await noteKinds(second.name)).toEqual(['draft', 'final', 'archived']);
      await p.delete(second.name);
    } finally {
      await rm(migration);
      await rm(path.join(project, 'packages'), { recursive: true, force: true });
      await rm(path.join(project, 'node_modules', '@notes'), { recursive: true, force: true });
    }
  });

  it('is another template when only the .env a migration reads its settings from changed', async () => {
    const migration = path.join(project, 'migrations', '1730000200000_kinds.js');
    const manifest = path.join(project, 'package.json');
    const before = await readFile(manifest, 'utf8');
    // node-pg-migrate's CLI loads .env where the project has dotenv.
    await writeFile(manifest, JSON.stringify({ ...JSON.parse(before), devDependencies: { dotenv: '^16.4.5' } }));
    await writeFile(path.join(project, '.env'), 'NOTE_KINDS=draft,final\n');
    await writeFile(
      migration,
      "exports.up = (pgm) => pgm.createType('note_kind', process.env.NOTE_KINDS.split(','));\nexports.down = (pgm) => pgm.dropType('note_kind');\n",
    );
    try {
      const first = await prepareTestTemplate(p, { root: project, poolSize: 0, env: {} });
      expect(await noteKinds(first.name)).toEqual(['draft', 'final']);
      await writeFile(path.join(project, '.env'), 'NOTE_KINDS=draft,final,archived\n');
      const second = await prepareTestTemplate(p, { root: project, poolSize: 0, env: {} });
      expect(second.name).not.toBe(first.name);
      expect(await noteKinds(second.name)).toEqual(['draft', 'final', 'archived']);
      await p.delete(second.name);
    } finally {
      await rm(migration);
      await rm(path.join(project, '.env'));
      await writeFile(manifest, before);
    }
  });

  it("applies the migrations where node-pg-migrate's schema settings say, as a template of its own", async () => {
    const { config } = await loadConfig(project);
    // The fixture's seed names `notes` unqualified, for public: left out here.
    const { seed: _seed, ...database } = config.database;
    const settings = { schema: ['app'], createSchema: true, migrationsSchema: 'meta', createMigrationsSchema: true };
    const inApp = { ...config, database, migrations: { ...config.migrations, ...settings } };
    const plain = { ...config, database };
    const template = await prepareTestTemplate(p, { root: project, config: inApp, poolSize: 0, env: {} });
    try {
      expect(template.reused).toBe(false);
      const url = await p.connectionUri(template.name);
      expect(
        await query(
          url,
          `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
            WHERE table_schema IN ('app', 'meta', 'public') ORDER BY 1`,
        ),
      ).toEqual([{ name: 'app.notes' }, { name: 'meta.pgmigrations' }]);
      expect(await query(url, 'SELECT name FROM meta.pgmigrations')).toEqual([{ name: '1730000000000_create_notes' }]);
      // The same migrations in public are another template.
      const other = await prepareTestTemplate(p, { root: project, config: plain, poolSize: 0, env: {} });
      expect(other.name).not.toBe(template.name);
      await p.delete(other.name);
    } finally {
      if (await p.get(template.name)) await p.delete(template.name);
    }
  });
});

describe('leases', () => {
  let template: string;
  beforeAll(async () => {
    template = (await prepareTestTemplate(p, { root: project, poolSize: 2, env: {} })).name;
  });
  afterEach(async () => {
    await p.settled();
  });

  it('hands out a pooled branch of the template and takes it back by name or by URL', async () => {
    const a = await leaseBranch(p, { template, run: 'r1' });
    expect(a).toMatchObject({ template, pooled: true });
    expect(isLeaseName(a.name)).toBe(true);
    expect(a.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect(await query(a.url, 'SELECT count(*)::int AS n FROM notes')).toEqual([{ n: 2 }]);

    // A session the holder left open does not stop the return.
    const held = new pg.Client({ connectionString: a.url });
    held.on('error', () => undefined);
    await held.connect();
    expect(await leaseForUrl(p, a.url)).toBe(a.name);
    await releaseBranch(p, a.name);
    await held.end().catch(() => undefined);
    expect(await p.get(a.name)).toBeUndefined();
    expect(await leaseForUrl(p, a.url)).toBeUndefined();
  });

  it("says why a lease was copied when the template's pool could not hand one out", async () => {
    // The template changes after its copies were made: they are of an older state of it.
    await query(await p.connectionUri(template), "INSERT INTO notes (body) VALUES ('later')");
    const lease = await leaseBranch(p, { template, run: 'r2' });
    expect(lease).toMatchObject({ pooled: false, poolMiss: 'stale' });
    expect(await query(lease.url, 'SELECT count(*)::int AS n FROM notes')).toEqual([{ n: 3 }]);
    await releaseBranch(p, lease.name);
    await query(await p.connectionUri(template), "DELETE FROM notes WHERE body = 'later'");
  });

  it('refuses to release a branch that is not a lease', async () => {
    await expect(releaseBranch(p, template)).rejects.toMatchObject({ code: 'invalid-input' });
    expect(await p.get(template)).toBeDefined();
  });

  it("a run's sweep returns that run's leases only; without a run, only the expired ones", async () => {
    const mine = await leaseBranch(p, { template, run: 'mine' });
    const other = await leaseBranch(p, { template, run: 'other' });
    const expired = await leaseBranch(p, { template, run: 'dead', ttlMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    expect(await sweepLeases(p, { run: 'mine' })).toEqual([mine.name]);
    expect(await sweepLeases(p)).toEqual([expired.name]);
    expect((await p.list()).map((b) => b.name).filter(isLeaseName)).toEqual([other.name]);
    await releaseBranch(p, other.name);
  });
});

describe('a test run', () => {
  it('prepares the template, hands workers a spec, refills the pool as they take from it and returns what they leave', async () => {
    const snapshot = await p.snapshot();
    // The postgres provider on the shared server, in this file's namespace: what the tests' own runs use.
    const env = {
      CONSORT_PROVIDER: 'postgres',
      CONSORT_POSTGRES_URL: snapshot.adminUrl,
      CONSORT_NAMESPACE: t.namespace,
      CONSORT_POSTGRES_CLONE: snapshot.known.mode === 'clone' ? '1' : '0',
    };
    const run = await startTestDatabases({ root: project, poolSize: 2, processEnv: env });
    try {
      const spec = parseRunSpec(JSON.stringify(run.spec));
      expect(spec).toMatchObject({
        envName: 'DATABASE_URL',
        settings: { namespace: t.namespace, known: { mode: snapshot.known.mode } },
      });

      // Two files lease at once (the pool's two copies), one more copies; the run refills behind them.
      const files = await Promise.all([leaseForFile(spec), leaseForFile(spec), leaseForFile(spec)]);
      // (Each lease's way, so a failure says why a copy was made: the pool's miss reason.)
      const ways = files.map((f) => (f.lease.pooled ? 'pooled' : `copied (${f.lease.poolMiss ?? 'no pool'})`));
      expect(new Set(files.map((f) => f.lease.url)).size).toBe(3);
      if (ways.filter((w) => w === 'pooled').length < 2) {
        // Copies are judged by the template's statistics counters, and on the run's busy shared server
        // something may move them between the fill and the handouts (autovacuum analysing the
        // template's catalogs, a late statistics flush): the copies are stale, replaced, then handed out.
        expect(ways.filter((w) => w !== 'pooled')).toEqual(ways.filter((w) => w === 'copied (stale)'));
        await poolReady(spec.template, 2);
        const again = await leaseForFile(spec);
        expect(again.lease.pooled).toBe(true);
        await again.done();
      }
      // Otherwise at least two pooled (a refill in time may serve the third).
      await poolReady(spec.template, 2);

      // A file gives its lease back at once; the run drops it in the background.
      await files[0]!.done();
      await gone(files[0]!.lease.name);
      // A worker that died never gives its lease back: the run's stop expires it, with the ones given
      // back too late, and the next sweep (a run's setup, `branch lease`, gc, db stop) drops them.
      const worker = new Leaser(spec);
      const crashed = await worker.lease();
      await worker.close();
      await run.stop();
      const left = [...files.slice(1).map((x) => x.lease.name), crashed.name];
      for (const name of left) expect((await p.get(name))!.expiresAt!.getTime()).toBeLessThanOrEqual(Date.now());
      expect((await sweepLeases(p)).sort()).toEqual(left.sort());
      expect(await p.get(spec.template)).toBeDefined();
    } finally {
      await run.stop().catch(() => undefined);
    }
  });

  it('says what to do when respectExisting: false cannot open the server a set variable came from (a suite under consort check)', async () => {
    // Under `consort check` the suite sees an empty data directory (bubblewrap): jest used to show a
    // bare `EPERM: operation not permitted, chown '…/pgdata'`. Here the data directory cannot be made.
    const blocker = path.join(project, 'not-a-dir');
    await writeFile(blocker, '');
    const started = startTestDatabases({
      root: project,
      respectExisting: false,
      processEnv: { DATABASE_URL: 'postgresql://elsewhere/db', CONSORT_DATA_DIR: path.join(blocker, 'data') },
    });
    await expect(started).rejects.toThrow(
      /could not open the local provider to lease a database per file \(.+\)\. DATABASE_URL is already set: under `consort check` .* leave respectExisting on/,
    );
  });

  it('leaves a variable that is already set alone: every file shares that database', async () => {
    const run = await startTestDatabases({ root: project, processEnv: { DATABASE_URL: 'postgresql://elsewhere/db' } });
    expect(run.spec).toBeUndefined();
    await run.stop();
  });
});
