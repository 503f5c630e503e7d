/**
 * The App as an operator starts it (`startApp` with settings parsed from the environment),
 * pointed at GitHub Enterprise Server the way Probot documents — `GHE_HOST=127.0.0.1:<port>`,
 * `GHE_PROTOCOL=http` — where a local GitHub stand-in answers under `/api/v3`. Webhooks arrive
 * signed over HTTP. Branches live on the PostgreSQL server at 127.0.0.1:5432 (`postgres`) and,
 * for repositories that choose them, on the Lakebase and Neon emulators, with URL verification
 * in the path. GitHub going away and coming back is seen in the log and on /health.
 */
import { jest } from '@jest/globals';
import { createHmac, randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ProbotOctokit } from 'probot';
import { CHECK_NAME, STICKY_MARKER } from '../../app/check-output.js';
import { parseAppSettings } from '../../app/settings.js';
import { prSubject, runsOf } from '../../app/store/runs.js';
import { CloudBranchProvider } from '../../src/branches/cloud/provider.js';
import { quoteIdent } from '../../src/db/sql.js';
import { scenarioRepo, type ScenarioRepo } from '../../src/demo/scenarios.js';
import { startApp, type StartedApp } from '../../app/start.js';
import { fastClock } from '../emulators/clock.js';
import { LakebaseEmulator } from '../emulators/lakebase.js';
import { NeonEmulator } from '../emulators/neon.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/fake-github.js';
import { query, SYSTEM_PG_URL } from '../helpers/servers.js';
import { installAppRoutes, type AppRoutes } from './helpers/app-routes.js';
import { freshDatabase, type TestDatabase } from './helpers/database.js';
import { privateKey, WEBHOOK_SECRET } from './helpers/github.js';
import { checkSuitePayload, pullRequestPayload } from './helpers/payloads.js';
import { appConfig, commit, tarballOf } from './helpers/repo.js';
import { eventually } from './helpers/wait.js';

const OWNER = 'Codertocat';
const REPO = 'Hello-World';
const REPO_ID = 900_000_000 + randomInt(99_999_999); // its branches on the shared server are gh<id>_…
const SUITE = 'test -n "$DATABASE_URL"';

interface Line {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

let github: FakeGitHub;
let routes: AppRoutes;
let db: TestDatabase;
let repo: ScenarioRepo;
let lakebase: LakebaseEmulator;
let neon: NeonEmulator;
let app: StartedApp;
let dataDir: string;
const lines: Line[] = [];
let verifyUrl: ReturnType<typeof spyVerify>;
const spyVerify = () => jest.spyOn(CloudBranchProvider.prototype, 'verifyUrl');
const verified = (): string[] =>
  verifyUrl.mock.calls.map(([name], i) => `${(verifyUrl.mock.contexts[i] as CloudBranchProvider).name}:${name}`);

async function publish(sha: string): Promise<void> {
  routes.tarballs.set(sha, await tarballOf(repo.dir, sha, OWNER, REPO));
}

beforeAll(async () => {
  [github, db, repo, lakebase, neon] = await Promise.all([
    startFakeGitHub(OWNER, REPO),
    freshDatabase(),
    scenarioRepo('clean', { extraMigrations: [{ file: '.github/consort.yml', content: appConfig(SUITE) }] }),
    new LakebaseEmulator({ clientId: 'sp-consort-app', clientSecret: 'oauth-secret-app-1234', opPolls: 1 }).start(),
    new NeonEmulator({ opPolls: 1 }).start(),
  ]);
  routes = installAppRoutes(github, OWNER, REPO);
  await publish(repo.baseSha);
  await publish(repo.headSha);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'consort-app-ghe-'));
  const env: NodeJS.ProcessEnv = {
    APP_ID: '4242',
    PRIVATE_KEY: privateKey(),
    WEBHOOK_SECRET,
    PORT: '0',
    LOG_LEVEL: 'fatal',
    GHE_HOST: new URL(github.url).host,
    GHE_PROTOCOL: 'http',
    DATABASE_URL: db.url,
    CONSORT_APP_DATA_DIR: dataDir,
    CONSORT_PROVIDER: 'postgres',
    CONSORT_POSTGRES_URL: SYSTEM_PG_URL,
    CONSORT_APP_PROVIDERS: 'postgres,lakebase,neon',
    ...lakebase.env('m2m'),
    ...neon.env(),
  };
  // The real verification runs; the spy only records that the App's path called it, and for which branch.
  verifyUrl = spyVerify();
  // Throttling's pacing of writes is GitHub courtesy, not under test here; retries are, with short waits.
  const Octokit = ProbotOctokit.defaults((o: ConstructorParameters<typeof ProbotOctokit>[0] = {}) => ({
    ...o,
    throttle: { ...o.throttle, enabled: false },
  }));
  app = await startApp(parseAppSettings(env), {
    Octokit,
    octokitPolicy: { retries: 2, retryAfterBaseMs: 20 },
    pollingSeconds: 0.5,
    cloud: { lakebase: { clock: fastClock(), sslMode: 'disable' }, neon: { clock: fastClock() } },
    logSink: (level, message, fields) => lines.push({ level, message, ...(fields ? { fields } : {}) }),
  });
}, 120_000);

