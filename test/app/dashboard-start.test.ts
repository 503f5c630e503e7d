/**
 * The App as an operator starts it with its dashboard on (the four settings), against GitHub
 * Enterprise Server played by the local stand-in: a pushed pull request's TDD records are indexed by
 * the queue's job, its check lands in the check history, and a person who signs in with GitHub
 * reads both through the JSON endpoints.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ProbotOctokit } from 'probot';
import { parseAppSettings } from '../../app/settings.js';
import { startApp, type StartedApp } from '../../app/start.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/fake-github.js';
import { SYSTEM_PG_URL } from '../helpers/servers.js';
import { makeFixture, type Fixture } from '../dashboard/fixture.js';
import { CLIENT_ID, CLIENT_SECRET, installOAuthAndGit, type OAuthStandIn } from '../dashboard/github-oauth.js';
import { installAppRoutes, TOKEN, type AppRoutes } from './helpers/app-routes.js';
import { freshDatabase, type TestDatabase } from './helpers/database.js';
import { privateKey, WEBHOOK_SECRET } from './helpers/github.js';
import { recordingLane } from './helpers/lanes.js';
import { pullRequestPayload } from './helpers/payloads.js';
import { tarballOf } from './helpers/repo.js';
import { eventually } from './helpers/wait.js';

const OWNER = 'Codertocat';
const REPO = 'Hello-World';
const REPO_ID = 186853002;

let github: FakeGitHub;
let routes: AppRoutes;
let stand: OAuthStandIn;
let db: TestDatabase;
let fx: Fixture;
let app: StartedApp;
let dataDir: string;
let base = '';
let head = '';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  [github, db, fx] = await Promise.all([
    startFakeGitHub(OWNER, REPO),
    freshDatabase(),
    makeFixture('consort-dashboard-start-'),
  ]);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Agent', '-c', 'user.email=agent@example.com', ...args], {
      cwd: fx.root,
      encoding: 'utf8',
    }).trim();
  base = git('rev-parse', 'HEAD');
  git('checkout', '-q', '-b', 'feature/phones');
  git('add', '-A');
  git('commit', '-q', '-m', "the lane's records");
  head = git('rev-parse', 'HEAD');
  routes = installAppRoutes(github, OWNER, REPO);
  for (const sha of [base, head]) routes.tarballs.set(sha, await tarballOf(fx.root, sha, OWNER, REPO));
  stand = installOAuthAndGit(github, OWNER, REPO, path.join(fx.root, '.git'), TOKEN);
  github.permissions.set('ada', 'write');
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'consort-app-dashboard-'));
  const port = await freePort();
  stand.redirectUri = `http://127.0.0.1:${port}/dashboard/callback`;
  const env: NodeJS.ProcessEnv = {
    APP_ID: '4242',
    PRIVATE_KEY: privateKey(),
    WEBHOOK_SECRET,
    PORT: String(port),
    LOG_LEVEL: 'fatal',
    GHE_HOST: new URL(github.url).host,
    GHE_PROTOCOL: 'http',
    DATABASE_URL: db.url,
    CONSORT_APP_DATA_DIR: dataDir,
    CONSORT_PROVIDER: 'postgres',
    CONSORT_POSTGRES_URL: SYSTEM_PG_URL,
    CONSORT_APP_PROVIDERS: 'postgres',
    GITHUB_CLIENT_ID: CLIENT_ID,
    GITHUB_CLIENT_SECRET: CLIENT_SECRET,
    CONSORT_DASHBOARD_URL: `http://127.0.0.1:${port}`,
    CONSORT_DASHBOARD_SECRET: 's'.repeat(40),
  };
  const Octokit = ProbotOctokit.defaults((o: ConstructorParameters<typeof ProbotOctokit>[0] = {}) => ({
    ...o,
    throttle: { ...o.throttle, enabled: false },
  }));
  app = await startApp(parseAppSettings(env), {
    Octokit,
    octokitPolicy: { retries: 1, retryAfterBaseMs: 20 },
    pollingSeconds: 0.5,
    probeGitHub: false,
    lane: recordingLane().lane,
  });
}, 120_000);

afterAll(async () => {
  await app?.close();
  stand?.close();
  await github?.close();
  await db?.drop();
  if (fx) await rm(fx.root, { recursive: true, force: true });
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function signIn(login: string): Promise<string> {
  const start = await fetch(`${app.url}/dashboard/login`, { redirect: 'manual' });
  const authorize = new URL(start.headers.get('location')!);
  // GitHub Enterprise Server: people sign in on its web host, not under /api/v3.
  expect(authorize.origin + authorize.pathname).toBe(`${github.url}/login/oauth/authorize`);
  const grant = await fetch(
    `${github.url}/login/oauth/authorize/grant?login=${login}&redirect_uri=${encodeURIComponent(stand.redirectUri)}&state=${authorize.searchParams.get('state')}`,
    { redirect: 'manual' },
  );
  const back = await fetch(grant.headers.get('location')!, {
    redirect: 'manual',
    headers: { cookie: start.headers.get('set-cookie')!.split(';')[0]! },
  });
  expect(back.status).toBe(302);
  return back.headers.get('set-cookie')!.split(';')[0]!;
}

it('indexes a pushed pull request and its check, and shows them to a person who signed in', async () => {
  const payload = pullRequestPayload({ action: 'opened', number: 12, head, base, repositoryId: REPO_ID });
  const body = JSON.stringify(payload);
  const res = await fetch(`${app.url}/api/github/webhooks`, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': 'dash-open-12',
      'x-hub-signature-256': `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex')}`,
    },
  });
  expect(res.status).toBe(200);
  const cookie = await signIn('ada');
  const get = async (p: string) =>
    (await fetch(`${app.url}${p}`, { headers: { cookie } })).json() as Promise<Record<string, unknown>>;
  const features = await eventually(
    async () => {
      const answer = await get(`/dashboard/${OWNER}/${REPO}/api`).catch(() => null);
      const rows = (answer?.features ?? []) as { feature: string; pr: number }[];
      return rows.length === 2 ? rows : undefined;
    },
    'the index job to index the head',
    60_000,
    250,
  );
  expect(features.map((f) => [f.feature, f.pr])).toEqual([
    [fx.gated, 12],
    [fx.building, 12],
  ]);
  const checks = await eventually(
    async () => {
      const answer = await get(`/dashboard/${OWNER}/${REPO}/api/checks`);
      return answer.total === 1 ? answer : undefined;
    },
    'the check to reach the history',
    60_000,
    250,
  );
  expect((checks.items as { conclusion: string; headSha: string; pr: number }[])[0]).toMatchObject({
    conclusion: 'success',
    headSha: head,
    pr: 12,
  });
  expect(await get('/dashboard/api/repositories')).toMatchObject({
    login: 'ada',
    repositories: [{ owner: OWNER, repo: REPO, permission: 'write' }],
  });
  const paths = github.requests.map((r) => `${r.method} ${r.path.replace(/\?.*/, '')}`);
  expect(paths).toContain(`GET /api/v3/repos/${OWNER}/${REPO}/git/trees/${head}`);
  expect(github.unexpected).toEqual([]);
}, 120_000);
