/**
 * The lakebase provider against a local Databricks stand-in (test/emulators/lakebase.ts) whose
 * branches are real databases: the BranchProvider contract as `local` has it, then each way the
 * service can fail.
 */
import { createLakebaseProvider, type LakebaseProviderOptions } from '../../../src/branches/lakebase/provider.js';
import { parseLakebaseSettings } from '../../../src/branches/lakebase/settings.js';
import { STAGE_PREFIX } from '../../../src/branches/cloud/tree.js';
import type { CloudBranchProvider } from '../../../src/branches/cloud/provider.js';
import { fastClock } from '../../emulators/clock.js';
import { LakebaseEmulator, type LakebaseEmulatorOptions } from '../../emulators/lakebase.js';
import { query } from '../../helpers/servers.js';

const M2M = { clientId: 'sp-5e1f', clientSecret: 'dose-oauth-secret-0042' };

async function withLakebase<T>(
  emuOptions: LakebaseEmulatorOptions,
  fn: (p: CloudBranchProvider, emu: LakebaseEmulator, logs: string[]) => Promise<T>,
  providerOptions: LakebaseProviderOptions = {},
  env: (emu: LakebaseEmulator) => NodeJS.ProcessEnv = (emu) => emu.env(),
): Promise<T> {
  const emu = await new LakebaseEmulator({ ...M2M, ...emuOptions }).start();
  const logs: string[] = [];
  try {
    const provider = createLakebaseProvider(parseLakebaseSettings(env(emu)), { clock: fastClock(), sslMode: 'disable', log: (l) => logs.push(l), ...providerOptions });
    try {
      return await fn(provider, emu, logs);
    } finally {
      await provider.close();
    }
  } finally {
    await emu.stop();
  }
}

const count = async (url: string) => (await query<{ n: number }>(url, 'SELECT count(*)::int AS n FROM t'))[0]!.n;