afterAll(async () => {
  verifyUrl?.mockRestore();
  await app?.close();
  await Promise.all([lakebase?.stop(), neon?.stop(), github?.close(), repo?.dispose()]);
  await db?.drop();
  const leftovers = await query<{ datname: string }>(
    SYSTEM_PG_URL,
    'SELECT datname FROM pg_database WHERE datname LIKE $1',
    [`gh${REPO_ID}\\_%`],
  );
  for (const { datname } of leftovers)
    await query(SYSTEM_PG_URL, `DROP DATABASE IF EXISTS ${quoteIdent(datname)} WITH (FORCE)`);
  const catalog = SYSTEM_PG_URL.replace(/\/[^/]*$/, '/consort_catalog');
  await query(catalog, 'DELETE FROM consort.branches WHERE namespace = $1 AND parent IS NOT NULL', [
    `gh${REPO_ID}`,
  ]).catch(() => undefined);
  await query(catalog, 'DELETE FROM consort.branches WHERE namespace = $1', [`gh${REPO_ID}`]).catch(() => undefined);
  await rm(dataDir, { recursive: true, force: true });
});

async function deliver(event: string, id: string, payload: object): Promise<void> {
  const body = JSON.stringify(payload);
  const res = await fetch(`${app.url}/api/github/webhooks`, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': id,
      'x-hub-signature-256': `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex')}`,
    },
  });
  expect(res.status).toBe(200);
}

const opened = (id: string, pr: number, head: string, action: 'opened' | 'synchronize' = 'opened') =>
  deliver(
    'pull_request',
    id,
    pullRequestPayload({ action, number: pr, head, base: repo.baseSha, repositoryId: REPO_ID }),
  );

const finished = (pr: number, count: number) =>
  eventually(
    async () => {
      const runs = await runsOf(app.runtime.store.pool, prSubject(REPO_ID, pr));
      return runs.length >= count && runs.every((r) => r.state === 'completed' || r.state === 'cancelled')
        ? runs
        : undefined;
    },
    `${count} run(s) of #${pr} to finish`,
    90_000,
  );

const checkRunsAt = (sha: string) => [...routes.checkRuns.values()].filter((c) => c.headSha === sha);

it('says at startup which GitHub it talks to, and which providers it offers', () => {
  expect(lines).toContainEqual({
    level: 'info',
    message: `Consort App talks to GitHub at ${github.url}/api/v3 (from GHE_HOST)`,
  });
  expect(lines).toContainEqual({
    level: 'info',
    message:
      'Consort App offers the branch providers postgres, lakebase, neon (default for repositories that do not choose: postgres)',
  });
});

it('checks a pull request against GitHub Enterprise Server: token, check run, tarballs, merge base, conclusion, sticky comment', async () => {
  await opened('ghe-open-2', 2, repo.headSha);
  await finished(2, 1);
  const [run] = checkRunsAt(repo.headSha);
  expect(run).toMatchObject({
    name: CHECK_NAME,
    status: 'completed',
    conclusion: 'success',
    output: { title: 'Database checks passed' },
  });
  expect(routes.tokens).toBeGreaterThanOrEqual(1);
  const paths = github.requests.map((r) => `${r.method} ${r.path.replace(/\?.*/, '')}`);
  expect(paths).toEqual(
    expect.arrayContaining([
      'POST /api/v3/app/installations/4242/access_tokens',
      `POST /api/v3/repos/${OWNER}/${REPO}/check-runs`,
      `GET /api/v3/repos/${OWNER}/${REPO}/tarball/${repo.headSha}`,
      `GET /api/v3/repos/${OWNER}/${REPO}/compare/${repo.baseSha}...${repo.headSha}`,
      `PATCH /api/v3/repos/${OWNER}/${REPO}/check-runs/${run!.id}`,
      `POST /api/v3/repos/${OWNER}/${REPO}/issues/2/comments`,
      // The tarball's redirect, followed to the archive (GHES serves it under /_codeload/).
      `GET /_codeload/${OWNER}/${REPO}/legacy.tar.gz/${repo.headSha}`,
    ]),
  );
  expect(paths.every((p) => p.includes(' /api/v3/') || p.includes(' /_codeload/'))).toBe(true);
  expect(github.unexpected).toEqual([]);
  expect(github.comments.find((c) => c.issue === 2)?.body.startsWith(STICKY_MARKER)).toBe(true);
  // The repository did not choose a provider: the App's default, its own PostgreSQL server.
  expect(
    (
      await query(SYSTEM_PG_URL, 'SELECT count(*)::int AS n FROM pg_database WHERE datname LIKE $1', [
        `gh${REPO_ID}\\_%`,
      ])
    )[0]!.n,
  ).toBeGreaterThan(0);
  expect(verified()).toEqual([]);
}, 120_000);

