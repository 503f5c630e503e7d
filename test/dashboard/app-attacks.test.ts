/**
 * The App's /dashboard attacked over real HTTP, against the real server, a real PostgreSQL store
 * and the local GitHub stand-in: the sign-in flow (state, return-to, codes), the sealed session
 * cookie, access to a repository one cannot read or can no longer read (pages, JSON, the event
 * stream), the approval form (origin, token, stale hash, another repository's feature), paging
 * parameters and malformed input, and a flood of event streams from one person.
 */
import { execFileSync } from 'node:child_process';
import { appendFile, mkdir, rm, writeFile } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import { closeServer, createAppServer, listen } from '../../app/http.js';
import { approvalCommentBody } from '../../app/dashboard/approve.js';
import { githubRecords } from '../../app/dashboard/github-records.js';
import { createAppDashboard, STREAMS_PER_PERSON, type AppDashboard } from '../../app/dashboard/host.js';
import { indexPull, MAX_RECORD_BYTES, type PullHead } from '../../app/dashboard/indexer.js';
import { restClient } from '../../app/dashboard/rest-client.js';
import { migrateStore, openStore, type Store } from '../../app/store/db.js';
import { upsertPull } from '../../app/store/pulls.js';
import { parseCommand } from '../../src/github/commands.js';
import { octokitGitHub } from '../../src/github/octokit.js';
import { newSession, signSession } from '../../src/dashboard/session.js';
import { uncountedApproval } from '../../src/lanes/tdd/pull-request.js';
import { GATE_MARKER } from '../../src/report/turn-markdown.js';
import { freshDatabase, type TestDatabase } from '../app/helpers/database.js';
import { ACTIONS_BOT, startFakeGitHub, type FakeGitHub } from '../helpers/fake-github.js';
import { makeFixture, T0, turn, type Fixture } from './fixture.js';
import { CLIENT_ID, CLIENT_SECRET, installOAuthAndGit, INSTALLATION_TOKEN, type OAuthStandIn } from './github-oauth.js';

const OWNER = 'octo';
const REPO = 'shop';
const BRANCH = 'feature/phones';
const SECRET = 'another-session-secret-of-32-characters!';
const ACCESS_TTL_MS = 300;

let fx: Fixture;
let fake: FakeGitHub;
let stand: OAuthStandIn;
let db: TestDatabase;
let store: Store;
let dashboard: AppDashboard;
let server: http.Server;
let url = '';
let head: PullHead;
/** A second repository on another GitHub installation (mal/pub), for what the App shares across repositories. */
let other: { fx: Fixture; fake: FakeGitHub; stand: OAuthStandIn } | null = null;

const base = `/dashboard/${OWNER}/${REPO}`;
/** The pull request as GitHub answers it (author octocat unless given): the approval rule asks for its author and base. */
const githubPull = (number: number, sha: string, ref: string, author?: string) => ({
  number,
  state: 'open' as const,
  title: 'phones',
  body: null,
  head: { ref, sha, repo: `${OWNER}/${REPO}` },
  base: { ref: 'main', sha: 'b'.repeat(40) },
  ...(author ? { author } : {}),
});
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Agent', '-c', 'user.email=agent@example.com', ...args], {
    cwd: fx.root,
    encoding: 'utf8',
  }).trim();
/** A session cookie as the App seals it after a sign-in (the token is only used to write). */
const cookieOf = (login: string, token = `gho_${login}-not-issued`) =>
  `consort_session=${signSession(newSession(login, token, Date.now()), SECRET)}`;
const get = (p: string, cookie?: string, headers: Record<string, string> = {}) =>
  fetch(`${url}${p}`, { redirect: 'manual', headers: { ...(cookie ? { cookie } : {}), ...headers } });

