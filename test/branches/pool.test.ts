/**
 * Warm pools on both real servers (embedded PostgreSQL 18 and the PostgreSQL 15 at 127.0.0.1:5432): a
 * create from a pooled template is a handout of a ready copy, never a stale one, refilled behind the
 * caller's back, and nothing is left when the template, the pool or a crashed filler goes.
 */
import { TemplateBranchProvider } from '../../src/branches/template-provider.js';
import { localTestProvider, postgresTestProvider, query, type TestProvider } from '../helpers/servers.js';

describe.each([
  ['local', localTestProvider],
  ['postgres', postgresTestProvider],
])('%s provider: warm pools', (_name, make) => {
  let t: TestProvider;
  let p: TemplateBranchProvider;
  beforeAll(async () => {
    t = await make();
    p = t.provider;
  });
  afterAll(async () => {
    await t?.cleanup();
  });
  afterEach(async () => {
    await p.settled();
    // Leaves first, each round side by side: drops that overlap share the server's checkpoints (a
    // DROP DATABASE on PostgreSQL 15 forces one), where a recursive delete drops one at a time.
    for (let left = await p.list(); left.length > 1; left = await p.list()) {
      const parents = new Set(left.map((b) => b.parent));
      const leaves = left.filter((b) => b.name !== 'main' && !parents.has(b.name));
      if (leaves.length === 0) throw new Error(`no leaf among ${left.map((b) => b.name).join(', ')}`);
      await Promise.all(leaves.map((b) => p.delete(b.name)));
    }
  });

  const url = (name: string) => p.connectionUri(name);
  /** Pool copies on the server, whatever the catalog says. */
  const prefix = () => (t.namespace === 'local' ? '' : `${t.namespace}_`);
  async function poolDatabases(): Promise<string[]> {
    const rows = await query<{ datname: string }>(
      t.adminUrl,
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY 1',
      [`${prefix()}consort_pool_`],
    );
    return rows.map((r) => r.datname);
  }
  async function template(): Promise<void> {
    await p.create({ name: 'tmpl' });
    await query(await url('tmpl'), 'CREATE TABLE items (id int PRIMARY KEY); INSERT INTO items VALUES (1), (2)');
  }

  it('hands out ready copies of the template, then refills in the background', async () => {
    await template();
    const copies: string[] = [];
    expect(await p.pool('tmpl', 2, { onCopy: (made) => copies.push(String(made)) })).toEqual({
      template: 'tmpl',
      size: 2,
      ready: 2,
    });
    expect(copies).toEqual(['1', '2']);
    expect(await poolDatabases()).toHaveLength(2);

    const a = await p.create({ name: 'a', parent: 'tmpl' });
    expect(a).toMatchObject({ name: 'a', parent: 'tmpl', pooled: true });
    expect(await query(await url('a'), 'SELECT id FROM items ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
    expect(await query(await url('a'), 'SELECT current_database() AS db')).toEqual([{ db: a.database }]);
    await p.settled();
    expect(await p.poolStatus('tmpl')).toEqual([{ template: 'tmpl', size: 2, ready: 2 }]);

    // The handed-out branch is an ordinary branch: isolated, and reset from its parent.
    await query(await url('a'), 'DELETE FROM items');
    expect(await query(await url('tmpl'), 'SELECT count(*)::int AS n FROM items')).toEqual([{ n: 2 }]);
    await p.reset('a');
    expect(await query(await url('a'), 'SELECT count(*)::int AS n FROM items')).toEqual([{ n: 2 }]);
  });

  it('fills in the background when asked, and a reset takes a ready copy of the parent too', async () => {
    await template();
    expect(await p.pool('tmpl', 1, { fill: 'background' })).toEqual({ template: 'tmpl', size: 1, ready: 0 });
    await p.settled();
    expect(await p.poolStatus('tmpl')).toEqual([{ template: 'tmpl', size: 1, ready: 1 }]);
    await p.create({ name: 'r', parent: 'tmpl' }); // takes the copy; the refill makes another
    await p.settled();
    await query(await url('r'), 'INSERT INTO items VALUES (3)');
    const [member] = await poolDatabases();
    const reset = await p.reset('r');
    // The ready copy became the branch's database: the pool's member is gone (and refilled after).
    expect(await poolDatabases()).not.toContain(member);
    expect(await query(await url('r'), 'SELECT id FROM items ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
    expect(await query(await url('r'), 'SELECT current_database() AS db')).toEqual([{ db: reset.database }]);
    await p.settled();
    expect(await p.poolStatus('tmpl')).toEqual([{ template: 'tmpl', size: 1, ready: 1 }]);
  });

  it('holds its refills and the drops a reset leaves while a caller is on a clock, and does them once released', async () => {
    await template();
    await p.pool('tmpl', 2);
    await p.create({ name: 'held', parent: 'tmpl' });
    await p.settled();
    const aside = () =>
      query(t.adminUrl, 'SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [`${prefix()}consort_old_`]);
    const release = p.holdBackground();
    try {
      await p.create({ name: 'h', parent: 'tmpl' });
      await p.reset('held'); // the last ready copy, and the old database renamed aside
      await new Promise((r) => setTimeout(r, 300));
      expect(await p.poolStatus('tmpl')).toEqual([{ template: 'tmpl', size: 2, ready: 0 }]);
      expect(await aside()).toHaveLength(1);
    } finally {
      release();
    }
    release(); // idempotent
    await p.settled();
    expect(await p.poolStatus('tmpl')).toEqual([{ template: 'tmpl', size: 2, ready: 2 }]);
    expect(await aside()).toEqual([]);
  });

  it('never hands out a copy of an older state: a changed template is copied fresh and the pool refilled', async () => {
    await template();
    await p.pool('tmpl', 2);
    await query(await url('tmpl'), 'INSERT INTO items VALUES (3)');
    const b = await p.create({ name: 'b', parent: 'tmpl' });
    expect(b).toMatchObject({ pooled: false, poolMiss: 'stale' });
    expect(await query(await url('b'), 'SELECT id FROM items ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    await p.settled();
    const c = await p.create({ name: 'c', parent: 'tmpl' });
    expect(c.pooled).toBe(true);
    expect(c.poolMiss).toBeUndefined();
    expect(await query(await url('c'), 'SELECT id FROM items ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    // A schema change counts as a change too.
    await p.settled();
    await query(await url('tmpl'), 'ALTER TABLE items ADD COLUMN label text');
    const d = await p.create({ name: 'd', parent: 'tmpl' });
    expect(d).toMatchObject({ pooled: false, poolMiss: 'stale' });
    expect(
      await query(
        await url('d'),
        "SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'items'",
      ),
    ).toEqual([{ n: 2 }]);
  });

  it('does not serve from the pool while someone is connected to the template', async () => {
    await template();
    await p.pool('tmpl', 1);
    const pg = await import('pg');
    const held = new pg.default.Client({ connectionString: await url('tmpl') });
    await held.connect();
    try {
      await expect(p.create({ name: 'e', parent: 'tmpl' })).rejects.toMatchObject({ code: 'branch-busy' });
      expect(await p.poolStatus('tmpl')).toEqual([{ template: 'tmpl', size: 1, ready: 1 }]);
    } finally {
      await held.end();
    }
  });

  it('shares a pool between concurrent creates: each gets its own database, the pool serves what it holds', async () => {
    await template();
    await p.pool('tmpl', 2);
    const made = await Promise.all(['f1', 'f2', 'f3', 'f4'].map((name) => p.create({ name, parent: 'tmpl' })));
    // At least the two ready copies are handed out; a refill that lands in time may serve another.
    expect(made.filter((b) => b.pooled).length).toBeGreaterThanOrEqual(2);
    expect(new Set(made.map((b) => b.database)).size).toBe(4);
    for (const b of made)
      expect(await query(await url(b.name), 'SELECT count(*)::int AS n FROM items')).toEqual([{ n: 2 }]);
  });

  it('leaves no copy behind: size 0, deleting the template, draining, a crashed filler', async () => {
    await template();
    await p.pool('tmpl', 2);
    expect(await p.pool('tmpl', 0)).toEqual({ template: 'tmpl', size: 0, ready: 0 });
    expect(await p.poolStatus()).toEqual([]);
    expect(await poolDatabases()).toEqual([]);

    await p.pool('tmpl', 2);
    expect(await p.drainPools()).toBe(2);
    expect(await p.poolStatus('tmpl')).toEqual([{ template: 'tmpl', size: 2, ready: 0 }]);
    expect(await p.pool('tmpl', 1)).toEqual({ template: 'tmpl', size: 1, ready: 1 });
    await p.delete('tmpl');
    expect(await p.poolStatus()).toEqual([]);
    expect(await poolDatabases()).toEqual([]);

    // A filler killed after writing its row and creating the copy, and a copy no row knows.
    await template();
    await p.pool('tmpl', 1);
    const [dead, stray] = [`${prefix()}consort_pool_deadbeef0001`, `${prefix()}consort_pool_deadbeef0002`];
    const catalog = t.adminUrl.replace(/\/[^/]*$/, '/consort_catalog');
    await query(t.adminUrl, `CREATE DATABASE "${dead}"`);
    await query(
      catalog,
      "INSERT INTO consort.pool_members (namespace, template, database, state) VALUES ($1, 'tmpl', $2, 'filling')",
      [t.namespace, dead],
    );
    await query(t.adminUrl, `CREATE DATABASE "${stray}"`);
    const gc = await p.gc();
    expect(gc.repaired.sort()).toEqual([dead, stray]);
    expect(await poolDatabases()).toHaveLength(1); // the one good copy stays
  });

  /** The same namespace as another process opens it: a provider of its own, with its own sessions. */
  async function anotherProcess(): Promise<TemplateBranchProvider> {
    return new TemplateBranchProvider({
      ...(await p.snapshot()),
      cloneMode: () => Promise.reject(new Error('known: not asked')),
    });
  }

  it('draining (db stop) while another process fills the pool leaves no copy behind', async () => {
    await template();
    const filler = await anotherProcess();
    const catalog = t.adminUrl.replace(/\/[^/]*$/, '/consort_catalog');
    try {
      const filling = filler.pool('tmpl', 6);
      // Drain once the filler has its first copy under way.
      for (let i = 0; i < 400; i++) {
        const rows = await query(catalog, 'SELECT 1 FROM consort.pool_members WHERE namespace = $1', [t.namespace]);
        if (rows.length > 0) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      await p.drainPools();
      await filling;
      expect(await p.poolStatus('tmpl')).toEqual([{ template: 'tmpl', size: 6, ready: 0 }]);
      expect(await poolDatabases()).toEqual([]);
      expect(
        await query(catalog, 'SELECT database FROM consort.pool_members WHERE namespace = $1', [t.namespace]),
      ).toEqual([]);
    } finally {
      await filler.close();
    }
  });

  it('a run pool (owned) lives while an owner does: shared, dropped by the last release or once every owner is gone', async () => {
    await template();
    await p.create({ name: 'tmpl2' });
    const other = await anotherProcess();
    try {
      // Two runs share a pool: the first release leaves it to the second, the last one drops it.
      expect(await p.pool('tmpl', 1, { owned: true })).toEqual({ template: 'tmpl', size: 1, ready: 1 });
      expect(await other.pool('tmpl', 2, { owned: true })).toEqual({ template: 'tmpl', size: 2, ready: 2 });
      expect(await p.releasePool('tmpl')).toBe(0);
      expect(await p.poolStatus('tmpl')).toEqual([{ template: 'tmpl', size: 2, ready: 2 }]);
      expect(await other.releasePool('tmpl')).toBe(2);
      expect(await p.poolStatus()).toEqual([]);
      expect(await poolDatabases()).toEqual([]);

      // A pool set up by hand is nobody's run's: a run uses it and leaves it as it was.
      await p.pool('tmpl', 1);
      await other.pool('tmpl', 3, { owned: true });
      expect(await other.releasePool('tmpl')).toBe(0);
      expect(await p.poolStatus('tmpl')).toEqual([{ template: 'tmpl', size: 1, ready: 1 }]);
      await p.pool('tmpl', 0);
    } finally {
      await other.close();
    }

    // An owner whose session ends without a release (its process died): a live owner's pool stays,
    // the dead one's goes with the next gc.
    const dying = await anotherProcess();
    await dying.pool('tmpl', 1, { owned: true });
    await p.pool('tmpl2', 1, { owned: true });
    expect((await p.gc()).repaired).toEqual([]);
    await dying.close();
    const before = await poolDatabases();
    expect(before).toHaveLength(2);
    const gc = await p.gc();
    expect(gc.repaired).toHaveLength(1);
    expect(before).toContain(gc.repaired[0]);
    expect(await poolDatabases()).toEqual(before.filter((d) => d !== gc.repaired[0]));
    expect(await p.poolStatus()).toEqual([{ template: 'tmpl2', size: 1, ready: 1 }]);

    // The next run's pool drops a dead run's pool of another template, and adopts the copies of its own.
    for (const [dead, next] of [
      ['tmpl', 'tmpl2'],
      ['tmpl2', 'tmpl2'],
    ] as const) {
      await p.releasePool('tmpl2');
      expect(await poolDatabases()).toEqual([]);
      const gone = await anotherProcess();
      await gone.pool(dead, 1, { owned: true });
      const copies = await poolDatabases();
      await gone.close();
      expect(await p.pool(next, 1, { owned: true, fill: 'background' })).toEqual({
        template: next,
        size: 1,
        ready: dead === next ? 1 : 0,
      });
      await p.settled();
      expect(await p.poolStatus()).toEqual([{ template: next, size: 1, ready: 1 }]);
      if (dead === next) expect(await poolDatabases()).toEqual(copies);
      else expect(await poolDatabases()).not.toContain(copies[0]);
    }

    // db stop's drain forgets a dead run's pool (a live one's stays configured, empty).
    const last = await anotherProcess();
    await last.pool('tmpl', 1, { owned: true });
    await last.close();
    expect(await p.drainPools()).toBe(2);
    expect(await p.poolStatus()).toEqual([{ template: 'tmpl2', size: 1, ready: 0 }]);
    expect(await poolDatabases()).toEqual([]);
    await p.releasePool('tmpl2');
    expect(await p.poolStatus()).toEqual([]);

    // This process's owner session ends under it (a server restart, a dropped connection): the next
    // pool it sets up has a live owner again, so gc does not take it for a dead run's.
    await p.pool('tmpl', 1, { owned: true });
    const catalog = t.adminUrl.replace(/\/[^/]*$/, '/consort_catalog');
    const owners = await query<{ owner: string }>(
      catalog,
      'SELECT owner FROM consort.pool_owners WHERE namespace = $1',
      [t.namespace],
    );
    const owner = owners[0]!.owner;
    const ended = await query(
      catalog,
      `SELECT pg_terminate_backend(pid, 10000) AS ok FROM pg_locks
        WHERE locktype = 'advisory' AND objsubid = 1 AND granted
          AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
      [`consort:pool-owner:${owner}`],
    );
    expect(ended).toEqual([{ ok: true }]);
    await p.pool('tmpl2', 1, { owned: true }); // reaps the pool of tmpl, whose owner is gone
    expect((await p.gc()).repaired).toEqual([]);
    expect(await p.poolStatus()).toEqual([{ template: 'tmpl2', size: 1, ready: 1 }]);
    await p.releasePool('tmpl2');
  });

  it('refuses sizes it cannot keep, and a template that does not exist', async () => {
    await expect(p.pool('main', -1)).rejects.toMatchObject({ code: 'invalid-input' });
    await expect(p.pool('main', 65)).rejects.toMatchObject({ code: 'invalid-input' });
    await expect(p.pool('nope', 1)).rejects.toMatchObject({ code: 'branch-not-found' });
  });
});
