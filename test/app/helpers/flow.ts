/**
 * The App end to end, for test files that drive it with webhooks: the embedded PostgreSQL 18
 * (store and branches), the real runtime (intake, queue, jobs, lane), a Probot per test, nock for
 * GitHub with its leftovers checked after every test, and the example shop as the repository.
 */
import type { Probot } from 'probot';
import { appGitHub } from '../../../app/github.js';
import type { AppLog, JobSettings } from '../../../app/jobs/deps.js';
import { repoProviders, type RepoProviders } from '../../../app/providers.js';
import type { AppRuntime } from '../../../app/runtime.js';
import { prSubject, runsOf, type Run } from '../../../app/store/runs.js';
import { consortApp } from '../../../app/index.js';
import { scenarioRepo, type ScenarioRepo } from '../../../src/demo/scenarios.js';
import { ownLocalTestProvider, type TestProvider } from '../../helpers/servers.js';
import { freshDatabase, type TestDatabase } from './database.js';
import {
  api,
  expectNoCheckRunYet,
  expectTarball,
  forbidNetwork,
  githubLeftovers,
  restoreNetwork,
  testProbot,
} from './github.js';
import { appConfig, tarballOf } from './repo.js';
import { startTestRuntime } from './runtime.js';
import { eventually } from './wait.js';

export const OWNER = 'Codertocat';
export const REPO = 'Hello-World';
export const REPO_ID = 186853002; // as recorded
export const PATH = `/repos/${OWNER}/${REPO}`;
/** The suite sees its branch, and none of the App's own environment. */
export const SUITE = 'test -n "$DATABASE_URL" && test -z "$CONSORT_TEST_APP_SECRET"';

export interface Body {
  [key: string]: unknown;
}

/** A line the App logged, with its level and fields. */
export interface LogLine {
  level: keyof AppLog;
  message: string;
  fields?: Record<string, unknown>;
}

export interface Flow {
  readonly probot: Probot;
  readonly runtime: AppRuntime;
  readonly repo: ScenarioRepo;
  readonly providers: RepoProviders;
  /** The local provider's data directory (its server.json holds the superuser's password). */
  readonly dataDir: string | undefined;
  readonly settings: JobSettings;
  /** Everything the App logged since the flow started. */
  readonly logs: readonly LogLine[];
  tarball(sha: string): Promise<Buffer>;
  runs(pr: number): Promise<Run[]>;
  branches(): Promise<string[]>;
  finished(pr: number, count?: number): Promise<Run[]>;
  /** Expect a full check of `head`: check run created, both tarballs, the merge base (PRs), the check run completed. */
  expectCheck(o: {
    pr: number | null;
    head: string;
    checkRunId: number;
    bodies: Record<string, Body>;
    owner?: string;
    repo?: string;
    base?: string;
  }): void;
  expectStickyCreated(pr: number, bodies: Record<string, Body>, id?: number): void;
}