beforeAll(async () => {
  fx = await makeFixture('consort-dashboard-attacks-');
  git('checkout', '-q', '-b', BRANCH);
  git('add', '-A');
  git('commit', '-q', '-m', "the lane's records");
  fake = await startFakeGitHub(OWNER, REPO);
  fake.permissions.set('ada', 'write');
  fake.permissions.set('rita', 'read');
  fake.permissions.set('walt', 'read');
  stand = installOAuthAndGit(fake, OWNER, REPO, path.join(fx.root, '.git'));
  db = await freshDatabase();
  await migrateStore(db.url);
  store = openStore(db.url);
  head = {
    repositoryId: 4242,
    installationId: 77,
    owner: OWNER,
    repo: REPO,
    pr: 12,
    headSha: git('rev-parse', 'HEAD'),
    headRef: BRANCH,
  };
  await upsertPull(store.pool, {
    ...head,
    number: head.pr,
    baseSha: 'b'.repeat(40),
    baseRef: 'main',
    fork: false,
    state: 'open',
  });
  fake.setPull(githubPull(head.pr, head.headSha, BRANCH));
  await indexPull(store, githubRecords(restClient(fake.url, INSTALLATION_TOKEN)), head);
  server = createAppServer({
    webhooks: (_req, _res, next) => next?.(),
    healthy: async () => true,
    version: 'test',
    dashboard: (req, res) => dashboard.handle(req, res),
  });
  ({ url } = await listen(server, 0, '127.0.0.1'));
  stand.redirectUri = `${url}/dashboard/callback`;
  dashboard = createAppDashboard({
    store,
    storeUrl: db.url,
    settings: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, publicUrl: url, sessionSecret: SECRET },
    github: { apiUrl: fake.url, webUrl: fake.url },
    accessTtlMs: ACCESS_TTL_MS,
    installation: async (id) => restClient(id === 99 && other ? other.fake.url : fake.url, INSTALLATION_TOKEN),
  });
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
  if (server) {
    server.closeAllConnections();
    await closeServer(server);
  }
  await store?.close();
  await db?.drop();
  stand?.close();
  await fake?.close();
  if (fx) await rm(fx.root, { recursive: true, force: true });
  other?.stand.close();
  await other?.fake.close();
  if (other) await rm(other.fx.root, { recursive: true, force: true });
});

/** The sign-in flow up to the callback: the state cookie, GitHub's grant, the URL GitHub sends the browser back to. */
async function startSignIn(
  login: string,
  next?: string,
): Promise<{ stateCookie: string; back: string; state: string }> {
  const start = await get(`/dashboard/login${next === undefined ? '' : `?next=${encodeURIComponent(next)}`}`);
  const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
  const stateCookie = start.headers.get('set-cookie')!.split(';')[0]!;
  const grant = await fetch(
    `${fake.url}/login/oauth/authorize/grant?login=${login}&redirect_uri=${encodeURIComponent(stand.redirectUri)}&state=${state}`,
    { redirect: 'manual' },
  );
  return { stateCookie, back: grant.headers.get('location')!, state };
}

/** Signed in for real (through GitHub's grant): the dashboard's session cookie for `login`. */
async function signedInCookie(login: string): Promise<string> {
  const signIn = await startSignIn(login);
  const back = await fetch(signIn.back, { redirect: 'manual', headers: { cookie: signIn.stateCookie } });
  return /consort_session=[^;]+/.exec(back.headers.get('set-cookie') ?? '')![0];
}

/** The gates page's approval form for `feature` as `cookie` sees it, and a POST approving `spec` with it. */
async function specApproval(feature: string, cookie: string) {
  const page = await (await get(`${base}/features/${feature}/gates`, cookie)).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
  const hash = /name="hash" value="([^"]+)"/.exec(page)![1]!;
  const approve = () =>
    fetch(`${url}${base}/api/features/${feature}/gates/spec/approve`, {
      method: 'POST',
      headers: { cookie, origin: url, 'content-type': 'application/json' },
      body: JSON.stringify({ csrf, hash, read: 'yes' }),
    });
  return { hash, approve };
}

