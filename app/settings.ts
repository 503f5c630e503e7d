/**
 * The App's settings, read once from the environment and validated with zod. The webhook secret
 * is mandatory: without it (or with Probot's placeholder "development") the App refuses to start,
 * so signature verification cannot be switched off by forgetting a variable.
 */
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defaultCacheDir } from '../src/branches/local/paths.js';
import { ConsortError } from '../src/core/errors.js';
import type { ProviderName } from '../src/ports/branch-provider.js';
import { resolveGitHubHost, type GitHubHost } from './github-host.js';
import { APP_PROVIDERS, parseProviderOffer, type ProviderOffer } from './provider-choice.js';

const flag = z
  .enum(['0', '1', 'true', 'false', ''])
  .optional()
  .transform((v) => v === '1' || v === 'true');
const int = (fallback: number, min = 1) =>
  z.coerce
    .number()
    .int()
    .min(min)
    .optional()
    .transform((v) => v ?? fallback);

const Env = z.object({
  APP_ID: z
    .string({ error: 'APP_ID is not set (the App ID from its settings page)' })
    .regex(/^\d+$/, { error: 'APP_ID must be a number' }),
  PRIVATE_KEY: z.string().min(1).optional(),
  PRIVATE_KEY_PATH: z.string().min(1).optional(),
  WEBHOOK_SECRET: z
    .string({
      error: 'WEBHOOK_SECRET is not set: the App verifies every webhook signature and will not start without a secret',
    })
    .min(8, { error: 'WEBHOOK_SECRET must be at least 8 characters' })
    .refine((s) => s !== 'development', { error: 'WEBHOOK_SECRET must not be "development" (Probot\'s placeholder)' }),
  WEBHOOK_PATH: z.string().startsWith('/').optional(),
  PORT: int(3000, 0),
  HOST: z.string().min(1).optional(),
  GITHUB_API_URL: z.url().optional(),
  GHE_HOST: z.string().min(1).optional(),
  GHE_PROTOCOL: z.enum(['http', 'https'], { error: 'GHE_PROTOCOL must be http or https' }).optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, { error: 'DATABASE_URL must be a postgres:// URL' })
    .optional(),
  CONSORT_APP_DATA_DIR: z.string().min(1).optional(),
  CONSORT_PROVIDER: z
    .enum(APP_PROVIDERS, { error: `CONSORT_PROVIDER must be one of: ${APP_PROVIDERS.join(', ')}` })
    .optional(),
  CONSORT_APP_PROVIDERS: z.string().optional(),
  CONSORT_POSTGRES_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, { error: 'CONSORT_POSTGRES_URL must be a postgres:// URL' })
    .optional(),
  CONSORT_POSTGRES_CLONE: flag,
  CONSORT_APP_PROMOTE: flag,
  CONSORT_APP_CHECK_CONCURRENCY: int(2),
  CONSORT_APP_QUICK_CONCURRENCY: int(4),
  CONSORT_APP_LEASE_SECONDS: int(60, 5),
  CONSORT_APP_RUN_EXPIRE_SECONDS: int(7200, 60),
  CONSORT_APP_SWEEP_CRON: z.string().min(9).optional(),
  CONSORT_APP_MAX_TARBALL_MB: int(512),
  CONSORT_APP_SUITE_ENV: z.string().optional(),
  // The dashboard (docs/app.md, "Dashboard"): the App's OAuth credentials, where people reach it, the session key.
  GITHUB_CLIENT_ID: z.string().min(1).optional(),
  GITHUB_CLIENT_SECRET: z.string().min(1).optional(),
  CONSORT_DASHBOARD_URL: z
    .url({ error: 'CONSORT_DASHBOARD_URL must be the URL people open, like https://consort.example.com' })
    .optional(),
  CONSORT_DASHBOARD_SECRET: z
    .string()
    .min(32, { error: 'CONSORT_DASHBOARD_SECRET must be at least 32 characters (it seals the session cookies)' })
    .optional(),
});