describe('lakebase: the BranchProvider contract', () => {
  let emu: LakebaseEmulator;
  let p: CloudBranchProvider;
  const logs: string[] = [];
  beforeAll(async () => {
    emu = await new LakebaseEmulator({ ...M2M, opPolls: 3, pageSize: 2 }).start();
    p = createLakebaseProvider(parseLakebaseSettings(emu.env()), { clock: fastClock(), sslMode: 'disable', log: (l) => logs.push(l) });
    await query(await p.connectionUri('main'), 'CREATE TABLE t (x int); INSERT INTO t VALUES (1)');
  });
  afterAll(async () => {
    await p.close();
    await emu.stop();
  });

  it('reports the service mode and the project\'s PostgreSQL version', async () => {
    expect(await p.capabilities()).toEqual({ provider: 'lakebase', mode: 'native', modeReason: expect.stringContaining('consort-emu'), serverVersion: '15' });
  });

  it('forks from the default branch (Consort\'s main) with the documented request, waiting for the operation', async () => {
    const polls = emu.server.count('GET', /\/operations\//);
    const record = await p.create({ name: 'feat-a', ttlMs: 2 * 3_600_000, gitBranch: 'feature/a' });
    expect(record).toMatchObject({ name: 'feat-a', parent: 'main', gitBranch: null, database: 'feat-a' });
    expect(record.expiresAt!.getTime() - Date.now()).toBeGreaterThan(2 * 3_600_000 - 60_000);
    const [post] = emu.server.sent('POST', /\/branches$/).slice(-1);
    expect(post!.query).toBe('?branch_id=feat-a');
    expect(post!.body).toEqual({ spec: { source_branch: 'projects/consort-emu/branches/production', ttl: '7200s' } });
    expect(emu.server.count('GET', /\/operations\//) - polls).toBeGreaterThanOrEqual(6); // branch and endpoint, 3 polls each
    expect(emu.server.sent('POST', /\/endpoints$/).at(-1)!.body).toMatchObject({ spec: { endpoint_type: 'ENDPOINT_TYPE_READ_WRITE' } });
  });

  it('keeps branches apart: a write on the child never reaches the parent', async () => {
    const url = await p.connectionUri('feat-a');
    expect(new URL(url)).toMatchObject({ username: 'sp-5e1f', pathname: '/databricks_postgres', search: '?sslmode=disable' });
    await query(url, 'INSERT INTO t VALUES (2)');
    expect(await count(url)).toBe(2);
    expect(await count(await p.connectionUri('main'))).toBe(1);
  });

  it('lists every branch across pages, with parents in Consort\'s names', async () => {
    await p.create({ name: 'feat-b', parent: 'feat-a' });
    await p.create({ name: 'feat-c' });
    const list = await p.list();
    expect(list.map((b) => [b.name, b.parent])).toEqual([['main', null], ['feat-a', 'main'], ['feat-b', 'feat-a'], ['feat-c', 'main']]);
    expect(emu.server.sent('GET', /\/branches$/).some((e) => e.query.includes('page_token=2'))).toBe(true);
    expect(emu.server.sent('POST', /\/branches$/).at(-2)!.body).toEqual({ spec: { source_branch: 'projects/consort-emu/branches/feat-a', no_expiry: true } });
    expect(await p.get('feat-b')).toMatchObject({ parent: 'feat-a', expiresAt: null });
    expect(await p.get('nope')).toBeUndefined();
  });

  it('refuses what local refuses: bad names, existing names, missing parents, deleting main or a parent', async () => {
    await expect(p.create({ name: 'Feat/A' })).rejects.toMatchObject({ code: 'invalid-input', hint: 'Use "feat-a" instead.' });
    await expect(p.create({ name: 'feat-a' })).rejects.toMatchObject({ code: 'branch-exists' });
    await expect(p.create({ name: 'x', parent: 'ghost' })).rejects.toMatchObject({ code: 'branch-not-found' });
    await expect(p.create({ name: `${STAGE_PREFIX}x` })).rejects.toMatchObject({ code: 'invalid-input' });
    await expect(p.delete('main')).rejects.toMatchObject({ code: 'protected-branch' });
    await expect(p.delete('feat-a')).rejects.toMatchObject({ code: 'branch-has-children', message: expect.stringContaining('feat-b') });
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
    expect(await p.ensure({ name: 'baseline-1', prepare: () => Promise.reject(new Error('must not run')) })).toMatchObject({ outcome: 'reused' });
    expect(await p.ensure({ name: 'baseline-1', parent: 'long' })).toMatchObject({ outcome: 'recreated', branch: { parent: 'long' } });
    expect([...emu.branches.keys()].filter((k) => k.startsWith(STAGE_PREFIX))).toHaveLength(0);
  });

  it('leaves nothing behind when prepare fails', async () => {
    const before = [...emu.branches.keys()].sort();
    await expect(p.ensure({ name: 'baseline-2', prepare: () => Promise.reject(new Error('seed failed')) })).rejects.toThrow('seed failed');
    expect([...emu.branches.keys()].sort()).toEqual(before);
  });

  it('gc deletes expired branches and staging branches a killed run left behind', async () => {
    await p.create({ name: 'short', ttlMs: 60_000 });
    emu.branches.set(`${STAGE_PREFIX}dead`, { id: `${STAGE_PREFIX}dead`, source: 'production', database: await emu.dbs.create(), created: new Date(Date.now() - 86_400_000), expires: null, ready: true, isDefault: false });
    const result = await p.gc(new Date(Date.now() + 120_000));
    expect(result.deleted).toEqual(['short']);
    expect(result.repaired).toEqual([`${STAGE_PREFIX}dead`]);
    expect(await p.get('short')).toBeUndefined();
  });
});

describe('lakebase: authentication and tokens', () => {
  it('refreshes the OAuth token before it expires, and the database login token too', () => withLakebase({ oauthTtlSec: 2, credentialTtlSec: 2 }, async (p, emu) => {
    const first = await p.connectionUri('main');
    expect(await query(first, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await new Promise((r) => setTimeout(r, 2100));
    await expect(query(first, 'SELECT 1')).rejects.toThrow(/password authentication failed/); // the old login expired
    const second = await p.connectionUri('main');
    expect(second).not.toBe(first);
    expect(await query(second, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    expect(emu.server.count('POST', /\/oidc\/v1\/token$/)).toBe(2);
    expect(emu.expiredTokenHits).toBe(0); // refreshed before, never rejected
  }));

  it('fetches a new token once when the workspace rejects the current one', () => withLakebase({}, async (p, emu) => {
    await p.capabilities();
    emu.server.fail({ path: /\/branches$/, status: 401, body: { error_code: 'UNAUTHENTICATED', message: 'Token revoked' } });
    expect((await p.list()).map((b) => b.name)).toEqual(['main']);
    expect(emu.server.count('POST', /\/oidc\/v1\/token$/)).toBe(2);
  }));

  it('logs in as the PAT\'s user, found with SCIM /Me', () => withLakebase({ token: 'dapi-test-pat-0001' }, async (p) => {
    expect(new URL(await p.connectionUri('main')).username).toBe('ci%40example.com');
  }, {}, (emu) => emu.env('token')));

  it.each([
    ['a wrong OAuth secret', (emu: LakebaseEmulator) => ({ ...emu.env('m2m'), DATABRICKS_CLIENT_SECRET: 'wrong-secret' }), 'auth', /DATABRICKS_CLIENT_SECRET/],
    ['a wrong PAT', (emu: LakebaseEmulator) => ({ ...emu.env('token'), DATABRICKS_TOKEN: 'dapi-wrong-1234' }), 'auth', /DATABRICKS_TOKEN/],
    ['a missing project', (emu: LakebaseEmulator) => ({ ...emu.env('token'), CONSORT_LAKEBASE_PROJECT: 'no-such-project' }), 'project-not-found', /CONSORT_LAKEBASE_PROJECT/],
  ])('%s is a clear error that says what to fix', (_label, env, code, hint) => withLakebase({ token: 'dapi-right-9999' }, async (p) => {
    const error = await p.list().then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code, hint: expect.stringMatching(hint) });
    expect(JSON.stringify(error) + String(error)).not.toMatch(/wrong-secret|dapi-wrong-1234|dose-oauth/);
  }, {}, env));
});

describe('lakebase: service failures', () => {
  it('retries 429 and 503 honouring Retry-After, on calls and on operation polls', () => withLakebase({}, async (p, emu) => {
    const clock = fastClock();
    const provider = createLakebaseProvider(parseLakebaseSettings(emu.env()), { clock, sslMode: 'disable' });
    emu.server.fail({ method: 'POST', path: /\/branches$/, status: 429, body: { error_code: 'REQUEST_LIMIT_EXCEEDED', message: 'slow down' }, headers: { 'retry-after': '3' } });
    emu.server.fail({ method: 'GET', path: /\/operations\//, status: 503, body: { error_code: 'TEMPORARILY_UNAVAILABLE' }, headers: { 'retry-after': '1' }, times: 2 });
    await provider.create({ name: 'retried' });
    expect(clock.sleeps).toEqual(expect.arrayContaining([3000, 1000]));
    expect(emu.server.pendingFaults()).toBe(0);
    expect(await p.get('retried')).toBeDefined();
    await provider.close();
  }));

  it('stops at the branch limit with what to do', () => withLakebase({ maxBranches: 2 }, async (p) => {
    await p.create({ name: 'one' });
    await expect(p.create({ name: 'two' })).rejects.toMatchObject({ code: 'branch-limit', hint: expect.stringContaining('consort branch gc') });
  }));

  it('does not retry a quota answer', () => withLakebase({}, async (p, emu) => {
    await p.capabilities();
    emu.server.fail({ method: 'POST', path: /\/branches$/, status: 429, body: { error_code: 'RESOURCE_EXHAUSTED', message: 'Storage quota exceeded' } });
    await expect(p.create({ name: 'big' })).rejects.toMatchObject({ code: 'quota-exceeded' });
    expect(emu.server.count('POST', /\/branches$/)).toBe(1);
  }));

  it('maps 403 to a permissions error naming the project', () => withLakebase({}, async (p, emu) => {
    await p.capabilities();
    emu.server.fail({ method: 'POST', path: /\/branches$/, status: 403, body: { error_code: 'PERMISSION_DENIED', message: 'CAN MANAGE required' } });
    await expect(p.create({ name: 'denied' })).rejects.toMatchObject({ code: 'auth', hint: expect.stringContaining('CAN MANAGE on the Lakebase project "consort-emu"') });
  }));

  it('times out an operation that never finishes', () => withLakebase({ opPolls: 10_000 }, async (p) => {
    await expect(p.create({ name: 'stuck' })).rejects.toMatchObject({ code: 'timeout', message: expect.stringContaining('creating branch stuck') });
  }, { poll: { initialDelayMs: 5, maxDelayMs: 10, timeoutMs: 300 } }));
});

describe('lakebase: verification before anything writes', () => {
  it.each([
    ['hands out the parent\'s endpoint', 'parent-host' as const, /is the address of its parent "main"/],
    ['routes the new endpoint to the parent\'s data', 'parent-database' as const, /reaches the same database as its parent "main"/],
  ])('refuses a service that %s, and removes the branch', (_label, bug, message) => withLakebase({ bug }, async (p, emu) => {
    await expect(p.create({ name: 'pr-1' })).rejects.toMatchObject({ code: 'internal', message: expect.stringMatching(message) });
    expect([...emu.branches.keys()]).toEqual(['production']);
    let prepared = false;
    await expect(p.create({ name: 'pr-2', prepare: async () => { prepared = true; } })).rejects.toMatchObject({ code: 'internal' });
    expect(prepared).toBe(false);
  }));
});