describe('sign-in', () => {
  it('returns only to a path on this dashboard, whatever `next` says', async () => {
    for (const next of [
      '//evil.example/x',
      'https://evil.example/',
      '/dashboard//evil.example',
      '/dashboard/\\evil.example',
      '/\\evil.example',
      '/dashboardevil',
      'javascript:alert(1)',
      '/dashboard/%0d%0aSet-Cookie:x=1',
    ]) {
      const { stateCookie, back } = await startSignIn('rita', next);
      const res = await fetch(back, { redirect: 'manual', headers: { cookie: stateCookie } });
      const location = res.headers.get('location') ?? '';
      expect([
        res.status,
        location.startsWith('/dashboard/'),
        location.startsWith('//'),
        /[\r\n]/.test(location),
      ]).toEqual([302, true, false, false]);
      expect(res.headers.get('set-cookie')).not.toContain('x=1');
    }
    const { stateCookie, back } = await startSignIn('rita', `${base}/checks`);
    expect((await fetch(back, { redirect: 'manual', headers: { cookie: stateCookie } })).headers.get('location')).toBe(
      `${base}/checks`,
    );
  });

  it('refuses a state from another browser, no state, and a state cookie replayed after use', async () => {
    const mine = await startSignIn('rita');
    const theirs = await startSignIn('eve');
    // Login CSRF: eve's code and state delivered to rita's browser (which holds its own state cookie).
    expect((await fetch(theirs.back, { redirect: 'manual', headers: { cookie: mine.stateCookie } })).status).toBe(400);
    const noState = new URL(theirs.back);
    noState.searchParams.delete('state');
    expect((await fetch(noState, { redirect: 'manual' })).status).toBe(400);
    expect((await fetch(noState, { redirect: 'manual', headers: { cookie: 'consort_oauth=' } })).status).toBe(400);
    const ok = await fetch(mine.back, { redirect: 'manual', headers: { cookie: mine.stateCookie } });
    expect(ok.status).toBe(302);
    expect(ok.headers.get('set-cookie')).toContain('consort_oauth=; Path=/dashboard; Max-Age=0');
    // The same state with a fresh code (a replayed link): the code is GitHub's to refuse, and it does.
    const again = await fetch(mine.back, { redirect: 'manual', headers: { cookie: mine.stateCookie } });
    expect(again.status).toBe(400);
  });

  it('puts no token in a URL or a page, and issues a new session on every sign-in (no fixation)', async () => {
    const planted = cookieOf('eve');
    const { stateCookie, back } = await startSignIn('rita');
    const res = await fetch(back, { redirect: 'manual', headers: { cookie: `${stateCookie}; ${planted}` } });
    const issued = /consort_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]!;
    expect(issued).not.toBe(planted.split('=')[1]);
    expect(res.headers.get('location')).not.toMatch(/gho_|code=/);
    expect(res.headers.get('referrer-policy')).toBe('same-origin');
    const home = await get('/dashboard/', `consort_session=${issued}`);
    const text = await home.text();
    expect(text).toContain('rita');
    expect(text).not.toContain('gho_');
  });

  it('signs out only through its own form: another site cannot sign a person out', async () => {
    const rita = cookieOf('rita');
    const home = await (await get('/dashboard/', rita)).text();
    const csrf = /class="sign-out"[^>]*>[^<]*<input type="hidden" name="csrf" value="([^"]+)"/.exec(home)![1]!;
    const cleared = (r: Response) => /consort_session=;/.test(r.headers.get('set-cookie') ?? '');
    const out = (headers: Record<string, string>, body: string) =>
      fetch(`${url}/dashboard/logout`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: rita, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });
    const byLink = await get('/dashboard/logout', rita);
    expect([byLink.status, cleared(byLink)]).toEqual([200, false]);
    const crossSite = await out({ origin: 'https://evil.example' }, `csrf=${csrf}`);
    expect([crossSite.status, cleared(crossSite)]).toEqual([403, false]);
    const noToken = await out({}, '');
    expect([noToken.status, cleared(noToken)]).toEqual([403, false]);
    const own = await out({ origin: url }, `csrf=${csrf}`);
    expect([own.status, own.headers.get('location'), cleared(own)]).toEqual([302, '/dashboard/', true]);
  });

  it('refuses a tampered, expired or foreign-secret session cookie', async () => {
    const good = signSession(newSession('rita', 'gho_x', Date.now()), SECRET);
    const [payload, tag] = good.split('.') as [string, string];
    const flipped = Buffer.from(payload, 'base64url');
    flipped[20] = flipped[20]! ^ 1;
    for (const value of [
      `${flipped.toString('base64url')}.${tag}`,
      signSession(newSession('rita', 'gho_x', Date.now() - 9 * 3_600_000), SECRET),
      signSession(newSession('rita', 'gho_x', Date.now()), 'x'.repeat(40)),
      `${payload}.`,
      '',
    ]) {
      expect((await get(`${base}/api/features/${fx.gated}`, `consort_session=${value}`)).status).toBe(401);
    }
    expect((await get(`${base}/api/features/${fx.gated}`, `consort_session=${good}`)).status).toBe(200);
  });
});

