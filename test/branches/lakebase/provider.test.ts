/**
 * The lakebase provider against a local Databricks stand-in (test/emulators/lakebase.ts) whose
 * branches are real databases: the BranchProvider contract as `local` has it, then each way the
 * service can fail.
 */
import { createLakebaseProvider, type LakebaseProviderOptions } from '../../../src/branches/lakebase/provider.js';
import { parseLakebaseSettings } from '../../../src/branches/lakebase/settings.js';
import { STAGE_PREFIX } from '../../../src/branches/cloud/tree.js';
import type { CloudBranchProvider } from '../../../src/branches/cloud/provider.js';
import { fastClock, virtualClock, type VirtualClock } from '../../emulators/clock.js';
import { LakebaseEmulator, type LakebaseEmulatorOptions } from '../../emulators/lakebase.js';
import { query } from '../../helpers/servers.js';

const M2M = { clientId: 'sp-5e1f', clientSecret: 'dose-oauth-secret-0042' };

/**
 * The emulator the tests below share (the contract tests have their own: they write to main): the
 * first one starts it, each later one resets it (every branch but the default one dropped, tokens,
 * logs and faults forgotten, its own options), so no test pays for a new default branch's database.
 */
let shared: LakebaseEmulator | undefined;
afterAll(async () => {
  await shared?.stop();
});

/**
 * A fresh provider on the shared emulator, both on one virtual clock: simulated waits (token
 * lifetimes, slow operations, Retry-After, the rate limit's refill) pass without real time.
 */
async function withLakebase<T>(
  emuOptions: LakebaseEmulatorOptions,
  fn: (p: CloudBranchProvider, emu: LakebaseEmulator, logs: string[], clock: VirtualClock) => Promise<T>,
  providerOptions: LakebaseProviderOptions = {},
  env: (emu: LakebaseEmulator) => NodeJS.ProcessEnv = (emu) => emu.env(),
): Promise<T> {
  const clock = virtualClock();
  const options = { ...M2M, now: clock.now, ...emuOptions };
  const emu = shared ? await shared.reset(options) : (shared = await new LakebaseEmulator(options).start());
  const logs: string[] = [];
  const provider = createLakebaseProvider(parseLakebaseSettings(env(emu)), {
    clock,
    sslMode: 'disable',
    log: (l) => logs.push(l),
    ...providerOptions,
  });
  try {
    return await fn(provider, emu, logs, clock);
  } finally {
    await provider.close();
  }
}

const count = async (url: string) => (await query<{ n: number }>(url, 'SELECT count(*)::int AS n FROM t'))[0]!.n;

