/**
 * The neon provider against a local Neon API v2 stand-in (test/emulators/neon.ts) whose branches
 * are real databases: the contract, then 423/429/5xx, bad keys, missing projects, limits,
 * slow and stuck operations, and a service that hands out the parent's URL.
 */
import { createNeonProvider, type NeonProviderOptions } from '../../../src/branches/neon/provider.js';
import { parseNeonSettings } from '../../../src/branches/neon/settings.js';
import type { CloudBranchProvider } from '../../../src/branches/cloud/provider.js';
import { fastClock, type FastClock } from '../../emulators/clock.js';
import { NeonEmulator, type NeonEmulatorOptions } from '../../emulators/neon.js';
import { query } from '../../helpers/servers.js';

async function withNeon<T>(
  emuOptions: NeonEmulatorOptions,
  fn: (p: CloudBranchProvider, emu: NeonEmulator, clock: FastClock) => Promise<T>,
  providerOptions: NeonProviderOptions = {},
  env: (emu: NeonEmulator) => NodeJS.ProcessEnv = (emu) => emu.env(),
): Promise<T> {
  const emu = await new NeonEmulator(emuOptions).start();
  const clock = fastClock();
  try {
    const provider = createNeonProvider(parseNeonSettings(env(emu)), { clock, ...providerOptions });
    try {
      return await fn(provider, emu, clock);
    } finally {
      await provider.close();
    }
  } finally {
    await emu.stop();
  }
}

const count = async (url: string) => (await query<{ n: number }>(url, 'SELECT count(*)::int AS n FROM t'))[0]!.n;