describe('access', () => {
  it('shows nothing of a repository to someone who cannot read it, on every endpoint, and refuses traversal', async () => {
    const eve = cookieOf('eve');
    const paths = [
      '/',
      '/checks',
      '/branches',
      '/api/checks',
      '/api/branches',
      `/api/features/${fx.gated}`,
      `/api/features/${fx.gated}/turns`,
      `/api/features/${fx.gated}/gates`,
      `/features/${fx.gated}/turns/turn-0001`,
      `/api/features/${fx.gated}/files/feature-spec.json`,
      '/events',
    ];
    for (const p of paths) {
      const res = await get(`${base}${p}`, eve);
      expect([p, res.status]).toEqual([p, 404]);
      expect(await res.text()).not.toContain(fx.gated);
    }
    const rita = cookieOf('rita');
    for (const p of [
      `/api/features/..%2f..%2f${fx.gated}`,
      `/api/features/${fx.gated}/files/..%2fstate.json`,
      `/api/features/${fx.gated}/files/../../../README.md`,
      `/api/features/${fx.gated}/turns/..%2f..%2fstate`,
    ]) {
      const res = await get(`${base}${p}`, rita);
      expect([p, res.status]).toEqual([p, 404]);
    }
    // Another owner's name and the case of this one: the same repository or none, never someone else's.
    expect((await get(`/dashboard/${OWNER}%2F${REPO}/x/api/checks`, rita)).status).toBe(404);
  });

  it('answers malformed input with 400, not 500', async () => {
    const rita = cookieOf('rita');
    expect((await get(`${base}/api/features/${fx.building}/turns?pageSize=abc`, rita)).status).toBe(200);
    const huge = await get(
      `${base}/api/features/${fx.building}/turns?pageSize=100000000&page=99999999999999999999`,
      rita,
    );
    expect(huge.status).toBe(200);
    expect(((await huge.json()) as { pageSize: number }).pageSize).toBeLessThanOrEqual(500);
    expect((await get(`${base}/api/checks?page=-5`, rita)).status).toBe(200);
    expect((await get(`${base}/api/features/%E0%A4%A`, rita)).status).toBe(400);
    expect((await get(`/dashboard/%E0%A4%A/${REPO}/api/checks`, rita)).status).toBe(400);
  });

  it('stops sending changes to someone whose read access was taken away while the stream was open', async () => {
    fake.permissions.set('walt', 'read');
    const controller = new AbortController();
    const res = await fetch(`${url}${base}/events`, {
      headers: { cookie: cookieOf('walt') },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const received: string[] = [];
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return 'ended';
        received.push(Buffer.from(value).toString('utf8'));
      }
    })().catch(() => 'aborted');
    await dashboard.changes.ready();
    await store.pool.query('SELECT pg_notify($1, $2)', [
      'consort_dashboard',
      JSON.stringify({ repositoryId: head.repositoryId, feature: fx.gated }),
    ]);
    await waitFor(() => received.join('').includes('event: change'));
    fake.permissions.set('walt', 'none');
    await new Promise((r) => setTimeout(r, ACCESS_TTL_MS + 50));
    const before = received.join('').split('event: change').length;
    await store.pool.query('SELECT pg_notify($1, $2)', [
      'consort_dashboard',
      JSON.stringify({ repositoryId: head.repositoryId, feature: fx.building }),
    ]);
    const outcome = await Promise.race([reading, new Promise((r) => setTimeout(() => r('still open'), 2000))]);
    expect(received.join('').split('event: change').length).toBe(before);
    expect(received.join('')).not.toContain(fx.building);
    expect(outcome).toBe('ended');
    controller.abort();
    expect((await get(`${base}/events`, cookieOf('walt'))).status).toBe(404);
  });

  it('lets one person hold only a bounded number of event streams', async () => {
    const rita = cookieOf('rita');
    const controllers: AbortController[] = [];
    const statuses: number[] = [];
    // A stream the server ends (it may, when a change arrives and the person's permission cannot be
    // confirmed under load) gives its place back, so what is bounded is the streams open at once,
    // not the 200s in all: each accepted stream is read until it ends.
    const open = new Set<number>();
    try {
      for (let i = 0; i < 40; i++) {
        const c = new AbortController();
        controllers.push(c);
        const res = await fetch(`${url}${base}/events`, { headers: { cookie: rita }, signal: c.signal });
        statuses.push(res.status);
        if (res.status !== 200 || !res.body) continue;
        open.add(i);
        const reader = res.body.getReader();
        void (async () => {
          try {
            while (!(await reader.read()).done);
          } catch {
            if (c.signal.aborted) return; // our own abort, in the finally below
          }
          open.delete(i);
        })();
      }
      await new Promise((r) => setTimeout(r, 300)); // let an end the server sent reach us
      expect(open.size).toBeGreaterThan(0);
      expect(open.size).toBeLessThanOrEqual(STREAMS_PER_PERSON);
      expect(statuses).toContain(429);
      // Someone else is not held back by rita's streams.
      const other = new AbortController();
      controllers.push(other);
      expect(
        (await fetch(`${url}${base}/events`, { headers: { cookie: cookieOf('ada') }, signal: other.signal })).status,
      ).toBe(200);
    } finally {
      for (const c of controllers) c.abort();
    }
    // Closed streams are given back.
    await waitFor(async () => {
      const c = new AbortController();
      const status = (await fetch(`${url}${base}/events`, { headers: { cookie: rita }, signal: c.signal })).status;
      c.abort();
      return status === 200;
    });
  });
});