/** The App's `/dashboard` (off unless all four variables are set). */
export interface DashboardSettings {
  clientId: string;
  clientSecret: string;
  /** The origin people open (`https://consort.example.com`): redirects, the Origin check, Secure cookies. */
  publicUrl: string;
  sessionSecret: string;
}

export interface AppSettings {
  appId: number;
  privateKey: string;
  webhookSecret: string;
  webhookPath: string;
  port: number;
  host: string;
  /** GITHUB_API_URL, or the one GHE_HOST/GHE_PROTOCOL give; undefined: github.com. */
  githubApiUrl: string | undefined;
  github: GitHubHost;
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
  /** The store's database; null: the embedded PostgreSQL in dataDir. */
  databaseUrl: string | null;
  dataDir: string;
  /** The provider of repositories that do not choose one (CONSORT_PROVIDER, else the first offered). */
  provider: ProviderName;
  /** What repositories may choose (CONSORT_APP_PROVIDERS), with the cloud providers' settings. */
  offer: ProviderOffer;
  postgresUrl: string | undefined;
  postgresClone: boolean;
  /** On merge, apply the merged migrations to the parent branch (pre-migration snapshot kept on failure). */
  promote: boolean;
  quickConcurrency: number;
  runConcurrency: number;
  leaseSeconds: number;
  runExpireSeconds: number;
  sweepCron: string;
  maxTarballBytes: number;
  /** Extra variables (beyond the basic ones) passed from the App's environment to a project's suite. */
  suiteEnvNames: string[];
  dashboard: DashboardSettings | null;
}

const NO_PRIVATE_KEY =
  "PRIVATE_KEY or PRIVATE_KEY_PATH is not set (the App's private key, generated on its settings page)";

function privateKey(env: z.infer<typeof Env>, read: (file: string) => string): string {
  if (env.PRIVATE_KEY) {
    const key = env.PRIVATE_KEY.replace(/\\n/g, '\n');
    return key.includes('-----BEGIN') ? key : Buffer.from(key, 'base64').toString('utf8');
  }
  if (env.PRIVATE_KEY_PATH) {
    try {
      return read(env.PRIVATE_KEY_PATH);
    } catch (e) {
      throw new ConsortError(
        'config',
        `Cannot read PRIVATE_KEY_PATH ${env.PRIVATE_KEY_PATH}: ${(e as Error).message}`,
        {
          cause: e,
          hint: "Point PRIVATE_KEY_PATH at the .pem file generated on the App's settings page (a relative path is read from the directory the App starts in), or put the key itself in PRIVATE_KEY.",
        },
      );
    }
  }
  throw new ConsortError('config', `${NO_PRIVATE_KEY}.`, {
    hint: "Download the private key from the App's settings page and point PRIVATE_KEY_PATH at it.",
  });
}

/**
 * The App's private key must be one: a wrong file (the public key, a saved web page, a truncated
 * copy) let the App start and listen, and then fail every webhook when it signs its first token.
 */
export function assertPrivateKey(key: string): void {
  try {
    createPrivateKey(key);
  } catch (e) {
    throw new ConsortError(
      'config',
      `The App's private key (PRIVATE_KEY or PRIVATE_KEY_PATH) is not a PEM private key: ${(e as Error).message}`,
      {
        cause: e,
        hint: "Use the .pem file GitHub makes on the App's settings page (Private keys → Generate a private key): it begins with -----BEGIN RSA PRIVATE KEY-----.",
      },
    );
  }
}

