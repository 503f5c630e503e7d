/**
 * The TDD lane's forks of its baseline come from a warm pool of it (build.branchPool), filled in the
 * background, and the run leaves neither pool copies nor branches behind but the baseline itself —
 * also when it is killed outright: the pool is the run's, and goes once its process is gone.
 * With `branchPool: 0` every fork is a copy, as before pools.
 */
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import type { ConsortConfig } from '../../src/config/schema.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { nodePgMigrate } from '../../src/migrations/runner.js';
import type { BranchRecord } from '../../src/ports/branch-provider.js';
import type { MigrationRunner } from '../../src/ports/migration-runner.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { laneBranches } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const LANE_RUN = fileURLToPath(new URL('../fixtures/pools/lane-run.mjs', import.meta.url));
let t: TestProvider;
let repo: ScenarioRepo;
let config: ConsortConfig;
let baseCommit: string;
/** Every branch `create` made, as it reported it. */
const created: BranchRecord[] = [];
beforeAll(async () => {
  t = await localTestProvider();
  repo = await scenarioRepo(null);
  config = (await loadConfig(repo.dir)).config;
  baseCommit = (await exec('git', ['rev-parse', 'HEAD'], { cwd: repo.dir })).stdout.trim();
  const create = t.provider.create.bind(t.provider);
  t.provider.create = async (options) => {
    const made = await create(options);
    created.push(made);
    return made;
  };
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await t?.cleanup();
});
const leftovers = async () =>
  (await t.provider.list()).map((b) => b.name).filter((n) => n !== 'main' && !n.startsWith('baseline-'));
beforeEach(async () => {
  created.length = 0;
  // A test that failed half-way left its branches: they must not fail the next one's leftovers check.
  for (const name of await leftovers()) await t.provider.delete(name).catch(() => undefined);
});

/** Pool copies on the server, whatever the catalog says. */
async function poolDatabases(): Promise<string[]> {
  const rows = await query<{ datname: string }>(
    t.adminUrl,
    'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
    [`${t.namespace}_consort_pool_`],
  );
  return rows.map((r) => r.datname);
}

it('hands its forks out of a pool of the baseline, and drops the pool at the end of the run', async () => {
  const branches = await laneBranches({ provider: t.provider, dir: repo.dir, config: config, baseCommit });
  try {
    const baseline = await branches.baseline();
    expect(config.build.branchPool).toBe(2);
    await t.provider.settled(); // the background fill: two copies of the baseline
    expect(await t.provider.poolStatus(baseline)).toEqual([{ template: baseline, size: 2, ready: 2 }]);
    expect(await poolDatabases()).toHaveLength(2);

    // A turn's sandbox, a proof's branch forked ahead, and one forked when the proof needs it.
    const sandbox = await branches.sandbox('f001-sbx');
    expect(sandbox.migrations.ok).toBe(true);
    branches.prefork('f001-p1', 'proof');
    const early = await branches.fresh('f001-p1');
    await t.provider.settled();
    const late = await branches.fresh('f001-p2');
    // poolMiss says why a fork was copied instead (undefined when it came from the pool).
    expect(created.filter((b) => b.parent === baseline).map((b) => [b.name, b.pooled, b.poolMiss])).toEqual([
      ['f001-sbx', true, undefined],
      [branches.providerName('f001-p1'), true, undefined],
      [branches.providerName('f001-p2'), true, undefined],
    ]);
    expect(branches.forks()).toEqual({ made: 3, pooled: 3 });
    // A handout is the baseline as seeded, with the workspace's migrations applied.
    for (const { url } of [sandbox, early, late])
      expect(await query(url, 'SELECT count(*)::int AS n FROM customers')).toEqual([{ n: 300 }]);
    branches.drop('f001-p1');
    branches.drop('f001-p2');
  } finally {
    await branches.settle();
  }
  expect(await leftovers()).toEqual([]);
  expect(await t.provider.poolStatus()).toEqual([]);
  expect(await poolDatabases()).toEqual([]);
}, 120_000);

it('a migration the turn adds that sorts before one the fork ahead applied: forked again, every migration applied in order', async () => {
  // The turn's first migration is there when the proof's branch is forked ahead and migrated; while
  // it is migrated the agent adds another, named to run before it. Applied on top of the kept branch
  // it would run after it (node-pg-migrate refuses that order; a fresh fork runs both in order).
  const later = path.join(repo.dir, 'migrations', '1730000500000_add_customer_note.sql');
  const earlier = path.join(repo.dir, 'migrations', '1730000450000_add_customer_tag.sql');
  // Each makes the table only if it is not there: which one runs first decides its columns.
  const table = (column: string) =>
    `-- Up Migration\nCREATE TABLE IF NOT EXISTS customer_tags (id int, ${column} text);\n-- Down Migration\nDROP TABLE IF EXISTS customer_tags;\n`;
  await writeFile(later, table('later'));
  // Armed once the baseline is built: the agent writes while the proof's branch is migrated.
  let armed = false;
  const migrations: Pick<MigrationRunner, 'apply'> = {
    async apply(options) {
      const result = await nodePgMigrate.apply(options);
      if (armed) {
        armed = false;
        await writeFile(earlier, table('earlier'));
      }
      return result;
    },
  };
  const branches = await laneBranches({ provider: t.provider, dir: repo.dir, config, baseCommit, migrations });
  try {
    await branches.baseline();
    armed = true;
    const made = branches.forks().made;
    branches.prefork('f003-p2', 'proof');
    const proof = await branches.fresh('f003-p2');
    expect(proof.migrations).toMatchObject({ ok: true });
    expect(branches.forks().made - made).toBe(2);
    expect(
      await query(
        proof.url,
        "SELECT column_name AS c FROM information_schema.columns WHERE table_name = 'customer_tags' ORDER BY 1",
      ),
    ).toEqual([{ c: 'earlier' }, { c: 'id' }]);
    branches.drop('f003-p2');
  } finally {
    await branches.settle();
    await rm(later, { force: true });
    await rm(earlier, { force: true });
  }
  expect(await leftovers()).toEqual([]);
}, 120_000);

