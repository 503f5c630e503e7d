/**
 * The App's /dashboard in a real browser (Chromium through playwright-core), against the local
 * GitHub stand-in and a real PostgreSQL store: sign-in with GitHub (the OAuth web flow), a person
 * without access sees nothing, the index of a pull request's head gives the same data as the local
 * host, a push reaches the open page, a gate is approved (a commit on the pull request's branch by
 * the person, then their `/consort approve <gate>` comment) and refused for a reader, and hostile agent
 * text stays inert.
 * `CONSORT_SCREENSHOTS=1` also writes the screenshots in docs/img/.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { closeServer, createAppServer, listen } from '../../app/http.js';
import { approvalCommentBody } from '../../app/dashboard/approve.js';
import { githubRecords } from '../../app/dashboard/github-records.js';
import { createAppDashboard, type AppDashboard } from '../../app/dashboard/host.js';
import { indexPull, type PullHead } from '../../app/dashboard/indexer.js';
import { recordCheck } from '../../app/dashboard/index-store.js';
import { restClient } from '../../app/dashboard/rest-client.js';
import type { JobDeps } from '../../app/jobs/deps.js';
import { silentLog } from '../../app/jobs/deps.js';
import { handleIndex } from '../../app/jobs/index-records.js';
import { migrateStore, openStore, type Store } from '../../app/store/db.js';
import { upsertPull } from '../../app/store/pulls.js';
import { insertRun, prSubject } from '../../app/store/runs.js';
import { LocalSource } from '../../src/dashboard/local-source.js';
import { startLocalDashboard, type LocalDashboard } from '../../src/dashboard/local-server.js';
import { freshDatabase, type TestDatabase } from '../app/helpers/database.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/fake-github.js';
import { launchBrowser, SCREENSHOTS } from './browser.js';
import { checkReport, HOSTILE, makeFixture, T0, turn, type Fixture } from './fixture.js';
import { CLIENT_ID, CLIENT_SECRET, installOAuthAndGit, INSTALLATION_TOKEN, type OAuthStandIn } from './github-oauth.js';

const IMG = fileURLToPath(new URL('../../docs/img/', import.meta.url));
const OWNER = 'octo';
const REPO = 'shop';
const BRANCH = 'feature/phones';
const SECRET = 'a-session-secret-of-at-least-32-characters';

let fx: Fixture;
let fake: FakeGitHub;
let stand: OAuthStandIn;
let db: TestDatabase;
let store: Store;
let dashboard: AppDashboard;
let server: http.Server;
let url = '';
let local: LocalDashboard;
let localSource: LocalSource;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let head: PullHead;

const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Agent', '-c', 'user.email=agent@example.com', ...args], {
    cwd: fx.root,
    encoding: 'utf8',
  }).trim();
const records = () => githubRecords(restClient(fake.url, INSTALLATION_TOKEN));

beforeAll(async () => {
  fx = await makeFixture('consort-dashboard-app-');
  git('checkout', '-q', '-b', BRANCH);
  git('add', '-A');
  git('commit', '-q', '-m', "the lane's records");
  fake = await startFakeGitHub(OWNER, REPO);
  fake.permissions.set('ada', 'write');
  fake.permissions.set('rita', 'read');
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
  fake.setPull({
    number: head.pr,
    state: 'open',
    title: 'phones',
    body: null,
    head: { ref: BRANCH, sha: head.headSha, repo: `${OWNER}/${REPO}` },
    base: { ref: 'main', sha: 'b'.repeat(40) },
  });
  for (let i = 0; i < 12; i++) {
    const run = await insertRun(
      store.pool,
      {
        kind: 'check',
        subject: prSubject(head.repositoryId, head.pr),
        repositoryId: head.repositoryId,
        installationId: head.installationId,
        owner: OWNER,
        repo: REPO,
        pr: head.pr,
        headSha: `${i}`.padStart(40, 'c'),
        headRef: BRANCH,
        baseSha: 'b'.repeat(40),
        baseRef: 'main',
        fork: false,
        merged: false,
        deliveryId: null,
      },
      'superseded',
    );
    const report = checkReport(i, T0 + i * 3_600_000);
    await store.pool.query(
      `UPDATE consort_app.runs SET state = 'completed', started_at = $2, finished_at = $3 WHERE id = $1`,
      [run.id, report.startedAt, new Date(Date.parse(report.startedAt) + report.durationMs)],
    );
    await recordCheck(store.pool, run, { state: 'completed', conclusion: report.conclusion, summary: '' }, report);
  }
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
    installation: async () => restClient(fake.url, INSTALLATION_TOKEN),
  });
  localSource = new LocalSource({ root: fx.root, canApprove: false });
  local = await startLocalDashboard({ source: localSource, port: 0, approver: null });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => {
    throw e;
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  if (server) await closeServer(server);
  localSource?.close();
  await local?.close();
  await store?.close();
  await db?.drop();
  stand?.close();
  await fake?.close();
  if (fx) await rm(fx.root, { recursive: true, force: true });
});

/**
 * The browser signed in as this person through the stand-in's sign-in page. One context and one
 * page for the file, its cookies cleared between people (the packaged Chromium runs as a single
 * process, which does not survive closing a second context).
 */
