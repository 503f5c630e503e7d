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
  it('creates, lists across pages, isolates, resets in place and deletes', () =>
    withNeon({ opPolls: 3, pageSize: 2 }, async (p, emu) => {
      expect(await p.capabilities()).toMatchObject({ provider: 'neon', mode: 'native', serverVersion: '15' });
      await query(await p.connectionUri('main'), 'CREATE TABLE t (x int); INSERT INTO t VALUES (1)');
      const at = new Date(Date.now() - 1000);
      const created = await p.create({
        name: 'pr-12',
        ttlMs: 3_600_000,
        gitBranch: 'feature/x',
        annotations: { pr: '12', sha: 'abc1234' },
        at,
      });
      expect(created).toMatchObject({ name: 'pr-12', parent: 'main', gitBranch: 'feature/x' });
      const post = emu.server.sent('POST', /\/branches$/).at(-1)!.body as {
        branch: Record<string, string>;
        endpoints: unknown;
        annotation_value: Record<string, string>;
      };
      expect(post.branch).toEqual({
        name: 'pr-12',
        parent_id: emu.byName('main')!.id,
        parent_timestamp: at.toISOString(),
        expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      });
      expect(post.endpoints).toEqual([{ type: 'read_write' }]);
      expect(post.annotation_value).toEqual({
        'consort-created-by': 'consort',
        'consort-pr': '12',
        'consort-sha': 'abc1234',
        'consort-git-branch': 'feature/x',
        'consort-request-id': expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
      expect(emu.server.count('GET', /\/operations\//)).toBeGreaterThanOrEqual(6); // two operations, three polls each

      const url = await p.connectionUri('pr-12');
      await query(url, 'INSERT INTO t VALUES (2)');
      expect([await count(url), await count(await p.connectionUri('main'))]).toEqual([2, 1]);

      await p.create({ name: 'pr-12-child', parent: 'pr-12' });
      await p.create({ name: 'other' });
      expect((await p.list()).map((b) => [b.name, b.parent, b.gitBranch])).toEqual([
        ['main', null, null],
        ['pr-12', 'main', 'feature/x'],
        ['pr-12-child', 'pr-12', null],
        ['other', 'main', null],
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

  it('publishes a prepared branch from its staging branch, and cleans both up on delete', () =>
    withNeon({}, async (p, emu) => {
      await p.ensure({
        name: 'baseline-x',
        prepare: (url) => query(url, 'CREATE TABLE prepared (id int)').then(() => undefined),
      });
      expect(await query(await p.connectionUri('baseline-x'), "SELECT to_regclass('prepared')::text AS t")).toEqual([
        { t: 'prepared' },
      ]);
      expect(await query(await p.connectionUri('main'), "SELECT to_regclass('prepared')::text AS t")).toEqual([
        { t: null },
      ]);
      expect(emu.branches.size).toBe(3);
      await p.delete('baseline-x');
      expect(emu.branches.size).toBe(1);
      // Gone for good: Neon's DELETE soft-deletes (recoverable for 7 days) unless hard_delete=true.
      expect(emu.softDeleted.size).toBe(0);
      expect(emu.server.sent('DELETE', /\/branches\/br-/).map((e) => e.query)).toEqual([
        '?hard_delete=true',
        '?hard_delete=true',
      ]);
    }));

  it('stand-in: a DELETE without hard_delete only soft-deletes; listings and creates Neon refuses are refused', () =>
    withNeon({}, async (p, emu) => {
      await p.create({ name: 'pr-70' });
      const id = emu.byName('pr-70')!.id;
      const call = (method: string, path: string) =>
        fetch(`${emu.server.url}/api/v2/projects/${emu.o.projectId}${path}`, {
          method,
          headers: { authorization: `Bearer ${emu.o.apiKey}` },
        });
      expect((await call('DELETE', `/branches/${id}`)).status).toBe(200);
      const names = async (q: string) =>
        ((await (await call('GET', `/branches${q}`)).json()) as { branches: { name: string }[] }).branches.map(
          (b) => b.name,
        );
      expect(await names('?limit=100')).toEqual(['main']);
      expect(await names('?limit=100&include_deleted=true')).toEqual(['main', 'pr-70']);
      expect((await call('GET', `/branches/${id}`)).status).toBe(404);
      expect((await call('DELETE', `/branches/${id}`)).status).toBe(204);
      expect((await call('DELETE', `/branches/${id}?hard_delete=true`)).status).toBe(204);
      expect(await names('?include_deleted=true')).toEqual(['main']);
      expect((await call('GET', '/branches?limit=0')).status).toBe(400);
      // A create Neon refuses: parent_timestamp outside the history retention or ahead of now, expires_at past.
      const create = (branch: Record<string, string>) =>
        fetch(`${emu.server.url}/api/v2/projects/${emu.o.projectId}/branches`, {
          method: 'POST',
          headers: { authorization: `Bearer ${emu.o.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            branch: { name: 'pr-71', parent_id: emu.byName('main')!.id, ...branch },
            endpoints: [{ type: 'read_write' }],
          }),
        }).then((r) => r.status);
      const iso = (ms: number) => new Date(Date.now() + ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
      expect(await create({ parent_timestamp: iso(-2 * 86_400_000) })).toBe(400);
      expect(await create({ parent_timestamp: iso(3_600_000) })).toBe(400);
      expect(await create({ expires_at: iso(-60_000) })).toBe(400);
      expect(emu.byName('pr-71')).toBeUndefined();
      expect((await call('GET', '/branches?sort_order=up')).status).toBe(400);
    }));
});

describe('neon: service failures', () => {
  it('a point in time outside the history retention is refused with a hint that names --at', () =>
    withNeon({}, async (p) => {
      await expect(p.create({ name: 'pr-at', at: new Date(Date.now() - 2 * 86_400_000) })).rejects.toMatchObject({
        code: 'invalid-input',
        hint: expect.stringContaining('--at'),
      });
      expect(await p.get('pr-at')).toBeUndefined();
    }));

  it('retries 423 Locked and 429 honouring Retry-After', () =>
    withNeon({}, async (p, emu, clock) => {
      await p.capabilities();
      emu.server.fail({
        method: 'POST',
        path: /\/branches$/,
        status: 423,
        body: { code: 'LOCKED', message: 'project already has running operations' },
        headers: { 'retry-after': '2' },
      });
      emu.server.fail({
        method: 'POST',
        path: /\/branches$/,
        status: 429,
        body: { message: 'rate limit exceeded' },
        headers: { 'retry-after': '4' },
      });
      emu.server.fail({ method: 'GET', path: /\/operations\//, status: 502 });
      await p.create({ name: 'busy' });
      expect(clock.sleeps).toEqual(expect.arrayContaining([2000, 4000]));
      expect(emu.server.pendingFaults()).toBe(0);
    }));

  it('gives up on a lock that never clears, saying what holds it', () =>
    withNeon(
      {},
      async (p, emu) => {
        await p.capabilities();
        emu.server.fail({
          method: 'POST',
          path: /\/branches$/,
          status: 423,
          body: { message: 'project already has running operations' },
          times: 100,
        });
        await expect(p.create({ name: 'busy' })).rejects.toMatchObject({
          code: 'service-error',
          hint: expect.stringContaining('Operations'),
        });
      },
      { retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 } },
    ));

  it.each([
    [
      'a wrong API key',
      (emu: NeonEmulator) => ({ ...emu.env(), NEON_API_KEY: 'napi_wrong_key_1234' }),
      'auth',
      /NEON_API_KEY/,
    ],
    [
      'a missing project',
      (emu: NeonEmulator) => ({ ...emu.env(), NEON_PROJECT_ID: 'no-such-project' }),
      'project-not-found',
      /NEON_PROJECT_ID/,
    ],
  ])('%s is a clear error that says what to fix', (_label, env, code, hint) =>
    withNeon(
      {},
      async (p) => {
        const error = await p.list().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toMatchObject({ code, hint: expect.stringMatching(hint) });
        expect(String(error)).not.toContain('napi_wrong_key_1234');
      },
      {},
      env,
    ),
  );

  it('stops at the branch limit with what to do', () =>
    withNeon({ maxBranches: 2 }, async (p) => {
      await p.create({ name: 'one' });
      await expect(p.create({ name: 'two' })).rejects.toMatchObject({
        code: 'branch-limit',
        hint: expect.stringContaining('consort branch gc'),
      });
    }));

  it('times out operations that never finish', () =>
    withNeon(
      { opPolls: 10_000, lock: false },
      async (p) => {
        await expect(p.create({ name: 'stuck' })).rejects.toMatchObject({
          code: 'timeout',
          message: expect.stringContaining('creating branch stuck'),
        });
      },
      { poll: { initialDelayMs: 5, maxDelayMs: 10, timeoutMs: 200 } },
    ));

  it("refuses the parent's URL for a new branch (the bug that ran migrations on main), and removes the branch", () =>
    withNeon({ bug: 'parent-uri' }, async (p, emu) => {
      await expect(p.create({ name: 'preview' })).rejects.toMatchObject({
        code: 'internal',
        message: expect.stringContaining('is the address of its parent "main"'),
      });
      expect(emu.byName('preview')).toBeUndefined();
    }));
});

describe('neon: restore as the API defines it', () => {
  it('resets a branch that has a hidden staging child by keeping the old state under preserve_under_name', () =>
    withNeon({}, async (p, emu) => {
      await query(await p.connectionUri('main'), 'CREATE TABLE t (x int); INSERT INTO t VALUES (1)');
      await p.create({ name: 'pr-20' });
      await query(await p.connectionUri('pr-20'), 'INSERT INTO t VALUES (2)');
      // A staging branch under pr-20 (another run's prepare in flight, or a killed run's leftover).
      let reset: Promise<unknown> | undefined;
      await p.create({
        name: 'pr-20-baseline',
        parent: 'pr-20',
        prepare: async () => {
          reset = p.reset('pr-20');
          await reset;
        },
      });
      await reset;
      const restore = emu.server.sent('POST', /\/restore$/).at(-1)!;
      expect(restore.body).toEqual({
        source_branch_id: emu.byName('main')!.id,
        preserve_under_name: expect.stringMatching(/^consort-stage-[0-9a-f]{10}$/),
      });
      expect(restore.handledStatus).toBe(200);
      expect(await count(await p.connectionUri('pr-20'))).toBe(1);
      expect((await p.list()).map((b) => b.name)).toEqual(['main', 'pr-20', 'pr-20-baseline']); // the kept old state stays hidden
    }));

  it('the emulator refuses a restore under children without preserve_under_name, as Neon does', () =>
    withNeon({}, async (p, emu) => {
      await p.create({ name: 'pr-21' });
      await p.create({ name: 'pr-21-child', parent: 'pr-21' });
      const res = await fetch(
        `${emu.server.url}/api/v2/projects/${emu.o.projectId}/branches/${emu.byName('pr-21')!.id}/restore`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${emu.o.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ source_branch_id: emu.byName('main')!.id }),
        },
      );
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ message: expect.stringContaining('preserve_under_name') });
    }));
});

describe('neon: a create whose answer is lost is neither repeated nor leaked', () => {
  it.each([
    ['answers 504 after creating it', { status: 504, afterHandling: true }],
    ['drops the connection after creating it', { status: 0, afterHandling: true, drop: true }],
  ])('the API %s: Consort finds the branch by its request id and adopts it', (_label, fault) =>
    withNeon({ opPolls: 2 }, async (p, emu) => {
      await p.capabilities();
      emu.server.fail({ method: 'POST', path: /\/branches$/, ...fault });
      expect(await p.create({ name: 'pr-30', ttlMs: 3_600_000 })).toMatchObject({ name: 'pr-30', parent: 'main' });
      expect(emu.server.count('POST', /\/branches$/)).toBe(1);
      expect([...emu.branches.values()].filter((b) => b.name === 'pr-30')).toHaveLength(1);
      expect(emu.byName('pr-30')!.annotations['consort-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(
        emu.server.sent('GET', /\/branches$/).some((e) => new URLSearchParams(e.query).get('search') === 'pr-30'),
      ).toBe(true);
    }),
  );

  it('finds the adopted branch past the first page of a partial-name search', () =>
    withNeon({ pageSize: 2 }, async (p, emu) => {
      await p.create({ name: 'pr-33-rev' });
      await p.create({ name: 'pr-33-suite' });
      emu.server.fail({ method: 'POST', path: /\/branches$/, status: 504, afterHandling: true });
      await p.create({ name: 'pr-33' });
      const searches = emu.server
        .sent('GET', /\/branches$/)
        .filter((e) => new URLSearchParams(e.query).get('search') === 'pr-33');
      expect(searches.map((e) => new URLSearchParams(e.query).get('cursor'))).toEqual([null, '2']);
      expect([...emu.branches.values()].filter((b) => b.name === 'pr-33')).toHaveLength(1);
    }));

  it('the API answers 500 without creating it: Consort looks, finds nothing, sends it again once', () =>
    withNeon({}, async (p, emu) => {
      await p.capabilities();
      emu.server.fail({ method: 'POST', path: /\/branches$/, status: 500 });
      await p.create({ name: 'pr-31' });
      expect(emu.server.count('POST', /\/branches$/)).toBe(2);
      expect([...emu.branches.values()].filter((b) => b.name === 'pr-31')).toHaveLength(1);
    }));

  it('never adopts a branch another request made under the same name', () =>
    withNeon(
      {},
      async (p, emu) => {
        await p.capabilities();
        emu.server.fail({
          method: 'POST',
          path: /\/branches$/,
          status: 502,
          meanwhile: async () => {
            const other = await fetch(`${emu.server.url}/api/v2/projects/${emu.o.projectId}/branches`, {
              method: 'POST',
              headers: { authorization: `Bearer ${emu.o.apiKey}`, 'content-type': 'application/json' },
              body: JSON.stringify({
                branch: { name: 'pr-32', parent_id: emu.byName('main')!.id },
                endpoints: [{ type: 'read_write' }],
                annotation_value: { 'consort-request-id': 'someone-else' },
              }),
            });
            expect(other.status).toBe(201);
          },
        });
        await expect(p.create({ name: 'pr-32' })).rejects.toMatchObject({
          code: 'branch-exists',
          message: expect.stringContaining('another request'),
        });
        expect([...emu.branches.values()].filter((b) => b.name === 'pr-32')).toHaveLength(1);
      },
      { retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 } },
    ));

  it('waits out slow operations', () =>
    withNeon(
      { opDelayMs: 300, lock: false },
      async (p) => {
        const started = Date.now();
        await p.create({ name: 'slow' });
        expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      },
      {
        clock: {
          now: () => Date.now(),
          sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 50))),
        } as FastClock,
      },
    ));
});