describe('approval', () => {
  const approveUrl = (feature: string, gate = 'spec') => `${url}${base}/api/features/${feature}/gates/${gate}/approve`;

  it('refuses a stale hash, a gate not waiting, a foreign origin and a missing token, and answers a malformed body with 400', async () => {
    const ada = cookieOf('ada');
    const gates = (await (await get(`${base}/api/features/${fx.gated}/gates`, ada)).json()) as {
      gates: { gate: string; hash: string }[];
    };
    const hash = gates.gates.find((g) => g.gate === 'spec')!.hash;
    const page = await (await get(`${base}/features/${fx.gated}/gates`, ada)).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    const post = (body: unknown, headers: Record<string, string> = {}, feature = fx.gated, gate = 'spec') =>
      fetch(approveUrl(feature, gate), {
        method: 'POST',
        headers: { cookie: ada, 'content-type': 'application/json', origin: url, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    expect((await post({ csrf, hash: `sha256:${'0'.repeat(64)}`, read: 'yes' })).status).toBe(409);
    expect((await post({ csrf, hash, read: 'yes' }, {}, fx.gated, 'merge')).status).toBe(409);
    expect((await post({ csrf, hash, read: 'yes' }, {}, fx.building)).status).toBe(409);
    expect((await post({ csrf, hash, read: 'yes' }, { origin: 'null' })).status).toBe(403);
    expect((await post({ hash, read: 'yes' })).status).toBe(400);
    // Another session's token (same person, another sign-in) is not this one's.
    const other = /name="csrf" value="([^"]+)"/.exec(
      await (await get(`${base}/features/${fx.gated}/gates`, cookieOf('ada'))).text(),
    )![1]!;
    expect((await post({ csrf: other, hash, read: 'yes' })).status).toBe(403);
    expect((await post('{"csrf":')).status).toBe(400);
    // The confirmation line after an approval names a gate, never text a link brings.
    const spoof = await (
      await get(
        `${base}/features/${fx.gated}/gates?approved=${encodeURIComponent('nothing: sign in again at evil.example')}`,
        ada,
      )
    ).text();
    expect(spoof).not.toContain('evil.example');
    expect(await (await get(`${base}/features/${fx.gated}/gates?approved=spec`, ada)).text()).toContain(
      'Approved the spec gate.',
    );
    expect((await post('x'.repeat(40_000))).status).toBe(413);
    expect(stand.commits).toEqual([]);
  });

  it('applies gates.selfApproval and gates.approvers from the base branch, as /consort approve does', async () => {
    const ada = cookieOf('ada');
    const gates = (await (await get(`${base}/api/features/${fx.gated}/gates`, ada)).json()) as {
      gates: { gate: string; hash: string }[];
    };
    const hash = gates.gates.find((g) => g.gate === 'spec')!.hash;
    const csrf = /name="csrf" value="([^"]+)"/.exec(
      await (await get(`${base}/features/${fx.gated}/gates`, ada)).text(),
    )![1]!;
    const post = async () => {
      const res = await fetch(approveUrl(fx.gated), {
        method: 'POST',
        headers: { cookie: ada, 'content-type': 'application/json', origin: url },
        body: JSON.stringify({ csrf, hash, read: 'yes' }),
      });
      return [res.status, ((await res.json()) as { error?: string }).error ?? ''] as const;
    };
    // The pull request's author may not approve its gates (gates.selfApproval defaults to false).
    fake.setPull(githubPull(head.pr, head.headSha, BRANCH, 'ada'));
    expect(await post()).toEqual([
      409,
      expect.stringContaining('the author of a pull request may not approve its gates'),
    ]);
    // The base branch's configuration names the approvers; ada is not one of them.
    fake.setPull(githubPull(head.pr, head.headSha, BRANCH));
    const config = Buffer.from(JSON.stringify({ gates: { approvers: ['grace'] } })).toString('base64');
    const asked: string[] = [];
    fake.routes.push((r) => {
      if (r.method !== 'GET' || !r.path.startsWith(`/repos/${OWNER}/${REPO}/contents/`)) return undefined;
      asked.push(`${r.path.slice(`/repos/${OWNER}/${REPO}/contents/`.length)}@${r.query.get('ref')}`);
      return r.path.endsWith('/consort.config.json') && r.query.get('ref') === 'main'
        ? {
            status: 200,
            body: {
              type: 'file',
              name: 'consort.config.json',
              path: 'consort.config.json',
              encoding: 'base64',
              content: config,
            },
          }
        : { status: 404, body: { message: 'Not Found' } };
    });
    try {
      expect(await post()).toEqual([
        409,
        expect.stringContaining('only the approvers gates.approvers names may approve gates (grace)'),
      ]);
      expect(asked).toEqual(['.github/consort.yml@main', '.github/consort.yaml@main', 'consort.config.json@main']);
    } finally {
      fake.routes.pop();
    }
    expect(stand.commits).toEqual([]);
  });
});

