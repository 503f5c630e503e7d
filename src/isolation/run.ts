/**
 * A test run with a database per test file: the run's setup (one process: jest's globalSetup,
 * vitest's globalSetup) prepares the migrated, seeded template, warms its pool and keeps it filled
 * while the run lasts; each test file (in whatever worker) leases a branch of it and returns it.
 * The setup hands the workers a `RunSpec` (through an environment variable for jest, `provide` for
 * vitest); a worker reopens the provider from it without checking the server again and never
 * copies a template itself, so taking and returning a lease is a handful of catalog statements.
 */
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { openProvider, parseProviderName, projectRoot } from '../branches/factory.js';
import { TemplateBranchProvider, type ProviderSettingsSnapshot } from '../branches/template-provider.js';
import { loadConfig } from '../config/load.js';
import { parseDuration } from '../core/duration.js';
import { ConsortError } from '../core/errors.js';
import { MAX_POOL_SIZE } from '../branches/pool.js';
import { DEFAULT_LEASE_TTL_MS, leaseBranch, newRunTag, releaseBranch, sweepLeases, type Lease } from './lease.js';
import { prepareTestTemplate, type TestTemplate } from './template.js';

/** The environment variable that carries a run's spec to jest's workers (it holds the admin URL). */
export const RUN_SPEC_ENV = 'CONSORT_TEST_DATABASES_SECRET';

/** What the user may set (jest: testEnvironmentOptions.consortDb; vitest: the global setup's options). */
export const TestDatabasesOptions = z.strictObject({
  /** The project root (default: the git top level of the working directory). */
  root: z.string().min(1).optional(),
  /** The Consort configuration file (default: .github/consort.yml or consort.config.json, or none). */
  config: z.string().min(1).optional(),
  /** The variable each test file finds its database URL in (default: the configuration's suite.env, DATABASE_URL). */
  env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name').optional(),
  /** Ready copies of the template to keep (default: the number of workers, at least 2). */
  poolSize: z.number().int().min(0).max(MAX_POOL_SIZE).optional(),
  /** How long a lease lives if its file never returns it (a crash): a duration such as 30m (default 1h). */
  ttl: z.string().refine((t) => { try { return parseDuration(t) > 0; } catch { return false; } }, 'must be a duration such as 30m or 2h').optional(),
  /**
   * When the variable is already set (Consort's own check, a CI job with its database), use that
   * one database for every file, as without consort-db (default true).
   */
  respectExisting: z.boolean().optional(),
});
export type TestDatabasesOptions = z.infer<typeof TestDatabasesOptions>;

const Snapshot = z.object({
  provider: z.enum(['local', 'postgres']),
  adminUrl: z.string().min(1),
  namespace: z.string().min(1),
  databasePrefix: z.string(),
  catalogDatabase: z.string().min(1),
  known: z.object({ provider: z.enum(['local', 'postgres']), mode: z.enum(['clone', 'copy']), modeReason: z.string(), serverVersion: z.string() }),
});

export const RunSpec = z.object({
  settings: Snapshot,
  template: z.string().min(1),
  run: z.string().min(1),
  envName: z.string().min(1),
  ttlMs: z.number().int().positive(),
});
export type RunSpec = z.infer<typeof RunSpec>;

export function parseRunSpec(text: string): RunSpec {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  const parsed = RunSpec.safeParse(data);
  if (!parsed.success) {
    throw new ConsortError('config', `${RUN_SPEC_ENV} does not hold a test run's database settings.`, {
      hint: "It is set by consort-db's global setup: do not set it yourself; unset it and run the tests again.",
    });
  }
  return parsed.data;
}

export interface StartedRun {
  /** Undefined when the variable was already set and is used as is (see respectExisting). */
  spec: RunSpec | undefined;
  envName: string;
  template: TestTemplate | undefined;
  /** Return every lease of the run, stop refilling and close the provider (the pool stays warm). */
  stop: () => Promise<void>;
}

