/**
 * The local host over HTTP: every view and its JSON, pagination, live changes over server-sent
 * events, approval (token, origin, hash) through the same rules as `consort approve`, and agent
 * text that stays text.
 */
import { appendFile, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { LocalSource } from '../../src/dashboard/local-source.js';
import { startLocalDashboard, type LocalDashboard } from '../../src/dashboard/local-server.js';
import { HOSTILE, makeFixture, T0, turn, type Fixture } from './fixture.js';

let fx: Fixture;
let source: LocalSource;
let server: LocalDashboard;

beforeAll(async () => {
  fx = await makeFixture();
  source = new LocalSource({
    root: fx.root,
    debounceMs: 50,
    branches: async () => [
      {
        name: 'main',
        parent: null,
        gitBranch: 'main',
        pr: null,
        createdAt: new Date(T0).toISOString(),
        expiresAt: null,
        sizeBytes: 8_000_000,
        mode: 'clone',
      },
      {
        name: 'ci-pr-12',
        parent: 'main',
        gitBranch: 'feature/x',
        pr: 12,
        createdAt: new Date(T0).toISOString(),
        expiresAt: new Date(T0 + 86_400_000).toISOString(),
        sizeBytes: null,
        mode: 'clone',
      },
    ],
  });
  server = await startLocalDashboard({ source, port: 0, approver: 'Ada' });
});
afterAll(async () => {
  source.close();
  await server.close();
  await rm(fx.root, { recursive: true, force: true });
});

async function get(p: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${p}`, { headers });
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    csp: res.headers.get('content-security-policy'),
    text: await res.text(),
  };
}

/** The cookie of the browser signed in with the one-time link (set by the sign-in test). */
let signedIn = '';
const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
const hashOf = (page: string) => /name="hash" value="([^"]+)"/.exec(page)?.[1] ?? '';

describe('consort dashboard (local host)', () => {
  it('binds 127.0.0.1 and refuses other Host names (DNS rebinding)', async () => {
    expect(new URL(server.url).hostname).toBe('127.0.0.1');
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: server.port, path: '/', headers: { host: 'evil.example:80' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject);
    });
    expect(status).toBe(421);
  });

  it('lists features with where they are, what waits for a person, turns and cost', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.csp).toContain("script-src 'self'");
    expect(page.text).toContain('001-phones');
    expect(page.text).toContain('⏸ spec gate');
    expect(page.text).toContain('002-carts');
    expect(page.text).toMatch(/aria-label="Cost per feature"/);
    const api = JSON.parse((await get('/api')).text) as {
      features: { feature: string; turns: number; costUsd: number; openGate: string | null }[];
    };
    expect(api.features.map((f) => [f.feature, f.turns, f.openGate])).toEqual([
      ['001-phones', 5, 'spec'],
      ['002-carts', 13, null],
    ]);
    expect(api.features[0]!.costUsd).toBeCloseTo(0.88);
    const waiting = JSON.parse((await get('/api?state=waiting')).text) as { features: { feature: string }[] };
    expect(waiting.features.map((f) => f.feature)).toEqual(['001-phones']);
  });

  it('draws the timeline with cycles and gates, and tables the turns and cycles', async () => {
    const page = await get(`/features/${fx.building}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/aria-label="Timeline of turns by role"/);
    expect(page.text).toContain('T1 red');
    expect(page.text).toContain('spec ✓ alice');
    expect(page.text).toContain('id="cycles"');
    expect(page.text).toContain('✗ refused');
    const api = JSON.parse((await get(`/api/features/${fx.building}`)).text) as {
      cycles: unknown[];
      turns: { total: number };
      gates: { gate: string; status: string }[];
    };
    expect(api.cycles).toHaveLength(2);
    expect(api.turns.total).toBe(13);
    // The recorded approval does not match the artifacts as they are now.
    expect(api.gates.find((g) => g.gate === 'spec')?.status).toBe('stale');
  });

  it('pages the turns', async () => {
    const p2 = JSON.parse((await get(`/api/features/${fx.building}/turns?page=2&pageSize=10`)).text) as {
      items: { id: string }[];
      total: number;
      page: number;
    };
    expect(p2).toMatchObject({ total: 13, page: 2 });
    expect(p2.items.map((t) => t.id)).toEqual(['turn-0010', 'turn-0011', 'turn-0012']);
  });

  it('shows a turn: verdict, scope, files, summary and transcript — agent text escaped', async () => {
    const page = await get(`/features/${fx.gated}/turns/turn-0001`);
    expect(page.status).toBe(200);
    for (const bad of ['<script>window.__pwned', '<a href="javascript:', '<img src=x', '<b onmouseover'])
      expect(page.text).not.toContain(bad);
    expect(page.text).toContain('&lt;script&gt;window.__pwned = 1&lt;/script&gt;');
    expect(page.text).toContain('&lt;/textarea&gt;&lt;img src=x onerror=&quot;window.__pwned=3&quot;&gt;');
    expect(page.text).toContain('id="transcript"');
    const api = JSON.parse((await get(`/api/features/${fx.gated}/turns/turn-0001`)).text) as {
      record: { reason: string };
      transcript: { text: string };
    };
    expect(api.record.reason).toContain(HOSTILE.script);
    expect(api.transcript.text).toContain(HOSTILE.textarea);
    expect((await get(`/features/${fx.gated}/turns/turn-9999`)).status).toBe(404);
    expect((await get('/features/..%2F..%2Fetc/turns/x')).status).toBe(404);
  });

  it('shows checks with a trend plot and the last report, newest first, paged', async () => {
    const page = await get('/checks');
    expect(page.text).toMatch(/aria-label="Check duration trend \(seconds\)"/);
    expect(page.text).toContain('id="last-report"');
    const api = JSON.parse((await get('/api/checks')).text) as {
      total: number;
      items: { id: string; stages: unknown[] }[];
      last: { schemaVersion: number };
    };
    expect(api.total).toBe(12);
    expect(api.items[0]!.id).toBe('1011');
    expect(api.items[0]!.stages).toHaveLength(7);
    expect(api.last.schemaVersion).toBe(1);
  });

  it('shows the branch tree', async () => {
    const page = await get('/branches');
    expect(page.text).toContain('└ ci-pr-12');
    expect(JSON.parse((await get('/api/branches')).text)).toMatchObject({
      branches: [{ name: 'main' }, { name: 'ci-pr-12', pr: 12 }],
    });
  });

  it('serves the files a person reads before approving, and nothing outside the feature', async () => {
    const file = await get(`/features/${fx.gated}/files/feature-spec.json`);
    expect(file.status).toBe(200);
    expect(file.text).toContain('Customers have phone numbers.');
    expect((await get(`/features/${fx.gated}/files/..%2F..%2F..%2FREADME.md`)).status).toBe(404);
  });

  it('sends a change event as a new turn record is written', async () => {
    const controller = new AbortController();
    const res = await fetch(`${server.url}/events`, { signal: controller.signal });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    await reader.read(); // retry: line
    const started = Date.now();
    await appendFile(
      path.join(fx.root, `.consort/features/${fx.building}/turns.jsonl`),
      `${JSON.stringify(turn({ id: 'turn-0013', role: 'driver', step: 'green', item: 'T2' }, fx.building, T0 + 9e6))}\n`,
    );
    while (!seen.includes(`"feature":"${fx.building}"`)) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value);
    }
    const elapsed = Date.now() - started;
    controller.abort();
    expect(seen).toContain('event: change');
    // The watcher's event (there is no polling): well under a second on an idle machine, bounded
    // loosely for a loaded CI one.
    expect(elapsed).toBeLessThan(5000);
    expect(JSON.parse((await get('/api')).text).features[1].turns).toBe(14);
  });

  it('lets only a browser signed in with the one-time link approve', async () => {
    // Any local process can read the pages, but gets no form and no token.
    const anonymous = await get(`/features/${fx.gated}/gates`);
    expect(anonymous.text).toContain('⏸ pending');
    expect(csrfOf(anonymous.text)).toBe('');
    expect(anonymous.text).toContain('sign-in link');
    const signIn = (url: string) => fetch(url, { redirect: 'manual' });
    const key = new URL(server.signInUrl).searchParams.get('key') ?? '';
    expect(key.length).toBeGreaterThanOrEqual(32);
    expect((await signIn(`${server.url}/sign-in?key=${'x'.repeat(key.length)}`)).status).toBe(403);
    expect((await signIn(`${server.url}/sign-in`)).status).toBe(403);
    const first = await signIn(server.signInUrl);
    expect(first.status).toBe(303);
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toMatch(/Max-Age/);
    // Used once: the link found later (a history file, the opener's argv) is worth nothing.
    const again = await signIn(server.signInUrl);
    expect(again.status).toBe(403);
    expect(await again.text()).toContain('already used');
    expect(again.headers.get('set-cookie')).toBeNull();
    signedIn = cookie.split(';')[0]!;
    const page = await get(`/features/${fx.gated}/gates`, { cookie: signedIn });
    const csrf = csrfOf(page.text);
    expect(csrf).not.toBe('');
    // The page's token without the browser's cookie approves nothing.
    const res = await fetch(`${server.url}/features/${fx.gated}/gates/spec/approve`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ csrf, hash: hashOf(page.text), read: 'yes', approver: 'Mallory' }).toString(),
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('sign-in link');
    const forgedCookie = { cookie: `${signedIn.split('=')[0]}=${'A'.repeat(32)}` };
    expect(csrfOf((await get(`/features/${fx.gated}/gates`, forgedCookie)).text)).toBe('');
  });

  it('approves a gate only with the token, from this origin, for the hash that was shown', async () => {
    const gates = await get(`/features/${fx.gated}/gates`, { cookie: signedIn });
    expect(gates.text).toContain('⏸ pending');
    const csrf = csrfOf(gates.text);
    const hash = hashOf(gates.text);
    expect(csrf).not.toBe('');
    expect(hash).toMatch(/^sha256:/);
    const post = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/features/${fx.gated}/gates/spec/approve`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: server.url,
          cookie: signedIn,
          ...headers,
        },
        body: new URLSearchParams(body).toString(),
      });
    expect((await post({ csrf: 'forged', hash, read: 'yes', approver: 'Ada' })).status).toBe(403);
    expect((await post({ csrf, hash, read: 'yes', approver: 'Ada' }, { origin: 'https://evil.example' })).status).toBe(
      403,
    );
    expect((await post({ csrf, hash, approver: 'Ada' })).status).toBe(400);
    expect((await post({ csrf, hash: `sha256:${'0'.repeat(64)}`, read: 'yes', approver: 'Ada' })).status).toBe(409);
    expect((await post({ csrf, hash, read: 'yes', approver: 'proxy' })).status).toBe(409);
    const ok = await post({ csrf, hash, read: 'yes', approver: 'Ada' });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe(`/features/${fx.gated}/gates?approved=spec`);
    const recorded = JSON.parse(
      await readFile(path.join(fx.root, `.consort/features/${fx.gated}/gates.json`), 'utf8'),
    ) as { gates: { spec: { approval: { approver: string; hash: string } } } };
    expect(recorded.gates.spec.approval).toMatchObject({ approver: 'Ada', hash });
    const after = JSON.parse((await get(`/api/features/${fx.gated}/gates`)).text) as {
      gates: { gate: string; status: string }[];
    };
    expect(after.gates.find((g) => g.gate === 'spec')?.status).toBe('approved');
  });
});