it.each([
  ['after the runner read them: the fork is kept and only the new one applied', 'after', 1],
  // The branch is migrated from a copy of the files read before: the runner never sees a file the
  // agent writes meanwhile, so the new one is applied at the proof either way.
  ['before the runner read them: the fork is kept and only the new one applied', 'before', 1],
])(
  "a proof's branch forked ahead while the turn adds a migration, %s",
  async (_what, when, forks) => {
    const file = path.join(repo.dir, 'migrations', '1730000400000_add_customer_note.sql');
    const add = () =>
      writeFile(
        file,
        '-- Up Migration\nALTER TABLE customers ADD COLUMN note text;\n-- Down Migration\nALTER TABLE customers DROP COLUMN note;\n',
      );
    let agent: Promise<void> | null = null;
    const migrations: Pick<MigrationRunner, 'apply'> = {
      async apply(options) {
        // The agent of the running turn writes its migration while the branch is being migrated.
        if (agent === null && when === 'before') await (agent = add());
        const result = await nodePgMigrate.apply(options);
        if (agent === null) await (agent = add());
        return result;
      },
    };
    const branches = await laneBranches({ provider: t.provider, dir: repo.dir, config, baseCommit, migrations });
    try {
      await branches.baseline();
      const made = branches.forks().made;
      branches.prefork('f003-p1', 'proof');
      const proof = await branches.fresh('f003-p1');
      expect(proof.migrations).toMatchObject({ ok: true });
      expect(branches.forks().made - made).toBe(forks);
      // Either way the branch holds every migration of the workspace, the new one once.
      expect(
        await query(proof.url, "SELECT count(*)::int AS n FROM information_schema.columns WHERE column_name = 'note'"),
      ).toEqual([{ n: 1 }]);
      branches.drop('f003-p1');
    } finally {
      await branches.settle();
      await rm(file, { force: true });
    }
    expect(await leftovers()).toEqual([]);
  },
  120_000,
);

it("a proof's branch forked ahead is not migrated ahead with a JS migration: what it imports may change before the proof", async () => {
  // GREEN's migration is code that imports the schema change from the project's source. In the
  // working tree (where the proof's branch is forked ahead) that module adds a column; the agent
  // then rewrites it to do nothing and commits that. The migration's bytes are the same in both
  // trees, so its hash matches; the proof must still see what the committed tree makes: no column.
  const migration = '1730000400000_add_customer_phone.cjs';
  const source =
    "const { change, undo } = require('../src/phone-schema.cjs');\nexports.up = (pgm) => change(pgm);\nexports.down = (pgm) => undo(pgm);\n";
  const committed = await mkdtemp(path.join(os.tmpdir(), 'consort-committed-'));
  await cp(path.join(repo.dir, 'migrations'), path.join(committed, 'migrations'), { recursive: true });
  await mkdir(path.join(committed, 'src'));
  await mkdir(path.join(repo.dir, 'src'), { recursive: true });
  for (const root of [repo.dir, committed]) await writeFile(path.join(root, 'migrations', migration), source);
  await writeFile(
    path.join(repo.dir, 'src', 'phone-schema.cjs'),
    "exports.change = (pgm) => pgm.addColumn('customers', { phone: 'text' });\nexports.undo = (pgm) => pgm.dropColumn('customers', 'phone');\n",
  );
  await writeFile(
    path.join(committed, 'src', 'phone-schema.cjs'),
    'exports.change = () => undefined;\nexports.undo = () => undefined;\n',
  );
  const branches = await laneBranches({ provider: t.provider, dir: repo.dir, config, baseCommit });
  try {
    await branches.baseline();
    branches.prefork('f004-p1', 'proof');
    const proof = await branches.fresh('f004-p1', committed);
    expect(proof.migrations).toMatchObject({ ok: true });
    expect(proof.migrations.applied.map((m) => m.name)).toEqual(['1730000400000_add_customer_phone']);
    expect(proof.migrations.log[0]).toMatch(
      /not migrated ahead: migrations\/1730000400000_add_customer_phone\.cjs is not plain SQL/,
    );
    expect(
      await query(proof.url, "SELECT count(*)::int AS n FROM information_schema.columns WHERE column_name = 'phone'"),
    ).toEqual([{ n: 0 }]);
    branches.drop('f004-p1');
  } finally {
    await branches.settle();
    await rm(path.join(repo.dir, 'migrations', migration), { force: true });
    await rm(path.join(repo.dir, 'src', 'phone-schema.cjs'), { force: true });
    await rm(committed, { recursive: true, force: true });
  }
  expect(await leftovers()).toEqual([]);
}, 120_000);