export function setupFlow(): Flow {
  let server: TestProvider;
  let db: TestDatabase;
  let providers: RepoProviders;
  let runtime: AppRuntime;
  let repo: ScenarioRepo;
  let probot: Probot;
  const tarballs = new Map<string, Buffer>();
  const logs: LogLine[] = [];
  const record =
    (level: LogLine['level']) =>
    (message: string, fields?: Record<string, unknown>): void => {
      logs.push({ level, message, ...(fields ? { fields } : {}) });
    };
  const log: AppLog = { info: record('info'), warn: record('warn'), error: record('error') };

  beforeAll(async () => {
    forbidNetwork();
    process.env.CONSORT_TEST_APP_SECRET = 'must-not-reach-the-suite';
    // A server of its own: the App names its namespaces by repository id (gh186853002 in every
    // file that drives it), so two such files on one server would see each other's branches.
    // The repository is made while the server starts; whatever came up is cleaned up by afterAll.
    const [started, made] = await Promise.allSettled([
      ownLocalTestProvider(),
      scenarioRepo('clean', { extraMigrations: [{ file: '.github/consort.yml', content: appConfig(SUITE) }] }),
    ]);
    if (started.status === 'fulfilled') server = started.value;
    if (made.status === 'fulfilled') repo = made.value;
    if (started.status === 'rejected') throw started.reason;
    if (made.status === 'rejected') throw made.reason;
    db = await freshDatabase(server.adminUrl);
    providers = repoProviders({
      provider: 'local',
      adminUrl: server.adminUrl,
      ...(server.dataDir ? { dataDir: server.dataDir } : {}),
    });
    await Promise.all([
      startTestRuntime({
        storeUrl: db.url,
        providers,
        github: async (id) => appGitHub(await probot.auth(id)),
        log,
      }).then((rt) => (runtime = rt)),
      flow.tarball(repo.baseSha),
      flow.tarball(repo.headSha),
    ]);
  }, 60_000);

  afterAll(async () => {
    delete process.env.CONSORT_TEST_APP_SECRET;
    await runtime?.stop();
    await providers?.close();
    await repo?.dispose();
    await db?.drop();
    await server?.cleanup();
    restoreNetwork();
  });

  beforeEach(async () => {
    // A Probot per test: each authenticates afresh (one token exchange), as a new process would.
    probot = testProbot();
    await probot.load(consortApp(runtime.intake));
  });

  afterEach(() => {
    expect(githubLeftovers()).toEqual({ unexpected: [], unused: [] });
  });

  const flow: Flow = {
    get probot() {
      return probot;
    },
    get runtime() {
      return runtime;
    },
    get repo() {
      return repo;
    },
    get dataDir() {
      return server.dataDir;
    },
    get providers() {
      return providers;
    },
    get settings() {
      return runtime.deps.settings;
    },
    logs,
    async tarball(sha) {
      if (!tarballs.has(sha)) tarballs.set(sha, await tarballOf(repo.dir, sha, OWNER, REPO));
      return tarballs.get(sha)!;
    },
    runs: (pr) => runsOf(runtime.store.pool, prSubject(REPO_ID, pr)),
    branches: async () => (await (await providers.forRepository(REPO_ID)).list()).map((b) => b.name),
    finished: (pr, count = 1) =>
      eventually(
        async () => {
          const runs = await flow.runs(pr);
          return runs.length >= count &&
            runs.every((r) => r.state === 'completed' || r.state === 'cancelled' || r.state === 'blocked')
            ? runs
            : undefined;
        },
        `the runs of #${pr} to finish`,
        90_000,
      ), // full checks on a shared, loaded machine
    expectCheck(o) {
      const [owner, name, base] = [o.owner ?? OWNER, o.repo ?? REPO, o.base ?? repo.baseSha];
      const at = `/repos/${owner}/${name}`;
      expectNoCheckRunYet(owner, name, o.head);
      api()
        .post(`${at}/check-runs`, (b: Body) => (b.head_sha === o.head ? ((o.bodies.created = b), true) : false))
        .reply(201, { id: o.checkRunId });
      expectTarball(owner, name, o.head, tarballs.get(o.head)!);
      if (o.pr !== null)
        api()
          .get(`${at}/compare/${base}...${o.head}`)
          .query({ per_page: 1 })
          .reply(200, { merge_base_commit: { sha: base } });
      expectTarball(owner, name, base, tarballs.get(base)!);
      api()
        .patch(`${at}/check-runs/${o.checkRunId}`, (b: Body) => ((o.bodies.completed = b), true))
        .reply(200, {});
    },
    expectStickyCreated(pr, bodies, id = 900 + pr) {
      api().get(`${PATH}/issues/${pr}/comments`).query({ per_page: 100, page: 1 }).reply(200, []);
      api()
        .post(`${PATH}/issues/${pr}/comments`, (b: Body) => ((bodies.comment = b), true))
        .reply(201, { id });
    },
  };
  return flow;
}