export function parseAppSettings(
  raw: NodeJS.ProcessEnv,
  read: (file: string) => string = (f) => readFileSync(f, 'utf8'),
): AppSettings {
  // '' from an empty `VAR=` line means "not set", as for the Action's inputs.
  const given = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== ''));
  const parsed = Env.safeParse(given);
  if (!parsed.success) {
    // Every problem at once, each naming its variable, the private key among them: an operator
    // starting the App for the first time fixes them in one go rather than one per start.
    const problems = parsed.error.issues.map((i) => {
      const name = String(i.path[0] ?? '');
      return name && !i.message.includes(name) ? `${name}: ${i.message}` : i.message;
    });
    if (given.PRIVATE_KEY === undefined && given.PRIVATE_KEY_PATH === undefined) problems.push(NO_PRIVATE_KEY);
    throw new ConsortError('config', `The App's settings are invalid: ${problems.join('; ')}`, {
      hint: 'Set them in the environment (or a .env file your process manager loads); docs/app.md lists every variable.',
    });
  }
  const env = parsed.data;
  const offer = parseProviderOffer(Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== '')));
  const github = resolveGitHubHost(env);
  const dashboardVars = [
    env.GITHUB_CLIENT_ID,
    env.GITHUB_CLIENT_SECRET,
    env.CONSORT_DASHBOARD_URL,
    env.CONSORT_DASHBOARD_SECRET,
  ];
  if (dashboardVars.some((v) => v !== undefined) && dashboardVars.some((v) => v === undefined)) {
    throw new ConsortError(
      'config',
      'The dashboard needs all of GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET, CONSORT_DASHBOARD_URL and CONSORT_DASHBOARD_SECRET; some are missing.',
      {
        hint: 'Set the four together (docs/app.md, "Dashboard"), or none to run the App without its dashboard.',
      },
    );
  }
  return {
    appId: Number(env.APP_ID),
    privateKey: privateKey(env, read),
    webhookSecret: env.WEBHOOK_SECRET,
    webhookPath: env.WEBHOOK_PATH ?? '/api/github/webhooks',
    port: env.PORT,
    host: env.HOST ?? '127.0.0.1',
    githubApiUrl: github.baseUrl,
    github,
    logLevel: env.LOG_LEVEL ?? 'info',
    databaseUrl: env.DATABASE_URL ?? null,
    dataDir: path.resolve(env.CONSORT_APP_DATA_DIR ?? path.join(defaultCacheDir(raw), 'app')),
    provider: offer.fallback,
    offer,
    postgresUrl: env.CONSORT_POSTGRES_URL,
    postgresClone: env.CONSORT_POSTGRES_CLONE,
    promote: env.CONSORT_APP_PROMOTE,
    quickConcurrency: env.CONSORT_APP_QUICK_CONCURRENCY,
    runConcurrency: env.CONSORT_APP_CHECK_CONCURRENCY,
    leaseSeconds: env.CONSORT_APP_LEASE_SECONDS,
    runExpireSeconds: env.CONSORT_APP_RUN_EXPIRE_SECONDS,
    sweepCron: env.CONSORT_APP_SWEEP_CRON ?? '*/2 * * * *',
    maxTarballBytes: env.CONSORT_APP_MAX_TARBALL_MB * 1024 * 1024,
    suiteEnvNames: (env.CONSORT_APP_SUITE_ENV ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    dashboard:
      env.GITHUB_CLIENT_ID && env.GITHUB_CLIENT_SECRET && env.CONSORT_DASHBOARD_URL && env.CONSORT_DASHBOARD_SECRET
        ? {
            clientId: env.GITHUB_CLIENT_ID,
            clientSecret: env.GITHUB_CLIENT_SECRET,
            publicUrl: new URL(env.CONSORT_DASHBOARD_URL).origin,
            sessionSecret: env.CONSORT_DASHBOARD_SECRET,
          }
        : null,
  };
}

/** What a project's suite may see of the App's environment: basics only, never the App's secrets. */
const SUITE_BASICS = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'TERM'];

export function suiteEnvironment(processEnv: NodeJS.ProcessEnv, extra: readonly string[] = []): NodeJS.ProcessEnv {
  const allowed = (key: string): boolean => SUITE_BASICS.includes(key) || key.startsWith('LC_') || extra.includes(key);
  // The lane lays this over the App's own environment, so every other variable is removed explicitly.
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.keys(processEnv).map((k) => [k, allowed(k) ? processEnv[k] : undefined]),
  );
  env.CI = 'true';
  return env;
}