describe('lakebase: the BranchProvider contract', () => {
  let emu: LakebaseEmulator;
  let p: CloudBranchProvider;
  const logs: string[] = [];
  beforeAll(async () => {
    emu = await new LakebaseEmulator({ ...M2M, opPolls: 3, pageSize: 2 }).start();
    p = createLakebaseProvider(parseLakebaseSettings(emu.env()), {
      clock: fastClock(),
      sslMode: 'disable',
      log: (l) => logs.push(l),
    });
    await query(await p.connectionUri('main'), 'CREATE TABLE t (x int); INSERT INTO t VALUES (1)');
  });
  afterAll(async () => {
    await p.close();
    await emu.stop();
  });

  it("reports the service mode and the project's PostgreSQL version", async () => {
    expect(await p.capabilities()).toEqual({
      provider: 'lakebase',
      mode: 'native',
      modeReason: expect.stringContaining('consort-emu'),
      serverVersion: '15',
    });
  });

  it("forks from the default branch (Consort's main) with the documented request, waiting for the operation", async () => {
    const polls = emu.server.count('GET', /\/operations\//);
    const record = await p.create({ name: 'feat-a', ttlMs: 2 * 3_600_000, gitBranch: 'feature/a' });
    expect(record).toMatchObject({ name: 'feat-a', parent: 'main', gitBranch: null, database: 'feat-a' });
    expect(record.expiresAt!.getTime() - Date.now()).toBeGreaterThan(2 * 3_600_000 - 60_000);
    const [post] = emu.server.sent('POST', /\/branches$/).slice(-1);
    expect(post!.query).toBe('?branch_id=feat-a');
    expect(post!.body).toEqual({ spec: { source_branch: 'projects/consort-emu/branches/production', ttl: '7200s' } });
    expect(emu.server.count('GET', /\/operations\//) - polls).toBeGreaterThanOrEqual(6); // branch and endpoint, 3 polls each
    expect(emu.server.sent('POST', /\/endpoints$/).at(-1)!.body).toMatchObject({
      spec: { endpoint_type: 'ENDPOINT_TYPE_READ_WRITE' },
    });
  });

  it('keeps branches apart: a write on the child never reaches the parent', async () => {
    const url = await p.connectionUri('feat-a');
    expect(new URL(url)).toMatchObject({
      username: 'sp-5e1f',
      pathname: '/databricks_postgres',
      search: '?sslmode=disable',
    });
    await query(url, 'INSERT INTO t VALUES (2)');
    expect(await count(url)).toBe(2);
    expect(await count(await p.connectionUri('main'))).toBe(1);
  });

  it("lists every branch across pages, with parents in Consort's names", async () => {
    await p.create({ name: 'feat-b', parent: 'feat-a' });
    await p.create({ name: 'feat-c' });
    const list = await p.list();
    expect(list.map((b) => [b.name, b.parent])).toEqual([
      ['main', null],
      ['feat-a', 'main'],
      ['feat-b', 'feat-a'],
      ['feat-c', 'main'],
    ]);
    expect(emu.server.sent('GET', /\/branches$/).some((e) => e.query.includes('page_token=2'))).toBe(true);
    expect(emu.server.sent('POST', /\/branches$/).at(-2)!.body).toEqual({
      spec: { source_branch: 'projects/consort-emu/branches/feat-a', no_expiry: true },
    });
    expect(await p.get('feat-b')).toMatchObject({ parent: 'feat-a', expiresAt: null });
    expect(await p.get('nope')).toBeUndefined();
  });

  it('refuses what local refuses: bad names, existing names, missing parents, deleting main or a parent', async () => {
    await expect(p.create({ name: 'Feat/A' })).rejects.toMatchObject({
      code: 'invalid-input',
      hint: 'Use "feat-a" instead.',
    });
    await expect(p.create({ name: 'feat-a' })).rejects.toMatchObject({ code: 'branch-exists' });
    await expect(p.create({ name: 'x', parent: 'ghost' })).rejects.toMatchObject({ code: 'branch-not-found' });
    await expect(p.create({ name: `${STAGE_PREFIX}x` })).rejects.toMatchObject({ code: 'invalid-input' });
    await expect(p.delete('main')).rejects.toMatchObject({ code: 'protected-branch' });
    await expect(p.delete('feat-a')).rejects.toMatchObject({
      code: 'branch-has-children',
      message: expect.stringContaining('feat-b'),
    });
    await expect(p.reset('feat-a')).rejects.toMatchObject({ code: 'branch-has-children' });
    await expect(p.delete('ghost')).rejects.toMatchObject({ code: 'branch-not-found' });
  });

  it('resets by deleting and forking again under the same name, keeping the expiry', async () => {
    await p.delete('feat-a', { recursive: true });
    await p.create({ name: 'feat-d', ttlMs: 3_600_000 });
    await query(await p.connectionUri('feat-d'), 'INSERT INTO t VALUES (3), (4)');
    const before = await p.get('feat-d');
    const after = await p.reset('feat-d');
    expect(after).toMatchObject({ name: 'feat-d', parent: 'main' });
    expect(Math.abs(after.expiresAt!.getTime() - before!.expiresAt!.getTime())).toBeLessThan(5000);
    expect(await count(await p.connectionUri('feat-d'))).toBe(1);
  });

  it('clamps a TTL past the service cap to 30 days, and says so', async () => {
    const record = await p.create({ name: 'long', ttlMs: 60 * 86_400_000 });
    expect(Math.round((record.expiresAt!.getTime() - Date.now()) / 86_400_000)).toBe(30);
    expect(logs.some((l) => l.includes('"long"') && l.includes('using 30d'))).toBe(true);
  });

  it('runs prepare on a hidden staging branch and publishes only a finished one', async () => {
    let seen = '';
    await p.create({
      name: 'baseline-1',
      prepare: async (url) => {
        seen = url;
        await query(url, 'INSERT INTO t VALUES (5)');
        expect(await p.get('baseline-1')).toBeUndefined(); // not visible while it is prepared
      },
    });
    expect(new URL(seen).host).not.toBe(new URL(await p.connectionUri('baseline-1')).host);
    expect(await count(await p.connectionUri('baseline-1'))).toBe(2);
    expect(await p.get('baseline-1')).toMatchObject({ parent: 'main' });
    expect((await p.list()).some((b) => b.name.startsWith(STAGE_PREFIX))).toBe(false);
    expect([...emu.branches.keys()].filter((k) => k.startsWith(STAGE_PREFIX))).toHaveLength(1);
    expect(
      await p.ensure({ name: 'baseline-1', prepare: () => Promise.reject(new Error('must not run')) }),
    ).toMatchObject({ outcome: 'reused' });
    expect(await p.ensure({ name: 'baseline-1', parent: 'long' })).toMatchObject({
      outcome: 'recreated',
      branch: { parent: 'long' },
    });
    expect([...emu.branches.keys()].filter((k) => k.startsWith(STAGE_PREFIX))).toHaveLength(0);
  });

  it('leaves nothing behind when prepare fails', async () => {
    const before = [...emu.branches.keys()].sort();
    await expect(
      p.ensure({ name: 'baseline-2', prepare: () => Promise.reject(new Error('seed failed')) }),
    ).rejects.toThrow('seed failed');
    expect([...emu.branches.keys()].sort()).toEqual(before);
  });

  it('gc deletes expired branches and staging branches a killed run left behind', async () => {
    await p.create({ name: 'short', ttlMs: 60_000 });
    emu.branches.set(`${STAGE_PREFIX}dead`, {
      id: `${STAGE_PREFIX}dead`,
      source: 'production',
      database: await emu.dbs.create(),
      created: new Date(Date.now() - 86_400_000),
      expires: null,
      ready: true,
      isDefault: false,
    });
    const result = await p.gc(new Date(Date.now() + 120_000));
    expect(result.deleted).toEqual(['short']);
    expect(result.repaired).toEqual([`${STAGE_PREFIX}dead`]);
    expect(await p.get('short')).toBeUndefined();
  });
});

describe('lakebase: authentication and tokens', () => {
  it('refreshes the OAuth token before it expires, and the database login token too', () =>
    withLakebase({ oauthTtlSec: 2, credentialTtlSec: 2 }, async (p, emu, _logs, clock) => {
      const first = await p.connectionUri('main');
      expect(await query(first, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
      clock.advance(2100);
      await expect(query(first, 'SELECT 1')).rejects.toThrow(/password authentication failed/); // the old login expired
      const second = await p.connectionUri('main');
      expect(second).not.toBe(first);
      expect(await query(second, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
      expect(emu.server.count('POST', /\/oidc\/v1\/token$/)).toBe(2);
      expect(emu.expiredTokenHits).toBe(0); // refreshed before, never rejected
    }));

  it('a listing whose last page points back at an earlier one ends (it used to page for ever)', () =>
    withLakebase({ pageSize: 2, bug: 'repeat-page-token' }, async (p, emu) => {
      await p.create({ name: 'feat-a' });
      await p.create({ name: 'feat-b' });
      const listing = p.list();
      const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('still paging')), 5000).unref());
      expect(((await Promise.race([listing, timeout])) as { name: string }[]).map((b) => b.name)).toEqual(
        expect.arrayContaining(['main', 'feat-a', 'feat-b']),
      );
      expect(emu.server.count('GET', /\/branches$/)).toBeLessThan(10);
    }));

  it('fetches a new token once when the workspace rejects the current one', () =>
    withLakebase({}, async (p, emu) => {
      await p.capabilities();
      emu.server.fail({
        path: /\/branches$/,
        status: 401,
        body: { error_code: 'UNAUTHENTICATED', message: 'Token revoked' },
      });
      expect((await p.list()).map((b) => b.name)).toEqual(['main']);
      expect(emu.server.count('POST', /\/oidc\/v1\/token$/)).toBe(2);
    }));

  it("logs in as the PAT's user, found with SCIM /Me", () =>
    withLakebase(
      { token: 'dapi-test-pat-0001' },
      async (p) => {
        expect(new URL(await p.connectionUri('main')).username).toBe('ci%40example.com');
      },
      {},
      (emu) => emu.env('token'),
    ));

  it.each([
    [
      'a wrong OAuth secret',
      (emu: LakebaseEmulator) => ({ ...emu.env('m2m'), DATABRICKS_CLIENT_SECRET: 'wrong-secret' }),
      'auth',
      /DATABRICKS_CLIENT_SECRET/,
    ],
    [
      'a wrong PAT',
      (emu: LakebaseEmulator) => ({ ...emu.env('token'), DATABRICKS_TOKEN: 'dapi-wrong-1234' }),
      'auth',
      /DATABRICKS_TOKEN/,
    ],
    [
      'a missing project',
      (emu: LakebaseEmulator) => ({ ...emu.env('token'), CONSORT_LAKEBASE_PROJECT: 'no-such-project' }),
      'project-not-found',
      /CONSORT_LAKEBASE_PROJECT/,
    ],
  ])('%s is a clear error that says what to fix', (_label, env, code, hint) =>
    withLakebase(
      { token: 'dapi-right-9999' },
      async (p) => {
        const error = await p.list().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toMatchObject({ code, hint: expect.stringMatching(hint) });
        expect(JSON.stringify(error) + String(error)).not.toMatch(/wrong-secret|dapi-wrong-1234|dose-oauth/);
      },
      {},
      env,
    ),
  );
});

describe('lakebase: service failures', () => {
  it('a point in time outside the history retention is refused with a hint that names --at', () =>
    withLakebase({}, async (p, _emu, _logs, clock) => {
      await expect(p.create({ name: 'pr-at', at: new Date(clock.now() - 2 * 86_400_000) })).rejects.toMatchObject({
        code: 'invalid-input',
        hint: expect.stringContaining('--at'),
      });
      expect(await p.get('pr-at')).toBeUndefined();
    }));

  it('retries 429 and 503 honouring Retry-After, on calls and on operation polls', () =>
    withLakebase({}, async (p, emu, _logs, clock) => {
      emu.server.fail({
        method: 'POST',
        path: /\/branches$/,
        status: 429,
        body: { error_code: 'REQUEST_LIMIT_EXCEEDED', message: 'slow down' },
        headers: { 'retry-after': '3' },
      });
      emu.server.fail({
        method: 'GET',
        path: /\/operations\//,
        status: 503,
        body: { error_code: 'TEMPORARILY_UNAVAILABLE' },
        headers: { 'retry-after': '1' },
        times: 2,
      });
      await p.create({ name: 'retried' });
      expect(clock.sleeps).toEqual(expect.arrayContaining([3000, 1000]));
      expect(emu.server.pendingFaults()).toBe(0);
      expect(await p.get('retried')).toBeDefined();
    }));

  it('stops at the branch limit with what to do', () =>
    withLakebase({ maxBranches: 2 }, async (p) => {
      await p.create({ name: 'one' });
      await expect(p.create({ name: 'two' })).rejects.toMatchObject({
        code: 'branch-limit',
        hint: expect.stringContaining('consort branch gc'),
      });
    }));

  it('does not retry a quota answer', () =>
    withLakebase({}, async (p, emu) => {
      await p.capabilities();
      emu.server.fail({
        method: 'POST',
        path: /\/branches$/,
        status: 400,
        body: { error_code: 'QUOTA_EXCEEDED', message: 'Storage quota exceeded' },
      });
      await expect(p.create({ name: 'big' })).rejects.toMatchObject({ code: 'quota-exceeded' });
      expect(emu.server.count('POST', /\/branches$/)).toBe(1);
    }));

  it('retries RESOURCE_EXHAUSTED (the per-user rate limit, HTTP 429) like any 429, and gets everything done', () =>
    withLakebase({ rateLimit: { burst: 2, perSecond: 10 } }, async (p, emu) => {
      await p.create({ name: 'pr-7-rev' });
      await p.create({ name: 'pr-7-suite', parent: 'pr-7-rev' });
      expect(emu.rateLimited).toBeGreaterThan(0);
      expect((await p.delete('pr-7-rev', { recursive: true })).sort()).toEqual(['pr-7-rev', 'pr-7-suite']);
      expect(emu.live()).toEqual(['production']);
      expect(emu.server.count('POST', /\/branches$/)).toBe(
        emu.server.sent('POST', /\/branches$/).filter((e) => e.status === 429).length + 2,
      );
    }));

  it('after a run of RESOURCE_EXHAUSTED it says it was rate-limited, not out of quota', () =>
    withLakebase(
      {},
      async (p, emu) => {
        await p.capabilities();
        emu.server.fail({
          method: 'GET',
          path: /\/branches$/,
          status: 429,
          body: { error_code: 'RESOURCE_EXHAUSTED', message: 'Too many requests' },
          times: 3,
        });
        await expect(p.list()).rejects.toMatchObject({
          code: 'service-error',
          message: expect.stringContaining('rate-limiting'),
        });
        expect(emu.server.count('GET', /\/branches$/)).toBe(3);
      },
      { retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 } },
    ));

  it('maps 403 to a permissions error naming the project', () =>
    withLakebase({}, async (p, emu) => {
      await p.capabilities();
      emu.server.fail({
        method: 'POST',
        path: /\/branches$/,
        status: 403,
        body: { error_code: 'PERMISSION_DENIED', message: 'CAN MANAGE required' },
      });
      await expect(p.create({ name: 'denied' })).rejects.toMatchObject({
        code: 'auth',
        hint: expect.stringContaining('CAN MANAGE on the Lakebase project "consort-emu"'),
      });
    }));

  it('times out an operation that never finishes', () =>
    withLakebase(
      { opPolls: 10_000 },
      async (p) => {
        await expect(p.create({ name: 'stuck' })).rejects.toMatchObject({
          code: 'timeout',
          message: expect.stringContaining('creating branch stuck'),
        });
      },
      { poll: { timeoutMs: 30_000 } },
    ));
});

describe('lakebase: soft delete, as DeleteBranch has it', () => {
  it("deletes Consort's branches with purge=true, so the same ids can be made again on the next push", () =>
    withLakebase({}, async (p, emu) => {
      for (let push = 0; push < 3; push++) {
        await p.create({ name: 'pr-9-rev', ttlMs: 3_600_000 });
        await p.create({ name: 'pr-9-suite', parent: 'pr-9-rev', ttlMs: 3_600_000 });
        await p.delete('pr-9-rev', { recursive: true });
      }
      expect(emu.server.sent('DELETE', /\/branches\//).map((e) => new URLSearchParams(e.query).get('purge'))).toEqual(
        Array(6).fill('true'),
      );
      expect(emu.softDeleted()).toEqual([]);
      expect([...emu.branches.keys()]).toEqual(['production']);
    }));

  it('the emulator soft-deletes a plain DELETE: the id stays taken (what a delete without purge would have done to every push)', () =>
    withLakebase(
      { token: 'dapi-soft-0001' },
      async (p, emu) => {
        await p.create({ name: 'pr-3-rev' });
        const res = await fetch(`${emu.host}/api/2.0/postgres/projects/consort-emu/branches/pr-3-rev`, {
          method: 'DELETE',
          headers: { authorization: 'Bearer dapi-soft-0001' },
        });
        expect(res.status).toBe(200);
        expect(await p.get('pr-3-rev')).toBeUndefined(); // gone from the listing
        expect(emu.softDeleted()).toEqual(['pr-3-rev']);
        const again = await fetch(`${emu.host}/api/2.0/postgres/projects/consort-emu/branches?branch_id=pr-3-rev`, {
          method: 'POST',
          headers: { authorization: 'Bearer dapi-soft-0001', 'content-type': 'application/json' },
          body: JSON.stringify({
            spec: { source_branch: 'projects/consort-emu/branches/production', no_expiry: true },
          }),
        });
        expect(again.status).toBe(409);
      },
      {},
      (emu) => emu.env('token'),
    ));

  it('purges a soft-deleted branch that still holds the id, then creates it, and says so', () =>
    withLakebase(
      { token: 'dapi-soft-0002' },
      async (p, emu, logs) => {
        await p.create({ name: 'pr-4-rev' });
        await fetch(`${emu.host}/api/2.0/postgres/projects/consort-emu/branches/pr-4-rev`, {
          method: 'DELETE',
          headers: { authorization: 'Bearer dapi-soft-0002' },
        });
        expect(await p.create({ name: 'pr-4-rev' })).toMatchObject({ name: 'pr-4-rev', parent: 'main' });
        expect(emu.softDeleted()).toEqual([]);
        expect(logs.some((l) => l.includes('"pr-4-rev" was soft-deleted') && l.includes('purging'))).toBe(true);
      },
      {},
      (emu) => emu.env('token'),
    ));

  it('treats a branch that is already gone as deleted', () =>
    withLakebase({}, async (p, emu) => {
      await p.create({ name: 'gone' });
      emu.server.fail({
        method: 'DELETE',
        path: /\/branches\/gone$/,
        status: 404,
        body: { error_code: 'RESOURCE_DOES_NOT_EXIST', message: 'Branch gone does not exist' },
      });
      expect(await p.delete('gone')).toEqual(['gone']);
      expect(emu.server.pendingFaults()).toBe(0);
    }));
});

describe('lakebase: a create whose answer is lost is neither repeated nor leaked', () => {
  it.each([
    ['answers 504 after creating it', { status: 504, afterHandling: true }],
    ['answers 500 after creating it', { status: 500, afterHandling: true }],
    ['drops the connection after creating it', { status: 0, afterHandling: true, drop: true }],
  ])('the service %s: Consort finds the branch, adopts it and sends the create once', (_label, fault) =>
    withLakebase({ opPolls: 2 }, async (p, emu, logs) => {
      await p.capabilities();
      emu.server.fail({ method: 'POST', path: /\/branches$/, ...fault });
      const record = await p.create({ name: 'pr-5-rev', ttlMs: 3_600_000 });
      expect(record).toMatchObject({ name: 'pr-5-rev', parent: 'main' });
      expect(emu.server.count('POST', /\/branches$/)).toBe(1);
      expect(emu.live().sort()).toEqual(['pr-5-rev', 'production']);
      expect(await query(await p.connectionUri('pr-5-rev'), 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
      expect(logs.some((l) => l.includes('using it'))).toBe(true);
    }),
  );

  it('the service answers 502 without creating it: Consort looks, finds nothing, and sends it again', () =>
    withLakebase({}, async (p, emu) => {
      await p.capabilities();
      emu.server.fail({ method: 'POST', path: /\/branches$/, status: 502 });
      await p.create({ name: 'pr-6-rev' });
      expect(emu.server.count('POST', /\/branches$/)).toBe(2);
      expect(emu.live().sort()).toEqual(['pr-6-rev', 'production']);
    }));

  it('never adopts a branch this request did not make', () =>
    withLakebase({}, async (p, emu) => {
      await p.create({ name: 'other-source' });
      const posts = emu.server.count('POST', /\/branches$/);
      // While Consort's request is in doubt, someone else makes the same id from another source.
      emu.server.fail({
        method: 'POST',
        path: /\/branches$/,
        status: 504,
        meanwhile: async () =>
          void emu.branches.set('pr-8-rev', {
            id: 'pr-8-rev',
            source: 'other-source',
            database: await emu.dbs.create(),
            created: new Date(),
            expires: null,
            ready: true,
            isDefault: false,
          }),
      });
      await expect(p.create({ name: 'pr-8-rev' })).rejects.toMatchObject({
        code: 'branch-exists',
        message: expect.stringContaining('another request'),
      });
      expect(emu.server.count('POST', /\/branches$/) - posts).toBe(1);
    }));

  it('adopts an endpoint whose create answer was lost', () =>
    withLakebase({}, async (p, emu) => {
      await p.capabilities();
      emu.server.fail({ method: 'POST', path: /\/endpoints$/, status: 504, afterHandling: true });
      await p.create({ name: 'ep-lost' });
      expect(emu.server.count('POST', /\/endpoints$/)).toBe(1);
      expect([...emu.endpoints.keys()].filter((k) => k.startsWith('ep-lost/'))).toEqual(['ep-lost/primary']);
    }));

  it('waits out slow operations', () =>
    withLakebase({ opDelayMs: 30_000 }, async (p, emu, _logs, clock) => {
      const started = clock.now();
      await p.create({ name: 'slow' });
      expect(clock.now() - started).toBeGreaterThanOrEqual(30_000);
      expect(emu.live()).toContain('slow');
    }));
});

describe('lakebase: verification before anything writes', () => {
  it.each([
    ["hands out the parent's endpoint", 'parent-host' as const, /is the address of its parent "main"/],
    [
      "routes the new endpoint to the parent's data",
      'parent-database' as const,
      /reaches the same database as its parent "main"/,
    ],
  ])('refuses a service that %s, and removes the branch', (_label, bug, message) =>
    withLakebase({ bug }, async (p, emu) => {
      await expect(p.create({ name: 'pr-1' })).rejects.toMatchObject({
        code: 'internal',
        message: expect.stringMatching(message),
      });
      expect([...emu.branches.keys()]).toEqual(['production']);
      let prepared = false;
      await expect(
        p.create({
          name: 'pr-2',
          prepare: async () => {
            prepared = true;
          },
        }),
      ).rejects.toMatchObject({ code: 'internal' });
      expect(prepared).toBe(false);
    }),
  );
});