async function signedIn(login: string, start = '/dashboard/'): Promise<Page> {
  await context.clearCookies();
  await page.goto('about:blank');
  await page.goto(`${url}${start}`);
  if (start === '/dashboard/') await page.click('#sign-in');
  await page.waitForSelector('#login_field');
  await page.fill('#login_field', login);
  await Promise.all([page.waitForURL(`${url}/dashboard/**`), page.click('button[name=commit]')]);
  return page;
}

async function shot(name: string): Promise<void> {
  if (SCREENSHOTS) await page.screenshot({ path: path.join(IMG, `dashboard-app-${name}.png`), fullPage: true });
}

const base = `/dashboard/${OWNER}/${REPO}`;

describe('indexing a pull request head', () => {
  it('indexes the records at the head, fetching each blob once, and serves the same data as the local host', async () => {
    const first = await indexPull(store, records(), head);
    expect(first.features.sort()).toEqual([fx.building, fx.gated].sort());
    expect(first.fetched).toBeGreaterThan(5);
    const again = await indexPull(store, records(), head);
    expect(again.fetched).toBe(0);
    expect([...stand.blobFetches.values()].every((n) => n === 1)).toBe(true);
    // The same contract on both hosts: the feature (gates and their hashes included), its turns, the checks.
    await signedIn('ada', `${base}/`);
    const app = async (p: string) =>
      page.evaluate(async (u) => (await fetch(u)).json(), `${url}${base}${p}`) as Promise<Record<string, unknown>>;
    const byLocal = async (p: string) => (await (await fetch(`${local.url}${p}`)).json()) as Record<string, unknown>;
    for (const feature of [fx.gated, fx.building]) {
      const [a, l] = await Promise.all([app(`/api/features/${feature}`), byLocal(`/api/features/${feature}`)]);
      expect({ ...a, summary: { ...(a.summary as object), pr: null } }).toEqual(l);
      expect((a.summary as { pr: number }).pr).toBe(12);
    }
    const [a, l] = await Promise.all([
      app(`/api/features/${fx.gated}/gates`),
      byLocal(`/api/features/${fx.gated}/gates`),
    ]);
    expect(a.gates).toEqual(l.gates);
    expect((a.gates as { gate: string; status: string }[]).find((g) => g.gate === 'spec')?.status).toBe('pending');
    const checks = await app('/api/checks');
    expect(checks.total).toBe(12);
    expect((checks.items as { stages: unknown[] }[])[0]!.stages).toHaveLength(7);
  });
});