export interface StartOptions extends TestDatabasesOptions {
  /** How many files run at once (the default pool size). */
  workers?: number;
  processEnv?: NodeJS.ProcessEnv;
  log?: (message: string) => void;
}

/** The run's setup: template, pool, a watcher that keeps the pool filled, and a sweep of expired leases. */
export async function startTestDatabases(options: StartOptions): Promise<StartedRun> {
  const env = options.processEnv ?? process.env;
  const root = path.resolve(options.root ?? projectRoot(process.cwd()));
  const { config } = await loadConfig(root, options.config ? { path: options.config } : {});
  const envName = options.env ?? config.suite.env ?? 'DATABASE_URL';
  if (env[envName] && options.respectExisting !== false) {
    options.log?.(`consort-db: ${envName} is already set, so every test file uses that database (set respectExisting: false to lease one per file).`);
    return { spec: undefined, envName, template: undefined, stop: async () => undefined };
  }
  const providerName = parseProviderName(env.CONSORT_PROVIDER ?? config.database.provider);
  if (providerName !== 'local' && providerName !== 'postgres') {
    throw new ConsortError('config', `A database per test file needs the local or postgres provider, not ${providerName}.`, {
      hint: 'Run the tests with CONSORT_PROVIDER=local (the default) or postgres.',
    });
  }
  const namespace = env.CONSORT_NAMESPACE ?? config.database.namespace;
  const provider = await openProvider({ provider: providerName, projectRoot: root, env, ...(namespace ? { namespace } : {}), ...(options.log ? { log: options.log } : {}) });
  if (!(provider instanceof TemplateBranchProvider)) throw new ConsortError('internal', 'The provider cannot lease branches.');
  try {
    const workers = Math.max(1, options.workers ?? os.availableParallelism());
    const template = await prepareTestTemplate(provider, {
      root, config, env, poolSize: options.poolSize ?? Math.min(MAX_POOL_SIZE, Math.max(2, workers)), ...(options.log ? { log: options.log } : {}),
    });
    await sweepLeases(provider);
    const stopWatching = await provider.watchPools();
    const run = newRunTag();
    const spec: RunSpec = {
      settings: Snapshot.parse(await provider.snapshot()),
      template: template.name,
      run,
      envName,
      ttlMs: options.ttl ? parseDuration(options.ttl) : DEFAULT_LEASE_TTL_MS,
    };
    return {
      spec, envName, template,
      stop: async () => {
        await sweepLeases(provider, { run }).catch(() => []);
        await stopWatching();
        await provider.close();
      },
    };
  } catch (e) {
    await provider.close();
    throw e;
  }
}

/** The worker's side: one provider for one file's lease, reopened from the run's spec. */
export class Leaser {
  private readonly provider: TemplateBranchProvider;

  constructor(private readonly spec: RunSpec) {
    const s: ProviderSettingsSnapshot = spec.settings;
    this.provider = new TemplateBranchProvider({
      ...s,
      cloneMode: async () => ({ clone: s.known.mode === 'clone', reason: s.known.modeReason }),
      refillPools: false, // the run's setup refills (watchPools)
    });
  }

  lease(): Promise<Lease> {
    return leaseBranch(this.provider, { template: this.spec.template, run: this.spec.run, ttlMs: this.spec.ttlMs });
  }

  release(name: string): Promise<void> {
    return releaseBranch(this.provider, name);
  }

  close(): Promise<void> {
    return this.provider.close();
  }
}

/** Lease a database for one test file: the URL, and a function that returns it and closes everything. */
export async function leaseForFile(spec: RunSpec): Promise<{ lease: Lease; done: () => Promise<void> }> {
  const leaser = new Leaser(spec);
  let lease: Lease;
  try {
    lease = await leaser.lease();
  } catch (e) {
    await leaser.close();
    throw e;
  }
  return {
    lease,
    done: async () => {
      try {
        await leaser.release(lease.name);
      } finally {
        await leaser.close();
      }
    },
  };
}