it('"Re-run all checks" (check_suite.rerequested) checks the head again', async () => {
  await deliver('check_suite', 'ghe-suite-2', checkSuitePayload({ head: repo.headSha, repositoryId: REPO_ID }));
  const runs = await finished(2, 2);
  expect(runs.map((r) => [r.deliveryId, r.conclusion])).toEqual([
    ['ghe-open-2', 'success'],
    ['ghe-suite-2', 'success'],
  ]);
  expect(checkRunsAt(repo.headSha).map((c) => c.conclusion)).toEqual(['success', 'success']);
}, 120_000);

it.each(['lakebase', 'neon'] as const)(
  'a repository that chooses %s is checked on it, its branch URL verified, its branches named for the repository',
  async (provider) => {
    const pr = provider === 'lakebase' ? 3 : 4;
    const head = await commit(
      repo.dir,
      { '.github/consort.yml': appConfig(SUITE).replace('database:\n', `database:\n  provider: ${provider}\n`) },
      `use ${provider}`,
      repo.headSha,
    );
    await publish(head);
    await opened(`ghe-${provider}`, pr, head);
    await finished(pr, 1);
    expect(checkRunsAt(head)).toEqual([
      expect.objectContaining({
        conclusion: 'success',
        output: expect.objectContaining({ title: 'Database checks passed' }),
      }),
    ]);
    expect(verified()).toContain(`${provider}:gh${REPO_ID}-pr-${pr}`);
    // Besides the project's default branch, only branches named for this repository.
    const names =
      provider === 'lakebase'
        ? [...lakebase.branches.values()].filter((b) => !b.isDefault).map((b) => b.id)
        : [...neon.branches.values()].filter((b) => !b.isDefault).map((b) => b.name);
    expect(names).toContain(`gh${REPO_ID}-pr-${pr}`);
    expect(names.filter((n) => !n.startsWith(`gh${REPO_ID}-`) && !n.startsWith('consort-stage-'))).toEqual([]);
  },
  180_000,
);

it('a repository that chooses a provider the App does not offer is told so on the check run', async () => {
  const head = await commit(
    repo.dir,
    { '.github/consort.yml': appConfig(SUITE).replace('database:\n', 'database:\n  provider: local\n') },
    'use local',
    repo.headSha,
  );
  await publish(head);
  await opened('ghe-local', 5, head);
  await finished(5, 1);
  expect(checkRunsAt(head)).toEqual([
    expect.objectContaining({
      conclusion: 'failure',
      output: expect.objectContaining({
        summary: expect.stringContaining(
          'asks for database.provider "local", which this Consort App does not offer (it offers: postgres, lakebase, neon)',
        ),
      }),
    }),
  ]);
}, 120_000);

it('GitHub unreachable: each failed attempt logged with delivery and route, retries bounded, the job fails loudly, /health degraded — and all recovers', async () => {
  const head = await commit(repo.dir, { 'notes/outage.txt': 'outage' }, 'during the outage', repo.headSha);
  await publish(head);
  lines.length = 0;
  github.down = true;
  const before = github.requests.length;
  await opened('ghe-outage', 6, head);
  await eventually(
    async () =>
      lines.some(
        (l) =>
          l.level === 'error' && l.message === 'GitHub call failed: GET /repos/{owner}/{repo}/commits/{ref}/check-runs',
      ),
    'the failed look for a check run an earlier attempt made to be logged',
  );
  const attempts = lines.filter((l) => l.level === 'warn' && l.message === 'GitHub could not be reached');
  // Before creating the check run, the look for one an earlier attempt made (among the commit's
  // check runs) and that look's 2 retries; with no answer, nothing is created blind.
  expect(attempts.length).toBeGreaterThanOrEqual(3);
  expect(attempts[0]!.fields).toMatchObject({
    delivery: 'ghe-outage',
    route: 'GET /repos/{owner}/{repo}/commits/{ref}/check-runs',
    method: 'GET',
    path: `/api/v3/repos/${OWNER}/${REPO}/commits/${head}/check-runs`,
  });
  expect(lines.filter((l) => l.message.startsWith('GitHub call failed')).map((l) => l.fields)).toEqual([
    expect.objectContaining({
      delivery: 'ghe-outage',
      route: 'GET /repos/{owner}/{repo}/commits/{ref}/check-runs',
      attempts: 3,
    }),
  ]);
  await eventually(
    async () => lines.find((l) => l.level === 'warn' && l.message.startsWith('job failed (attempt 1 of')),
    'the failed job to be logged',
  );
  expect(github.requests.length - before).toBeLessThan(20); // bounded, not a storm

  const degraded = (await (await fetch(`${app.url}/health`)).json()) as {
    status: string;
    github: { reachable: boolean; lastError: string };
  };
  expect(degraded).toMatchObject({ status: 'degraded', store: 'ok', github: { reachable: false } });

  github.down = false;
  await eventually(
    async () => {
      const h = (await (await fetch(`${app.url}/health`)).json()) as { status: string };
      return h.status === 'ok';
    },
    '/health to recover',
    20_000,
    500,
  );
  // The queue retries the announcement: the check runs once GitHub answers again.
  await finished(6, 1);
  expect(checkRunsAt(head)).toEqual([expect.objectContaining({ conclusion: 'success' })]);
}, 180_000);