describe('the App dashboard in Chromium', () => {
  it('signs a person in with GitHub and lists the repositories they can read', async () => {
    await signedIn('ada');
    expect(await page.locator('#repositories').innerText()).toContain(`${OWNER}/${REPO} (write)`);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'consort_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/dashboard' });
    expect(cookie!.value).not.toContain('gho_');
    await shot('repositories');
    await page.click(`#repositories a`);
    await page.waitForSelector('#features');
    expect(await page.locator('#features tbody tr').count()).toBe(2);
    expect(await page.locator('#features').innerText()).toContain('⏸ spec gate');
    await shot('features');
    // Filtered by pull request: this one, then one that has none.
    await page.fill('input[name=pr]', '12');
    await page.click('form.filter button');
    await page.waitForURL(/pr=12/);
    expect(await page.locator('#features tbody tr').count()).toBe(2);
    await page.fill('input[name=pr]', '13');
    await page.click('form.filter button');
    await page.waitForURL(/pr=13/);
    expect(await page.locator('#features').count()).toBe(0);
    await page.click('nav a:has-text("Checks")');
    expect(await page.locator('#checks tbody tr').count()).toBe(12);
    expect(await page.locator('[aria-label="Check duration trend (seconds)"]').count()).toBe(1);
    await shot('checks');
  });

  it('refuses a sign-in that did not start here, and a code used twice', async () => {
    const forged = await fetch(`${url}/dashboard/callback?code=whatever&state=made-up`, { redirect: 'manual' });
    expect(forged.status).toBe(400);
    expect(forged.headers.get('set-cookie')).toBeNull();
    // A real start: the state cookie and GitHub's redirect; the code works once.
    const start = await fetch(`${url}/dashboard/login`, { redirect: 'manual' });
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
    const stateCookie = start.headers.get('set-cookie')!.split(';')[0]!;
    expect(start.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Lax/);
    const grant = await fetch(
      `${fake.url}/login/oauth/authorize/grant?login=ada&redirect_uri=${encodeURIComponent(stand.redirectUri)}&state=${state}`,
      { redirect: 'manual' },
    );
    const back = grant.headers.get('location')!;
    const first = await fetch(back, { redirect: 'manual', headers: { cookie: stateCookie } });
    expect(first.status).toBe(302);
    expect(first.headers.get('set-cookie')).toMatch(
      /consort_session=[^;]+; Path=\/dashboard; Max-Age=28800; HttpOnly; SameSite=Lax/,
    );
    const again = await fetch(back, { redirect: 'manual', headers: { cookie: stateCookie } });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('used already or is too old');
  });

  it('shows nothing to someone who cannot read the repository, and nothing before sign-in', async () => {
    const anonymous = await fetch(`${url}${base}/api/features/${fx.gated}`);
    expect(anonymous.status).toBe(401);
    const redirect = await fetch(`${url}${base}/`, { redirect: 'manual' });
    expect(redirect.headers.get('location')).toBe(`/dashboard/login?next=${encodeURIComponent(`${base}/`)}`);
    await signedIn('eve');
    expect(await page.locator('#no-repositories').count()).toBe(1);
    const answers = await page.evaluate(
      async (urls) =>
        Promise.all(
          urls.map(async (u) => {
            const r = await fetch(u);
            return [r.status, await r.text()];
          }),
        ),
      [
        `${url}${base}/`,
        `${url}${base}/api/features/${fx.gated}`,
        `${url}${base}/features/${fx.gated}/turns/turn-0001`,
        `${url}/dashboard/api/repositories`,
      ],
    );
    expect(answers.slice(0, 3).map(([s]) => s)).toEqual([404, 404, 404]);
    expect(answers.map(([, t]) => t).join('')).not.toContain(fx.gated);
    expect(JSON.parse(String(answers[3]![1])).repositories).toEqual([]);
  });

  it('renders hostile agent text as text (the transcript fetched from GitHub when first opened)', async () => {
    await signedIn('rita', `${base}/features/${fx.gated}/turns/turn-0001`);
    expect(await page.locator('#reason').innerText()).toContain(HOSTILE.script);
    expect(await page.locator('#transcript').innerText()).toContain(HOSTILE.textarea);
    expect(await page.locator('#summary').innerText()).toContain(HOSTILE.link);
    expect(await page.locator('main script, main img, main a[href^="javascript:"], main [onmouseover]').count()).toBe(
      0,
    );
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned ?? null)).toBeNull();
    await shot('turn');
  });

  it('puts a pushed turn on the open page without a reload', async () => {
    await signedIn('rita', `${base}/features/${fx.building}`);
    await shot('timeline');
    await page.evaluate(() => {
      (globalThis as unknown as { __same: boolean }).__same = true;
    });
    await page.waitForSelector('#live:has-text("live")');
    // A push: the lane commits a new turn; the App records the new head and indexes it (the job the push's webhook enqueues).
    mkdirSync(path.join(fx.root, 'test'), { recursive: true });
    writeFileSync(path.join(fx.root, 'test/T3.test.js'), 'test("T3", () => {\n  expect(cart()).toBe(3);\n});\n');
    const record = turn(
      {
        id: 'turn-0013',
        role: 'navigator',
        step: 'red',
        item: 'T3',
        base: head.headSha,
        filesChanged: ['test/T3.test.js'],
      },
      fx.building,
      T0 + 9_000_000,
    );
    appendFileSync(path.join(fx.root, `.consort/features/${fx.building}/turns.jsonl`), `${JSON.stringify(record)}\n`);
    git('add', '-A');
    git('commit', '-q', '-m', 'turn-0013');
    head = { ...head, headSha: git('rev-parse', 'HEAD') };
    await upsertPull(store.pool, {
      ...head,
      number: head.pr,
      baseSha: 'b'.repeat(40),
      baseRef: 'main',
      fork: false,
      state: 'open',
    });
    const deps = { store, records: async () => records(), log: silentLog } as unknown as JobDeps;
    await handleIndex(deps, { kind: 'index', repositoryId: head.repositoryId, pr: head.pr, headSha: head.headSha });
    await page.waitForSelector('#turns a:has-text("turn-0013")', { timeout: 5000 });
    expect(await page.evaluate(() => (globalThis as unknown as { __same?: boolean }).__same)).toBe(true);
    // Its detail: the lines it added, from GitHub's comparison (and the same from git on the local host).
    await page.click('#turns a:has-text("turn-0013")');
    expect(await page.locator('#files tbody tr').innerText()).toMatch(/test\/T3\.test\.js\s+3\s+0/);
    const localTurn = (await (await fetch(`${local.url}/api/features/${fx.building}/turns/turn-0013`)).json()) as {
      diffStat: unknown;
    };
    expect(localTurn.diffStat).toEqual([{ path: 'test/T3.test.js', added: 3, removed: 0 }]);
  });

  it('refuses approval to a reader: no form, and a posted approval is refused', async () => {
    await signedIn('rita', `${base}/features/${fx.gated}/gates`);
    expect(await page.locator('form.approve').count()).toBe(0);
    expect(await page.locator('#gate-spec').innerText()).toContain('You cannot approve this gate here');
    const status = await page.evaluate(
      async (u) =>
        (
          await fetch(u, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ csrf: 'x', hash: `sha256:${'0'.repeat(64)}`, read: 'yes' }),
          })
        ).status,
      `${url}${base}/api/features/${fx.gated}/gates/spec/approve`,
    );
    expect(status).toBe(403);
    expect(stand.commits).toEqual([]);
  });

  it('approves a gate after the confirmation: a commit by the person on the pull request branch, then indexed', async () => {
    await signedIn('ada', `${base}/features/${fx.gated}/gates`);
    await shot('gates');
    // Another site cannot post it, even were the cookie sent along (SameSite=Lax keeps it home): the Origin is checked first, then the token.
    const csrf = await page.locator('#gate-spec input[name=csrf]').inputValue();
    const hash = await page.locator('#gate-spec input[name=hash]').inputValue();
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${url}${base}/features/${fx.gated}/gates/spec/approve`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });
    expect((await post({ origin: 'https://evil.example' }, `csrf=${csrf}&hash=${hash}&read=yes`)).status).toBe(403);
    expect((await post({ origin: url }, `csrf=not-the-token&hash=${hash}&read=yes`)).status).toBe(403);
    expect(stand.commits).toEqual([]);
    const form = page.locator('#gate-spec form.approve');
    expect(await form.innerText()).toContain('approve as ada');
    await form.locator('input[name=read]').check();
    page.once('dialog', (d) => void d.accept());
    await Promise.all([page.waitForURL(/approved=spec/), form.locator('button[type=submit]').click()]);
    expect(await page.locator('#message').innerText()).toBe('Approved the spec gate.');
    expect(await page.locator('#gate-spec .badge').innerText()).toContain('approved');
    expect(stand.commits.map((c) => c.login)).toEqual(['ada']);
    const tip = execFileSync('git', ['rev-parse', `refs/heads/${BRANCH}`], { cwd: fx.root, encoding: 'utf8' }).trim();
    expect(tip).toBe(stand.commits[0]!.sha);
    const gates = JSON.parse(
      execFileSync('git', ['show', `${tip}:.consort/features/${fx.gated}/gates.json`], {
        cwd: fx.root,
        encoding: 'utf8',
      }),
    ) as { gates: { spec: { approval: { approver: string; hash: string; headSha: string } } } };
    expect(gates.gates.spec.approval).toMatchObject({
      approver: 'ada',
      headSha: head.headSha,
      hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect(
      execFileSync('git', ['show', `${tip}:.consort/features/${fx.gated}/events.jsonl`], {
        cwd: fx.root,
        encoding: 'utf8',
      }),
    ).toContain('"type":"gate.approved"');
    // Then said on the pull request, where the Action looks: ada's own /consort approve spec (her token, not the App's).
    expect(
      fake.comments.filter((c) => c.issue === head.pr).map((c) => ({ login: c.user.login, body: c.body })),
    ).toEqual([{ login: 'ada', body: approvalCommentBody('spec', gates.gates.spec.approval.hash) }]);
    expect(
      fake.requests
        .filter((r) => r.method === 'POST' && r.path === `/repos/${OWNER}/${REPO}/issues/${head.pr}/comments`)
        .map((r) => r.authorization),
    ).toEqual([expect.stringMatching(/^Bearer gho_ada/)]);
    // The same hash the local host shows for these artifacts: one rule, one hash.
    const localGates = (await (await fetch(`${local.url}/api/features/${fx.gated}/gates`)).json()) as {
      gates: { gate: string; hash: string }[];
    };
    expect(gates.gates.spec.approval.hash).toBe(localGates.gates.find((g) => g.gate === 'spec')!.hash);
  });
});
