/**
 * The BranchProvider contract, run against both real servers: the embedded PostgreSQL 18
 * (`local`) and the PostgreSQL 15 server at 127.0.0.1:5432 (`postgres`).
 */
import pg from 'pg';
import { isConsortError } from '../../src/core/errors.js';
import { localTestProvider, postgresTestProvider, query, type TestProvider } from '../helpers/servers.js';

async function rejection(p: Promise<unknown>): Promise<{ code?: string; message: string; hint?: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: string; message: string; hint?: string };
  }
  throw new Error('expected a rejection');
}

// The contract does not depend on the server's lifecycle: `local` runs on the run's shared embedded
// server (crash.test.ts and local-provider tests cover createLocalProvider on a server of its own).
describe.each([
  ['local', localTestProvider],
  ['postgres', postgresTestProvider],
])('%s provider', (_name, make) => {
  let t: TestProvider;
  beforeAll(async () => {
    t = await make();
  });
  afterAll(async () => {
    await t?.cleanup();
  });
  afterEach(async () => {
    // Each child of main with its subtree, side by side: drops that overlap share the server's checkpoints.
    const tops = (await t.provider.list()).filter((b) => b.parent === 'main');
    await Promise.all(tops.map((b) => t.provider.delete(b.name, { recursive: true }).catch(() => undefined)));
    await query(await t.provider.connectionUri('main'), 'DROP TABLE IF EXISTS items');
  });

  const url = (name: string) => t.provider.connectionUri(name);

  it('has a root branch main and reports its mode', async () => {
    const caps = await t.provider.capabilities();
    expect(['clone', 'copy']).toContain(caps.mode);
    expect(caps.modeReason.length).toBeGreaterThan(10);
    const main = await t.provider.get('main');
    expect(main).toMatchObject({ name: 'main', parent: null, expiresAt: null });
  });

  it('isolates writes between a branch, its parent and its siblings', async () => {
    await query(
      await url('main'),
      'CREATE TABLE items (id int PRIMARY KEY, label text); INSERT INTO items VALUES (1, $$seed$$)',
    );
    const left = await t.provider.create({ name: 'left' });
    // A small parent is copied through WAL (no server-wide checkpoints) on PostgreSQL 15 (fsync on);
    // the run's embedded server has fsync off (checkpoints sync nothing), and a clone copies files.
    const fsync = (await query<{ fsync: boolean }>(t.adminUrl, "SELECT current_setting('fsync')::boolean AS fsync"))[0]!
      .fsync;
    const filesCheap = !fsync || (await t.provider.capabilities()).mode === 'clone';
    expect(left.copyStrategy).toBe(filesCheap ? 'file_copy' : 'wal_log');
    await t.provider.create({ name: 'right' });
    await query(await url('left'), "INSERT INTO items VALUES (2, 'left only')");
    await query(await url('right'), 'DELETE FROM items');
    expect(await query(await url('main'), 'SELECT id FROM items ORDER BY id')).toEqual([{ id: 1 }]);
    expect(await query(await url('left'), 'SELECT id FROM items ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
    expect(await query(await url('right'), 'SELECT id FROM items')).toEqual([]);
  });

  it('branches a branch, and the URL reaches that branch', async () => {
    await query(await url('main'), 'CREATE TABLE items (id int)');
    await t.provider.create({ name: 'parent-a' });
    await query(await url('parent-a'), 'INSERT INTO items VALUES (7)');
    const child = await t.provider.create({ name: 'child-a', parent: 'parent-a', gitBranch: 'feature/x' });
    expect(child).toMatchObject({ name: 'child-a', parent: 'parent-a', gitBranch: 'feature/x' });
    expect(
      await query(await url('child-a'), 'SELECT current_database() AS db, (SELECT count(*)::int FROM items) AS n'),
    ).toEqual([{ db: child.database, n: 1 }]);
  });

  it('resets a branch to its parent current state', async () => {
    await query(await url('main'), 'CREATE TABLE items (id int)');
    const made = await t.provider.create({ name: 'resettable', ttlMs: 3_600_000 });
    // It expires the TTL after the time it says it was made (not after the request started).
    expect(made.expiresAt!.getTime() - made.createdAt.getTime()).toBe(3_600_000);
    const before = await t.provider.get('resettable');
    await query(await url('resettable'), 'INSERT INTO items VALUES (1), (2)');
    await query(await url('main'), 'INSERT INTO items VALUES (42)');
    const after = await t.provider.reset('resettable');
    expect(after.expiresAt).toEqual(before!.expiresAt);
    expect(await query(await url('resettable'), 'SELECT id FROM items')).toEqual([{ id: 42 }]);
  });

  it('refuses to delete main, or a branch with children unless recursive', async () => {
    expect((await rejection(t.provider.delete('main'))).code).toBe('protected-branch');
    await t.provider.create({ name: 'p' });
    await t.provider.create({ name: 'c', parent: 'p' });
    await t.provider.create({ name: 'g', parent: 'c' });
    const e = await rejection(t.provider.delete('p'));
    expect(e.code).toBe('branch-has-children');
    expect(e.message).toContain('c, g');
    expect(e.hint).toContain('--recursive');
    expect(await t.provider.delete('p', { recursive: true })).toEqual(['g', 'c', 'p']);
    expect((await t.provider.list()).map((b) => b.name)).toEqual(['main']);
    expect((await rejection(t.provider.delete('p'))).code).toBe('branch-not-found');
  });

  it('removes expired branches with gc, keeping expired parents of live children', async () => {
    await t.provider.create({ name: 'short', ttlMs: 1000 });
    await t.provider.create({ name: 'short-child', parent: 'short', ttlMs: 1000 });
    await t.provider.create({ name: 'keeper', ttlMs: 1000 });
    await t.provider.create({ name: 'keeper-child', parent: 'keeper' });
    await t.provider.create({ name: 'forever' });
    const result = await t.provider.gc(new Date(Date.now() + 5000));
    expect(result.deleted.sort()).toEqual(['short', 'short-child']);
    expect(result.kept).toEqual([{ name: 'keeper', reason: expect.stringContaining('children') }]);
    expect((await t.provider.list()).map((b) => b.name).sort()).toEqual(['forever', 'keeper', 'keeper-child', 'main']);
  });

  it('validates names and refuses duplicates', async () => {
    const bad = await rejection(t.provider.create({ name: 'Feature/One' }));
    expect(bad.code).toBe('invalid-input');
    expect(bad.hint).toContain('feature-one');
    expect((await rejection(t.provider.create({ name: 'template1' }))).code).toBe('invalid-input');
    expect((await rejection(t.provider.create({ name: 'x', parent: 'missing' }))).code).toBe('branch-not-found');
    await t.provider.create({ name: 'dup' });
    expect((await rejection(t.provider.create({ name: 'dup' }))).code).toBe('branch-exists');
    expect((await t.provider.list()).map((b) => b.name)).toEqual(['main', 'dup']);
  });

  it('lets exactly one of two concurrent creates of a name succeed', async () => {
    const results = await Promise.allSettled([
      t.provider.create({ name: 'race' }),
      t.provider.create({ name: 'race' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(isConsortError(failed.reason, 'branch-exists')).toBe(true);
    expect((await t.provider.list()).filter((b) => b.name === 'race')).toHaveLength(1);
  });

  it('creates many branches concurrently from one parent', async () => {
    const names = ['c1', 'c2', 'c3', 'c4', 'c5'];
    await Promise.all(names.map((name) => t.provider.create({ name })));
    expect((await t.provider.list()).map((b) => b.name).sort()).toEqual([...names, 'main'].sort());
  });

  it('refuses a parent with open connections, naming them, unless asked to terminate', async () => {
    await t.provider.create({ name: 'busy' });
    const holder = new pg.Client({ connectionString: await url('busy'), application_name: 'my-dev-server' });
    holder.on('error', () => undefined);
    await holder.connect();
    try {
      const e = await rejection(t.provider.create({ name: 'from-busy', parent: 'busy' }));
      expect(e.code).toBe('branch-busy');
      expect(e.message).toContain('my-dev-server');
      expect(e.hint).toContain('--terminate-connections');
      expect(await t.provider.get('from-busy')).toBeUndefined();
      await t.provider.create({ name: 'from-busy', parent: 'busy', terminateConnections: true });
      expect(await t.provider.get('from-busy')).toBeDefined();
    } finally {
      await holder.end().catch(() => undefined);
    }
  });

  it('waits for a session on its way out (a psql that just ran its command) before calling the parent busy', async () => {
    await t.provider.create({ name: 'leaving' });
    const holder = new pg.Client({ connectionString: await url('leaving'), application_name: 'one-last-query' });
    holder.on('error', () => undefined);
    await holder.connect();
    // Gone within the grace: its last statement ends 300 ms from now, and it disconnects.
    const gone = holder.query('SELECT pg_sleep(0.3)').then(() => holder.end());
    try {
      const made = await t.provider.create({ name: 'after-leaving', parent: 'leaving' });
      expect(made.parent).toBe('leaving');
    } finally {
      await gone.catch(() => undefined);
    }
  });

  it('ensure reuses a branch from the same parent and recreates it from another', async () => {
    await t.provider.create({ name: 'base-a' });
    await t.provider.create({ name: 'base-b' });
    expect((await t.provider.ensure({ name: 'pr-1', parent: 'base-a' })).outcome).toBe('created');
    await query(await url('pr-1'), 'CREATE TABLE marker (x int)');
    expect((await t.provider.ensure({ name: 'pr-1', parent: 'base-a' })).outcome).toBe('reused');
    expect(await query(await url('pr-1'), "SELECT to_regclass('marker') IS NOT NULL AS has")).toEqual([{ has: true }]);
    const again = await t.provider.ensure({ name: 'pr-1', parent: 'base-b' });
    expect(again.outcome).toBe('recreated');
    expect(again.branch.parent).toBe('base-b');
    expect(await query(await url('pr-1'), "SELECT to_regclass('marker') IS NOT NULL AS has")).toEqual([{ has: false }]);
  });
});

describe('create with prepare (local provider)', () => {
  let t: TestProvider;
  beforeAll(async () => {
    t = await localTestProvider();
  });
  afterAll(async () => t?.cleanup());

  it('makes fork-and-initialise atomic: failure rolls back, a concurrent ensure waits and reuses', async () => {
    const failing = t.provider.create({
      name: 'prep',
      prepare: async () => {
        throw new Error('seed failed');
      },
    });
    await expect(failing).rejects.toThrow('seed failed');
    expect(await t.provider.get('prep')).toBeUndefined();

    let prepared = 0;
    const prepare = async (u: string) => {
      prepared++;
      await new Promise((r) => setTimeout(r, 300));
      await query(u, 'CREATE TABLE prepared (x int)');
    };
    const [a, b] = await Promise.all([
      t.provider.ensure({ name: 'prep', prepare }),
      t.provider.ensure({ name: 'prep', prepare }),
    ]);
    expect([a.outcome, b.outcome].sort()).toEqual(['created', 'reused']);
    expect(prepared).toBe(1);
    expect(
      await query(await t.provider.connectionUri('prep'), "SELECT to_regclass('prepared') IS NOT NULL AS ok"),
    ).toEqual([{ ok: true }]);
  });
});
