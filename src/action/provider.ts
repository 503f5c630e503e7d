/**
 * The database side of the Action: the native tools it needs (installed on first use on a runner,
 * see tools/platform-packages.ts) and the branch provider, with every connection string masked
 * as soon as it exists.
 */
import * as core from '@actions/core';
import { embeddedPostgresPackage } from '../branches/local/binaries.js';
import { openProvider, parseProviderName } from '../branches/factory.js';
import type { ConsortConfig } from '../config/schema.js';
import { squawkPackage } from '../lint/squawk.js';
import type { BranchProvider, ProviderName } from '../ports/branch-provider.js';
import { resolvePlatformPackages } from '../tools/platform-packages.js';
import type { ActionContext } from './context.js';
import type { ActionInputs } from './inputs.js';
import { reflinkDataDir } from './reflink.js';
import { registerConnectionString } from './secrets.js';

export function providerName(inputs: ActionInputs, config: ConsortConfig): ProviderName {
  return parseProviderName(inputs.provider ?? config.database.provider);
}

/** One npm install for whatever is missing, shown as its own log group. */
export async function prepareTools(provider: ProviderName, lint: boolean): Promise<void> {
  const specs = [...(provider === 'local' ? [embeddedPostgresPackage()] : []), ...(lint ? [squawkPackage()] : [])];
  if (specs.length === 0) return;
  await core.group('Tools', async () => {
    const found = await resolvePlatformPackages(specs, { log: (m) => core.info(m) });
    for (const p of found) core.info(`${p.name}@${p.version}: ${p.source} (${p.dir})`);
  });
}

export async function openActionProvider(
  inputs: ActionInputs,
  config: ConsortConfig,
  ctx: Pick<ActionContext, 'workspace' | 'runnerTemp'>,
): Promise<BranchProvider> {
  const provider = providerName(inputs, config);
  const dataDir = await reflinkDataDir(inputs.reflink, provider, ctx.runnerTemp);
  // Settings are read by name: the inputs given explicitly, else the runner's environment.
  return openProvider({
    provider,
    projectRoot: ctx.workspace,
    ...(dataDir !== undefined ? { dataDir } : {}),
    env: process.env,
    explicit: { ...inputs.cloudEnv, ...(inputs.databaseUrl ? { CONSORT_POSTGRES_URL: inputs.databaseUrl } : {}) },
    log: (m) => core.info(m),
    onSecret: registerConnectionString,
    // A check's pools serve its own handouts (the PR branch, reversibility); the job ends right after.
    ...(inputs.mode === 'check' ? { refillPools: false } : {}),
    ...(config.database.namespace ? { namespace: config.database.namespace } : {}),
  });
}