describe('records a pull request makes huge', () => {
  it('neither fetches nor keeps a record over the size limit, and will not rewrite one it did not read', async () => {
    // A second pull request (anyone can open one) whose head makes three of the feature's files 9 MiB.
    const big = (line: string) => `${line}\n`.repeat(Math.ceil((MAX_RECORD_BYTES + 1024 * 1024) / (line.length + 1)));
    const dir = path.join(fx.root, '.consort/features', fx.gated);
    git('checkout', '-q', '-b', 'huge');
    await writeFile(path.join(dir, 'transcripts/turn-0002.txt'), big('x'.repeat(99)));
    await mkdir(path.join(dir, 'reviews'), { recursive: true });
    await writeFile(path.join(dir, 'reviews/T1.json'), big(' '.repeat(99)));
    await appendFile(path.join(dir, 'events.jsonl'), big('{"not":"an event"}'));
    git('add', '-A');
    git('commit', '-q', '-m', 'huge records');
    const shas = ['transcripts/turn-0002.txt', 'reviews/T1.json', 'events.jsonl'].map((f) =>
      git('rev-parse', `HEAD:.consort/features/${fx.gated}/${f}`),
    );
    const pr13: PullHead = { ...head, pr: 13, headSha: git('rev-parse', 'HEAD'), headRef: 'huge' };
    git('checkout', '-q', BRANCH);
    await upsertPull(store.pool, {
      ...pr13,
      number: pr13.pr,
      baseSha: 'b'.repeat(40),
      baseRef: 'main',
      fork: false,
      state: 'open',
    });
    fake.setPull(githubPull(pr13.pr, pr13.headSha, 'huge'));
    const outcome = await indexPull(store, githubRecords(restClient(fake.url, INSTALLATION_TOKEN)), pr13);
    expect(outcome.features).toContain(fx.gated);
    expect(shas.map((sha) => stand.blobFetches.get(sha) ?? 0)).toEqual([0, 0, 0]);
    const { rows } = await store.pool.query(
      'SELECT max(octet_length(content)) AS n FROM consort_app.dashboard_files WHERE pr = 13',
    );
    expect(Number(rows[0].n)).toBeLessThan(MAX_RECORD_BYTES);
    const ada = cookieOf('ada');
    const turnRes = (await (await get(`${base}/api/features/${fx.gated}/turns/turn-0002`, ada)).json()) as {
      transcript: unknown;
      record: { summary: string };
    };
    expect([turnRes.record.summary.length > 0, turnRes.transcript]).toEqual([true, null]);
    expect(stand.blobFetches.get(shas[0]!) ?? 0).toBe(0);
    expect((await get(`${base}/api/features/${fx.gated}/files/reviews/T1.json`, ada)).status).toBe(404);
    // Approving would rewrite events.jsonl from what the index holds: refused, nothing committed
    // (ada signed in for real, so her token could commit).
    const adaReal = await signedInCookie('ada');
    const gates = (await (await get(`${base}/api/features/${fx.gated}/gates`, adaReal)).json()) as {
      gates: { gate: string; hash: string }[];
    };
    const csrf = /name="csrf" value="([^"]+)"/.exec(
      await (await get(`${base}/features/${fx.gated}/gates`, adaReal)).text(),
    )![1]!;
    const res = await fetch(`${url}${base}/api/features/${fx.gated}/gates/spec/approve`, {
      method: 'POST',
      headers: { cookie: adaReal, origin: url, 'content-type': 'application/json' },
      body: JSON.stringify({ csrf, hash: gates.gates.find((g) => g.gate === 'spec')!.hash, read: 'yes' }),
    });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: string }).error).toContain('events.jsonl');
    expect(stand.commits).toEqual([]);
  });
});

