/**
 * Start the App: its database (DATABASE_URL, or the embedded PostgreSQL in the data directory),
 * the store migrations, the queue and its workers, Probot with the mandatory webhook secret, and
 * the HTTP server. `main` is the one place that reports a failure to start and sets the exit code.
 */
import path from 'node:path';
import { Probot, ProbotOctokit, type Logger } from 'probot';
import { createLakebaseProvider, type LakebaseProviderOptions } from '../src/branches/lakebase/provider.js';
import { EmbeddedServer } from '../src/branches/local/server.js';
import { createNeonProvider, type NeonProviderOptions } from '../src/branches/neon/provider.js';
import { VERSION } from '../src/cli/version.js';
import { isConsortError } from '../src/core/errors.js';
import { createAppDashboard } from './dashboard/host.js';
import { githubRecords } from './dashboard/github-records.js';
import { branchViews } from '../src/dashboard/branch-views.js';
import { appGitHub } from './github.js';
import { jobSettings, type AppLog, type Lane } from './jobs/deps.js';
import { GitHubHealth, observingFetch } from './github-watch.js';
import { consortOctokit, DEFAULT_OCTOKIT_POLICY, type OctokitPolicy } from './octokit.js';
import { appProviders, repoProviders, type AppProviderSettings } from './providers.js';
import { startRuntime, type AppRuntime } from './runtime.js';
import { localAdapters } from '../src/runtime/local-adapters.js';
import { ensureStoreDatabase } from './store/db.js';
import { assertPrivateKey, parseAppSettings, suiteEnvironment, type AppSettings } from './settings.js';
import { consortApp } from './index.js';
import { closeServer, createAppServer, listen } from './http.js';

export interface StartedApp {
  url: string;
  port: number;
  runtime: AppRuntime;
  probot: Probot;
  /** Whether GitHub answers, as /health reports it. */
  github: GitHubHealth;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Octokit class for Probot (tests and the benchmark turn off retries and throttling). */
  Octokit?: typeof ProbotOctokit;
  /** Retry and rate-limit bounds (tests shorten the waits). */
  octokitPolicy?: Partial<OctokitPolicy>;
  /** Options for the cloud providers' clients (tests: a fast clock, no TLS to a local stand-in). */
  cloud?: { lakebase?: LakebaseProviderOptions; neon?: NeonProviderOptions };
  /** Ask GitHub once at startup whether it answers, and say so in the log (default true). */
  probeGitHub?: boolean;
  /** Also told every line the App logs (tests read what an operator would see). */
  logSink?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  lane?: Lane;
  /** Queue polling and maintenance intervals, for tests and the benchmark. */
  pollingSeconds?: number;
}

const toAppLog = (log: Logger): AppLog => ({
  info: (message, fields) => log.info(fields ?? {}, message),
  warn: (message, fields) => log.warn(fields ?? {}, message),
  error: (message, fields) => log.error(fields ?? {}, message),
});