it('copies every fork when the pool is off (build.branchPool: 0)', async () => {
  const off = { ...config, build: { ...config.build, branchPool: 0 } };
  const branches = await laneBranches({ provider: t.provider, dir: repo.dir, config: off, baseCommit });
  try {
    const baseline = await branches.baseline();
    await branches.sandbox('f002-sbx');
    await branches.fresh('f002-p1');
    expect(created.filter((b) => b.parent === baseline).map((b) => b.pooled)).toEqual([false, false]);
    expect(await t.provider.poolStatus()).toEqual([]);
    expect(await poolDatabases()).toEqual([]);
    branches.drop('f002-p1');
  } finally {
    await branches.settle();
  }
  expect(await leftovers()).toEqual([]);
}, 120_000);

it('a run killed outright (SIGKILL) leaves its pool only until the next gc, or the next run adopts it', async () => {
  /** A run in a process of its own, up to the point its baseline's pool is full; then it waits. */
  async function startRun() {
    const settings = await t.provider.snapshot();
    const child = spawn(process.execPath, [LANE_RUN, JSON.stringify({ settings, workspace: repo.dir, baseCommit })], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const baseline = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve((JSON.parse(out) as { baseline: string }).baseline);
      });
      child.once('exit', (code) => reject(new Error(`the run exited (${code}) before its pool was full: ${err}`)));
    });
    return { child, exited, baseline };
  }
  const run = await startRun();
  const baseline = run.baseline;
  try {
    expect(await t.provider.poolStatus(baseline)).toEqual([{ template: baseline, size: 2, ready: 2 }]);
    const copies = await poolDatabases();
    expect(copies).toHaveLength(2);
    // While the run lives, gc leaves its pool alone.
    expect((await t.provider.gc()).repaired).toEqual([]);
    expect(await poolDatabases()).toEqual(copies);

    expect(await ownerLockHeld(baseline)).toBe(true);
    run.child.kill('SIGKILL');
    await run.exited;
    await ownerSessionEnded(baseline);
    // Killed: nothing of it dropped the copies (they would stay until db stop) …
    expect((await poolDatabases()).sort()).toEqual([...copies].sort());
    // … but its owner is gone, so gc drops them with the pool; the baseline stays.
    expect((await t.provider.gc()).repaired.sort()).toEqual([...copies].sort());
    expect(await poolDatabases()).toEqual([]);
    expect(await t.provider.poolStatus()).toEqual([]);
    expect(await t.provider.get(baseline)).toBeDefined();

    // Killed again: the next run on the same baseline takes the dead run's copies over (no copy is
    // made for its pool) and drops them at its end.
    const again = await startRun();
    const left = await poolDatabases();
    expect(left).toHaveLength(2);
    expect(await ownerLockHeld(baseline)).toBe(true);
    again.child.kill('SIGKILL');
    await again.exited;
    await ownerSessionEnded(baseline);
    const next = await laneBranches({ provider: t.provider, dir: repo.dir, config: config, baseCommit });
    try {
      expect(await next.baseline()).toBe(baseline);
      expect(await t.provider.poolStatus(baseline)).toEqual([{ template: baseline, size: 2, ready: 2 }]);
      expect((await poolDatabases()).sort()).toEqual([...left].sort());
    } finally {
      await next.settle();
    }
    expect(await poolDatabases()).toEqual([]);
    expect(await t.provider.poolStatus()).toEqual([]);
  } finally {
    run.child.kill('SIGKILL');
  }
}, 180_000);

/**
 * Wait until the server has ended a killed run's session that held its owner lock: the kernel closes
 * the socket at once, the backend notices on its own schedule. The lock's holder is found in pg_locks.
 */
async function ownerSessionEnded(template: string): Promise<void> {
  while (await ownerLockHeld(template)) await new Promise((r) => setTimeout(r, 20));
}

/** The run's owner lock (pool.ts) is held by a session on the catalog server. */
async function ownerLockHeld(template: string): Promise<boolean> {
  const catalog = t.adminUrl.replace(/\/[^/]*$/, '/consort_catalog');
  const owners = await query<{ owner: string }>(
    catalog,
    'SELECT owner FROM consort.pool_owners WHERE namespace = $1 AND template = $2',
    [t.namespace, template],
  );
  expect(owners).toHaveLength(1);
  const held = await query(
    catalog,
    `SELECT 1 FROM pg_locks
      WHERE locktype = 'advisory' AND objsubid = 1 AND granted
        AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
    [`consort:pool-owner:${owners[0]!.owner}`],
  );
  return held.length > 0;
}
