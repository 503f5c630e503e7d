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
import { openProvider, parseProviderName, projectRoot } from '../branches/factory.js';
import { listenFor, MAX_POOL_SIZE } from '../branches/pool.js';
import { TemplateBranchProvider } from '../branches/template-provider.js';
import { loadConfig } from '../config/load.js';
import { parseDuration } from '../core/duration.js';
import { ConsortError } from '../core/errors.js';
import { withDatabase } from '../db/sql.js';
import { DEFAULT_LEASE_TTL_MS, newRunTag, releaseBranch, sweepLeases } from './lease.js';
import { RETURN_CHANNEL, Snapshot, type RunSpec, type TestDatabasesOptions } from './spec.js';
import { dropOldTemplates, prepareTestTemplate, type TestTemplate } from './template.js';

export { leaseForFile, Leaser } from './worker.js';
export { parseRunSpec, RUN_SPEC_ENV, RunSpec, TestDatabasesOptions } from './spec.js';

export interface StartedRun {
  /** Undefined when the variable was already set and is used as is (see respectExisting). */
  spec: RunSpec | undefined;
  envName: string;
  template: TestTemplate | undefined;
  /** Expire what is left of the run's leases, stop refilling and close the provider (the pool stays warm). */
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
    options.log?.(
      `consort-db: ${envName} is already set, so every test file uses that database (outside \`consort check\`, set respectExisting: false to lease one per file).`,
    );
    return { spec: undefined, envName, template: undefined, stop: async () => undefined };
  }
  const providerName = parseProviderName(env.CONSORT_PROVIDER ?? config.database.provider);
  if (providerName !== 'local' && providerName !== 'postgres') {
    throw new ConsortError(
      'config',
      `A database per test file needs the local or postgres provider, not ${providerName}.`,
      {
        hint: 'Run the tests with CONSORT_PROVIDER=local (the default) or postgres.',
      },
    );
  }
  const namespace = env.CONSORT_NAMESPACE ?? config.database.namespace;
  const provider = await openProvider({
    provider: providerName,
    projectRoot: root,
    env,
    ...(namespace ? { namespace } : {}),
    ...(options.log ? { log: options.log } : {}),
  }).catch((error: unknown) => {
    // respectExisting: false where the variable was set: typically a suite under `consort check`,
    // which hides the embedded server's data directory from the suite (its superuser password).
    // jest shows only the message, so what to do goes in it.
    if (!env[envName]) throw error;
    const why = error instanceof Error ? error.message : String(error);
    throw new ConsortError(
      'config',
      `consort-db could not open the ${providerName} provider to lease a database per file (${why}). ${envName} is already set: under \`consort check\` the suite cannot reach the server that holds its branches, so leave respectExisting on (the default) to use ${envName} for every file there.`,
      { cause: error },
    );
  });
  if (!(provider instanceof TemplateBranchProvider))
    throw new ConsortError('internal', 'The provider cannot lease branches.');
  try {
    const workers = Math.max(1, options.workers ?? os.availableParallelism());
    const template = await prepareTestTemplate(provider, {
      root,
      config,
      env,
      poolSize: options.poolSize ?? Math.min(MAX_POOL_SIZE, Math.max(2, workers)),
      ...(options.log ? { log: options.log } : {}),
    });
    const stopWatching = await provider.watchPools();
    const run = newRunTag();
    const settings = Snapshot.parse(await provider.snapshot());
    // Dropping a database costs a checkpoint, so drops never hold up a file: leases given back, and
    // what earlier runs left expired, are dropped here one after another while the files run.
    let stopping = false;
    let drops: Promise<unknown> = Promise.resolve();
    const later = (work: () => Promise<unknown>) => {
      drops = drops.then(() => (stopping ? undefined : work())).catch(() => undefined);
    };
    later(async () => {
      await sweepLeases(provider);
      await dropOldTemplates(provider, template.name); // once their leftover leases are gone
    });
    const stopReturns = await listenFor(
      withDatabase(settings.adminUrl, settings.catalogDatabase),
      RETURN_CHANNEL,
      settings.namespace,
      (name) => {
        if (name.startsWith(`lease-${run}-`)) later(() => releaseBranch(provider, name)); // another run's: its own setup drops it
      },
    );
    const spec: RunSpec = {
      settings,
      template: template.name,
      run,
      envName,
      ttlMs: options.ttl ? parseDuration(options.ttl) : DEFAULT_LEASE_TTL_MS,
    };
    return {
      spec,
      envName,
      template,
      stop: async () => {
        stopping = true;
        await stopReturns();
        await drops; // the drop under way
        // What is left of the run (given back too late, or never: a dead worker) expires now; the next
        // run's setup, `branch lease`, `branch gc` and `db stop` drop expired leases.
        for (const b of (await provider.list().catch(() => [])).filter((x) => x.name.startsWith(`lease-${run}-`))) {
          await provider.expire(b.name).catch(() => undefined);
        }
        await stopWatching();
        await provider.close();
      },
    };
  } catch (e) {
    await provider.close();
    throw e;
  }
}