export async function startApp(settings: AppSettings, options: StartOptions = {}): Promise<StartedApp> {
  assertPrivateKey(settings.privateKey); // before anything starts
  const { offer } = settings;
  const embeddedDir = path.join(settings.dataDir, 'postgres');
  const needsEmbedded = settings.databaseUrl === null || offer.offered.includes('local');
  const embedded = needsEmbedded ? await new EmbeddedServer(embeddedDir).start() : undefined;
  const storeUrl = settings.databaseUrl ?? (await ensureStoreDatabase(embedded!.url, 'consort_app'));

  // Probot's logger exists only once Probot does, but its Octokit (built first) logs through it.
  const late: { log?: AppLog } = {};
  const log: AppLog = {
    info: (message, fields) => (options.logSink?.('info', message, fields), late.log?.info(message, fields)),
    warn: (message, fields) => (options.logSink?.('warn', message, fields), late.log?.warn(message, fields)),
    error: (message, fields) => (options.logSink?.('error', message, fields), late.log?.error(message, fields)),
  };
  let fetcher: typeof fetch = globalThis.fetch;
  const github = new GitHubHealth(`${settings.github.apiUrl}/meta`, () => fetcher);
  fetcher = observingFetch(github, log);

  const providerLog = (line: string): void => log.info(line);
  const providerSettings: AppProviderSettings = {
    offered: offer.offered,
    fallback: offer.fallback,
    servers: {
      ...(offer.offered.includes('local')
        ? { local: repoProviders({ provider: 'local', adminUrl: embedded!.url, dataDir: embeddedDir }) }
        : {}),
      ...(offer.offered.includes('postgres')
        ? {
            postgres: repoProviders({
              provider: 'postgres',
              adminUrl: settings.postgresUrl!,
              clone: settings.postgresClone,
            }),
          }
        : {}),
    },
    cloud: {
      ...(offer.lakebase
        ? { lakebase: createLakebaseProvider(offer.lakebase, { log: providerLog, ...options.cloud?.lakebase }) }
        : {}),
      ...(offer.neon ? { neon: createNeonProvider(offer.neon, { log: providerLog, ...options.cloud?.neon }) } : {}),
    },
  };
  const providers = appProviders(providerSettings);

  const policy = { ...DEFAULT_OCTOKIT_POLICY, ...options.octokitPolicy };
  // A create (comment, review, check run) is never repeated by the retry plugin: the adapter looks
  // for what a failed attempt made before posting again, with the same bounds (src/github/create-once.ts).
  const createRetry = { retries: policy.retries, retryAfterBaseMs: policy.retryAfterBaseMs };
  const probot = new Probot({
    appId: settings.appId,
    privateKey: settings.privateKey,
    secret: settings.webhookSecret,
    logLevel: settings.logLevel,
    ...(settings.githubApiUrl ? { baseUrl: settings.githubApiUrl } : {}),
    Octokit: consortOctokit(log, policy, options.Octokit ?? ProbotOctokit),
    request: {
      fetch: (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => fetcher(input, init),
    },
  });
  await probot.ready();
  late.log = toAppLog(probot.log);
  log.info(
    `Consort App talks to GitHub at ${settings.github.apiUrl} (${settings.github.source === 'default' ? 'github.com: neither GHE_HOST nor GITHUB_API_URL is set' : `from ${settings.github.source}`})`,
  );
  log.info(
    `Consort App offers the branch providers ${offer.offered.join(', ')} (default for repositories that do not choose: ${offer.fallback})`,
  );
  if (options.probeGitHub !== false) {
    void github.probe().then((s) => {
      if (s.reachable) log.info(`GitHub at ${settings.github.apiUrl} answers`);
      else
        log.error(
          `GitHub at ${settings.github.apiUrl} cannot be reached: ${s.lastError ?? 'no answer'}. Webhooks are still recorded; checks wait and are retried. /health reports "degraded" until it answers.`,
        );
    });
  }
  const records = async (installationId: number) => githubRecords(await probot.auth(installationId));
  const runtime = await startRuntime({
    storeUrl,
    providers,
    log,
    ...(settings.dashboard ? { records } : {}),
    github: async (installationId, context) =>
      appGitHub(await probot.auth(installationId), { log, ...(context ? { context } : {}) }, createRetry),
    queue: {
      quickConcurrency: settings.quickConcurrency,
      runConcurrency: settings.runConcurrency,
      runExpireSeconds: settings.runExpireSeconds,
      sweepCron: settings.sweepCron,
      ...(options.pollingSeconds ? { pollingSeconds: options.pollingSeconds } : {}),
    },
    jobs: jobSettings({
      leaseSeconds: settings.leaseSeconds,
      promote: settings.promote,
      maxTarballBytes: settings.maxTarballBytes,
      githubWebUrl: settings.github.webUrl,
      workspaceRoot: path.join(settings.dataDir, 'workspaces'),
      suiteEnv: suiteEnvironment(process.env, settings.suiteEnvNames),
      toolVersion: VERSION,
    }),
    ...(options.lane ? { lane: options.lane } : {}),
    lanePorts: localAdapters,
  });
  await probot.load(consortApp(runtime.intake));
  const dashboard = settings.dashboard
    ? createAppDashboard({
        store: runtime.store,
        storeUrl,
        settings: settings.dashboard,
        github: { apiUrl: settings.github.apiUrl, webUrl: settings.github.webUrl },
        installation: (id) => probot.auth(id),
        branches: async (repositoryId) => branchViews(await providers.forRepository(repositoryId)),
      })
    : null;
  const server = createAppServer({
    webhooks: await probot.getNodeMiddleware({ path: settings.webhookPath }),
    healthy: runtime.healthy,
    github: () => github.check(),
    version: VERSION,
    ...(dashboard ? { dashboard: dashboard.handle } : {}),
  });
  const { port, url } = await listen(server, settings.port, settings.host);
  log.info(
    `Consort App listening on ${url} (webhooks at ${settings.webhookPath}, health at /health${dashboard ? `, dashboard at ${settings.dashboard!.publicUrl}/dashboard` : ''})`,
  );
  return {
    url,
    port,
    runtime,
    probot,
    github,
    async close() {
      await dashboard?.close(); // ends its event streams, which would keep the server open
      await closeServer(server);
      await runtime.stop();
      await providers.close();
    },
  };
}

/** `npm run app`: settings from the environment; stops cleanly on SIGINT/SIGTERM. */
export async function main(env: NodeJS.ProcessEnv): Promise<void> {
  try {
    const app = await startApp(parseAppSettings(env));
    const stop = (): void => {
      void app.close().finally(() => process.exit(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  } catch (e) {
    const hint = isConsortError(e) && e.hint ? `\n${e.hint}` : '';
    console.error(`consort app: ${e instanceof Error ? e.message : String(e)}${hint}`);
    process.exitCode = 1;
  }
}