describe('what the App caches across repositories', () => {
  it("does not show one repository's diff counts in another whose records name the same commits", async () => {
    // octo/shop: a turn adds src/secret.js (5 lines) between two commits; ada opens it, so its counts are cached.
    git('checkout', '-q', '-b', 'secret-work', BRANCH);
    const from = git('rev-parse', 'HEAD');
    await mkdir(path.join(fx.root, 'src'), { recursive: true });
    await writeFile(path.join(fx.root, 'src/secret.js'), 'a\nb\nc\nd\ne\n');
    const secret = turn(
      { id: 'turn-0900', role: 'navigator', step: 'green', base: from, filesChanged: ['src/secret.js'] },
      fx.building,
      T0 + 9_000_000,
    );
    await appendFile(path.join(fx.root, `.consort/features/${fx.building}/turns.jsonl`), `${JSON.stringify(secret)}\n`);
    git('add', '-A');
    git('commit', '-q', '-m', 'secret work');
    const to = git('rev-parse', 'HEAD');
    git('checkout', '-q', BRANCH);
    const pr14: PullHead = { ...head, pr: 14, headSha: to, headRef: 'secret-work' };
    await upsertPull(store.pool, {
      ...pr14,
      number: 14,
      baseSha: 'b'.repeat(40),
      baseRef: 'main',
      fork: false,
      state: 'open',
    });
    fake.setPull(githubPull(14, pr14.headSha, 'secret-work'));
    await indexPull(store, githubRecords(restClient(fake.url, INSTALLATION_TOKEN)), pr14);
    const seen = (await (await get(`${base}/api/features/${fx.building}/turns/turn-0900`, cookieOf('ada'))).json()) as {
      diffStat: unknown;
    };
    expect(seen.diffStat).toEqual([{ path: 'src/secret.js', added: 5, removed: 0 }]);

    // mal/pub, another installation, which mallory can read: its records claim a turn between the same two commits.
    const ofx = await makeFixture('consort-dashboard-attacks-other-');
    const ofake = await startFakeGitHub('mal', 'pub');
    other = { fx: ofx, fake: ofake, stand: installOAuthAndGit(ofake, 'mal', 'pub', path.join(ofx.root, '.git')) };
    ofake.permissions.set('mallory', 'read');
    const claim = [
      turn(
        { id: 'turn-0900', role: 'navigator', step: 'green', base: from, filesChanged: ['src/secret.js'] },
        ofx.building,
        T0 + 9_000_000,
      ),
      turn({ id: 'turn-0901', role: 'navigator', step: 'green', base: to }, ofx.building, T0 + 9_100_000),
    ];
    await appendFile(
      path.join(ofx.root, `.consort/features/${ofx.building}/turns.jsonl`),
      claim.map((t) => `${JSON.stringify(t)}\n`).join(''),
    );
    execFileSync('git', ['add', '-A'], { cwd: ofx.root });
    execFileSync('git', ['-c', 'user.name=M', '-c', 'user.email=m@example.com', 'commit', '-q', '-m', 'claims'], {
      cwd: ofx.root,
    });
    const ohead: PullHead = {
      repositoryId: 9999,
      installationId: 99,
      owner: 'mal',
      repo: 'pub',
      pr: 1,
      headSha: execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ofx.root, encoding: 'utf8' }).trim(),
      headRef: 'main',
    };
    await upsertPull(store.pool, {
      ...ohead,
      number: 1,
      baseSha: 'b'.repeat(40),
      baseRef: 'main',
      fork: false,
      state: 'open',
    });
    await indexPull(store, githubRecords(restClient(ofake.url, INSTALLATION_TOKEN)), ohead);
    const res = await get(`/dashboard/mal/pub/api/features/${ofx.building}/turns/turn-0900`, cookieOf('mallory'));
    expect(res.status).toBe(200);
    // mal/pub's GitHub does not know those commits: no counts, and certainly not octo/shop's.
    expect(((await res.json()) as { diffStat: unknown }).diffStat).toEqual([
      { path: 'src/secret.js', added: null, removed: null },
    ]);
  });
});

describe('approval against a moving target', () => {
  it('refuses when write access was taken away since the page, and when a push lands between the page and the approval', async () => {
    const { approve } = await specApproval(fx.gated, await signedInCookie('ada'));
    const commitsBefore = stand.commits.length;
    // The cached answer still says write; the approval asks afresh.
    fake.permissions.set('ada', 'read');
    const demoted = await approve();
    expect([demoted.status, ((await demoted.json()) as { error: string }).error]).toEqual([
      409,
      expect.stringContaining('needs write access'),
    ]);
    fake.permissions.set('ada', 'write');
    // The feature is shown as indexed at the head of the pull request it was indexed for last; someone pushes there now.
    const { rows } = await store.pool.query(
      'SELECT head_ref FROM consort_app.dashboard_features WHERE repository_id = $1 AND feature = $2 ORDER BY indexed_at DESC LIMIT 1',
      [head.repositoryId, fx.gated],
    );
    const branch = String(rows[0].head_ref);
    git('checkout', '-q', branch);
    await writeFile(path.join(fx.root, 'README.md'), 'pushed meanwhile\n');
    git('commit', '-q', '-am', 'a push the page did not show');
    const pushed = git('rev-parse', 'HEAD');
    git('checkout', '-q', BRANCH);
    const raced = await approve();
    expect([raced.status, ((await raced.json()) as { error: string }).error]).toEqual([
      409,
      expect.stringContaining('moved while you approved'),
    ]);
    expect(git('rev-parse', `refs/heads/${branch}`)).toBe(pushed);
    expect(git('show', `${pushed}:.consort/features/${fx.gated}/gates.json`)).not.toContain('"approver"');
    expect(stand.commits.length - commitsBefore).toBeLessThanOrEqual(1); // a dangling commit object at most, never on the branch
  });
});

