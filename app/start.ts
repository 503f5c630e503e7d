/**
 * Start the App: its database (DATABASE_URL, or the embedded PostgreSQL in the data directory),
 * the store migrations, the queue and its workers, Probot with the mandatory webhook secret, and
 * the HTTP server. `main` is the one place that reports a failure to start and sets the exit code.
 */
import path from 'node:path';
import { Probot, ProbotOctokit, type Logger } from 'probot';
import { EmbeddedServer } from '../src/branches/local/server.js';
import { VERSION } from '../src/cli/version.js';
import { isConsortError } from '../src/core/errors.js';
import { quoteIdent, withClient, withDatabase } from '../src/db/sql.js';
import { octokitGitHub } from '../src/app/github.js';
import { jobSettings, type AppLog, type Lane } from '../src/app/jobs/deps.js';
import { repoProviders } from '../src/app/providers.js';
import { startRuntime, type AppRuntime } from '../src/app/runtime.js';
import { parseAppSettings, suiteEnvironment, type AppSettings } from '../src/app/settings.js';
import { consortApp } from './index.js';
import { closeServer, createAppServer, listen } from './http.js';

export interface StartedApp {
  url: string;
  port: number;
  runtime: AppRuntime;
  probot: Probot;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Octokit class for Probot (tests and the benchmark turn off retries and throttling). */
  Octokit?: typeof ProbotOctokit;
  lane?: Lane;
  /** Queue polling and maintenance intervals, for tests and the benchmark. */
  pollingSeconds?: number;
}

const toAppLog = (log: Logger): AppLog => ({
  info: (message, fields) => log.info(fields ?? {}, message),
  warn: (message, fields) => log.warn(fields ?? {}, message),
  error: (message, fields) => log.error(fields ?? {}, message),
});

async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  await withClient(adminUrl, async (db) => {
    const { rows } = await db.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rows.length === 0) await db.query(`CREATE DATABASE ${quoteIdent(name)}`).catch((e: { code?: string }) => {
      if (e.code !== '42P04') throw e; // created by another App process meanwhile
    });
  });
  return withDatabase(adminUrl, name);
}

export async function startApp(settings: AppSettings, options: StartOptions = {}): Promise<StartedApp> {
  const embeddedDir = path.join(settings.dataDir, 'postgres');
  const needsEmbedded = settings.databaseUrl === null || settings.provider === 'local';
  const embedded = needsEmbedded ? await new EmbeddedServer(embeddedDir).start() : undefined;
  const storeUrl = settings.databaseUrl ?? (await ensureDatabase(embedded!.url, 'consort_app'));
  const providers = repoProviders(settings.provider === 'local'
    ? { provider: 'local', adminUrl: embedded!.url, dataDir: embeddedDir }
    : { provider: 'postgres', adminUrl: settings.postgresUrl!, clone: settings.postgresClone });

  const probot = new Probot({
    appId: settings.appId, privateKey: settings.privateKey, secret: settings.webhookSecret, logLevel: settings.logLevel,
    ...(settings.githubApiUrl ? { baseUrl: settings.githubApiUrl } : {}), ...(options.Octokit ? { Octokit: options.Octokit } : {}),
  });
  await probot.ready();
  const log = toAppLog(probot.log);
  const runtime = await startRuntime({
    storeUrl, providers, log,
    github: async (installationId) => octokitGitHub(await probot.auth(installationId)),
    queue: {
      quickConcurrency: settings.quickConcurrency, runConcurrency: settings.runConcurrency, runExpireSeconds: settings.runExpireSeconds,
      sweepCron: settings.sweepCron, ...(options.pollingSeconds ? { pollingSeconds: options.pollingSeconds } : {}),
    },
    jobs: jobSettings({
      leaseSeconds: settings.leaseSeconds, promote: settings.promote, maxTarballBytes: settings.maxTarballBytes,
      workspaceRoot: path.join(settings.dataDir, 'workspaces'), suiteEnv: suiteEnvironment(process.env, settings.suiteEnvNames), toolVersion: VERSION,
    }),
    ...(options.lane ? { lane: options.lane } : {}),
  });
  await probot.load(consortApp(runtime.intake));
  const server = createAppServer({ webhooks: await probot.getNodeMiddleware({ path: settings.webhookPath }), healthy: runtime.healthy, version: VERSION });
  const { port, url } = await listen(server, settings.port, settings.host);
  log.info(`Consort App listening on ${url} (webhooks at ${settings.webhookPath}, health at /health)`);
  return {
    url, port, runtime, probot,
    async close() {
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