describe('neon: the BranchProvider contract', () => {
  it('creates, lists across pages, isolates, resets in place and deletes', () => withNeon({ opPolls: 3, pageSize: 2 }, async (p, emu) => {
    expect(await p.capabilities()).toMatchObject({ provider: 'neon', mode: 'native', serverVersion: '15' });
    await query(await p.connectionUri('main'), 'CREATE TABLE t (x int); INSERT INTO t VALUES (1)');
    const at = new Date(Date.now() - 1000);
    const created = await p.create({ name: 'pr-12', ttlMs: 3_600_000, gitBranch: 'feature/x', annotations: { pr: '12', sha: 'abc1234' }, at });
    expect(created).toMatchObject({ name: 'pr-12', parent: 'main', gitBranch: 'feature/x' });
    const post = emu.server.sent('POST', /\/branches$/).at(-1)!.body as { branch: Record<string, string>; endpoints: unknown; annotation_value: Record<string, string> };
    expect(post.branch).toEqual({ name: 'pr-12', parent_id: emu.byName('main')!.id, parent_timestamp: at.toISOString(), expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) });
    expect(post.endpoints).toEqual([{ type: 'read_write' }]);
    expect(post.annotation_value).toEqual({ 'consort-created-by': 'consort', 'consort-pr': '12', 'consort-sha': 'abc1234', 'consort-git-branch': 'feature/x' });
    expect(emu.server.count('GET', /\/operations\//)).toBeGreaterThanOrEqual(6); // two operations, three polls each

    const url = await p.connectionUri('pr-12');
    await query(url, 'INSERT INTO t VALUES (2)');
    expect([await count(url), await count(await p.connectionUri('main'))]).toEqual([2, 1]);

    await p.create({ name: 'pr-12-child', parent: 'pr-12' });
    await p.create({ name: 'other' });
    expect((await p.list()).map((b) => [b.name, b.parent, b.gitBranch])).toEqual([
      ['main', null, null], ['pr-12', 'main', 'feature/x'], ['pr-12-child', 'pr-12', null], ['other', 'main', null],
    ]);
    expect(emu.server.sent('GET', /\/branches$/).some((e) => e.query.includes('cursor=2'))).toBe(true);

    await expect(p.reset('pr-12')).rejects.toMatchObject({ code: 'branch-has-children' });
    expect(await p.delete('pr-12-child')).toEqual(['pr-12-child']);
    const id = emu.byName('pr-12')!.id;
    await p.reset('pr-12');
    expect(emu.byName('pr-12')!.id).toBe(id); // restored in place from its parent
    expect(emu.server.sent('POST', /\/restore$/).at(-1)!.body).toEqual({ source_branch_id: emu.byName('main')!.id });
    expect(await count(await p.connectionUri('pr-12'))).toBe(1);
    expect(await p.delete('pr-12')).toEqual(['pr-12']);
    expect(emu.byName('pr-12')).toBeUndefined();
  }));

  it('publishes a prepared branch from its staging branch, and cleans both up on delete', () => withNeon({}, async (p, emu) => {
    await p.ensure({ name: 'baseline-x', prepare: (url) => query(url, 'CREATE TABLE prepared (id int)').then(() => undefined) });
    expect(await query(await p.connectionUri('baseline-x'), "SELECT to_regclass('prepared')::text AS t")).toEqual([{ t: 'prepared' }]);
    expect(await query(await p.connectionUri('main'), "SELECT to_regclass('prepared')::text AS t")).toEqual([{ t: null }]);
    expect(emu.branches.size).toBe(3);
    await p.delete('baseline-x');
    expect(emu.branches.size).toBe(1);
  }));
});

describe('neon: service failures', () => {
  it('retries 423 Locked and 429 honouring Retry-After', () => withNeon({}, async (p, emu, clock) => {
    await p.capabilities();
    emu.server.fail({ method: 'POST', path: /\/branches$/, status: 423, body: { code: 'LOCKED', message: 'project already has running operations' }, headers: { 'retry-after': '2' } });
    emu.server.fail({ method: 'POST', path: /\/branches$/, status: 429, body: { message: 'rate limit exceeded' }, headers: { 'retry-after': '4' } });
    emu.server.fail({ method: 'GET', path: /\/operations\//, status: 502 });
    await p.create({ name: 'busy' });
    expect(clock.sleeps).toEqual(expect.arrayContaining([2000, 4000]));
    expect(emu.server.pendingFaults()).toBe(0);
  }));

  it('gives up on a lock that never clears, saying what holds it', () => withNeon({}, async (p, emu) => {
    await p.capabilities();
    emu.server.fail({ method: 'POST', path: /\/branches$/, status: 423, body: { message: 'project already has running operations' }, times: 100 });
    await expect(p.create({ name: 'busy' })).rejects.toMatchObject({ code: 'service-error', hint: expect.stringContaining('Operations') });
  }, { retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 } }));

  it.each([
    ['a wrong API key', (emu: NeonEmulator) => ({ ...emu.env(), NEON_API_KEY: 'napi_wrong_key_1234' }), 'auth', /NEON_API_KEY/],
    ['a missing project', (emu: NeonEmulator) => ({ ...emu.env(), NEON_PROJECT_ID: 'no-such-project' }), 'project-not-found', /NEON_PROJECT_ID/],
  ])('%s is a clear error that says what to fix', (_label, env, code, hint) => withNeon({}, async (p) => {
    const error = await p.list().then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code, hint: expect.stringMatching(hint) });
    expect(String(error)).not.toContain('napi_wrong_key_1234');
  }, {}, env));

  it('stops at the branch limit with what to do', () => withNeon({ maxBranches: 2 }, async (p) => {
    await p.create({ name: 'one' });
    await expect(p.create({ name: 'two' })).rejects.toMatchObject({ code: 'branch-limit', hint: expect.stringContaining('consort branch gc') });
  }));

  it('times out operations that never finish', () => withNeon({ opPolls: 10_000, lock: false }, async (p) => {
    await expect(p.create({ name: 'stuck' })).rejects.toMatchObject({ code: 'timeout', message: expect.stringContaining('creating branch stuck') });
  }, { poll: { initialDelayMs: 5, maxDelayMs: 10, timeoutMs: 200 } }));

  it('refuses the parent\'s URL for a new branch (the bug that ran migrations on main), and removes the branch', () => withNeon({ bug: 'parent-uri' }, async (p, emu) => {
    await expect(p.create({ name: 'preview' })).rejects.toMatchObject({ code: 'internal', message: expect.stringContaining('is the address of its parent "main"') });
    expect(emu.byName('preview')).toBeUndefined();
  }));
});