describe('approval the Action counts', () => {
  it("says the approval on the pull request as the person's /consort approve <gate>, which the Action's judgement counts; a refused comment is reported, and approving again posts it without a second commit", async () => {
    // The pull request as it stands now (the test above pushed to it): recorded and indexed.
    const tip = git('rev-parse', `refs/heads/${BRANCH}`);
    await upsertPull(store.pool, {
      ...head,
      headSha: tip,
      number: head.pr,
      baseSha: 'b'.repeat(40),
      baseRef: 'main',
      fork: false,
      state: 'open',
    });
    fake.setPull(githubPull(head.pr, tip, BRANCH));
    await indexPull(store, githubRecords(restClient(fake.url, INSTALLATION_TOKEN)), { ...head, headSha: tip });
    const ada = await signedInCookie('ada');
    // The token this sign-in was issued (ada signed in before too).
    const adaToken = [...fake.userTokens].filter(([, login]) => login === 'ada').at(-1)![0];
    const { hash, approve } = await specApproval(fx.gated, ada);
    // The Action announced the gate with these artifacts (its bot's comment, before the approval).
    fake.seed({ issue: head.pr, body: `${GATE_MARKER('spec', hash)}\n### ⏸ Gate \`spec\``, user: ACTIONS_BOT });
    const commitsBefore = stand.commits.length;
    const adaComments = () => fake.comments.filter((c) => c.issue === head.pr && c.user.login === 'ada');

    // GitHub refuses the comment: the commit is made, and the person is told the Action does not count it yet.
    fake.forbidCreate = true;
    const refused = await approve();
    fake.forbidCreate = false;
    expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([
      409,
      expect.stringMatching(
        /^Your approval of the spec gate is on .+, but GitHub refused your comment on #12 \(403\), so the Consort Action does not count it yet\. Comment `\/consort approve spec` on #12 yourself/,
      ),
    ]);
    expect(stand.commits.length - commitsBefore).toBe(1);
    expect(adaComments()).toEqual([]);
    const committed = git('rev-parse', `refs/heads/${BRANCH}`);
    const judge = async () => {
      const gates = JSON.parse(git('show', `${BRANCH}:.consort/features/${fx.gated}/gates.json`)) as {
        gates: { spec: { approval: { approver: string; proxy: boolean; hash: string } } };
      };
      const port = octokitGitHub(restClient(fake.url, INSTALLATION_TOKEN));
      return uncountedApproval(
        port,
        { owner: OWNER, repo: REPO },
        { number: head.pr, author: 'octocat' },
        { approvers: [], selfApproval: false, gateMode: 'human' },
        'spec',
        gates.gates.spec.approval,
        await port.listComments({ owner: OWNER, repo: REPO }, head.pr),
      );
    };
    // The branch holds ada's approval, which nothing in the conversation backs yet.
    expect(await judge()).toBe('@ada left no /consort approve spec on #12');

    // Approving again: nothing committed twice, the comment posted with ada's own token.
    const again = await approve();
    expect(again.status).toBe(200);
    expect(((await again.json()) as { hash: string; approver: string }).hash).toBe(hash);
    expect(stand.commits.length - commitsBefore).toBe(1);
    expect(git('rev-parse', `refs/heads/${BRANCH}`)).toBe(committed);
    const posts = fake.requests.filter(
      (r) => r.method === 'POST' && r.path === `/repos/${OWNER}/${REPO}/issues/${head.pr}/comments`,
    );
    expect(posts.map((r) => r.authorization)).toEqual([`Bearer ${adaToken}`, `Bearer ${adaToken}`]);
    const body = approvalCommentBody('spec', hash);
    expect(body).toBe(
      `/consort approve spec\nApproved in the Consort dashboard for artifacts \`${hash.slice(7, 14)}\`.`,
    );
    expect(adaComments().map((c) => c.body)).toEqual([body]);
    expect(parseCommand(body)).toEqual({ kind: 'approve', gate: 'spec' });
    // The Action's judgement of the branch's record, backed by ada's comment after the announcement: it counts.
    expect(await judge()).toBeUndefined();
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}
