/**
 * Build the BranchProvider a command asked for. Settings come from flags and the environment,
 * parsed once here; secrets (CONSORT_POSTGRES_URL) are read from the environment only.
 */
import path from 'node:path';
import { z } from 'zod';
import { ConsortError } from '../core/errors.js';
import type { BranchProvider, ProviderName } from '../ports/branch-provider.js';
import { createLocalProvider } from './local/provider.js';
import { projectRoot, serverDir } from './local/paths.js';
import { createLakebaseProvider } from './lakebase/provider.js';
import { LAKEBASE_SETTING_NAMES, parseLakebaseSettings } from './lakebase/settings.js';
import { createNeonProvider } from './neon/provider.js';
import { NEON_SETTING_NAMES, parseNeonSettings } from './neon/settings.js';
import { createPostgresProvider } from './postgres-provider.js';

export const PROVIDERS = ['local', 'postgres', 'lakebase', 'neon'] as const satisfies readonly ProviderName[];

export interface ProviderSettings {
  provider: ProviderName;
  projectRoot: string;
  /** Where settings are read from by name (usually process.env). */
  env: NodeJS.ProcessEnv;
  /** Settings the caller gives explicitly (the Action's inputs), taking precedence over `env`. */
  explicit?: Readonly<Record<string, string>>;
  namespace?: string;
  /** local: the embedded server's data directory, instead of CONSORT_DATA_DIR or the default (the Action's reflink mount). */
  dataDir?: string;
  log?: (message: string) => void;
  /** local and postgres: refill warm pools after a handout (default true); false in a one-shot process that will not use them again. */
  refillPools?: boolean;
  /** Told every connection string with a password as soon as it is known, so a shell can mask it. */
  onSecret?: (connectionString: string) => void;
}

const PostgresEnv = z.object({
  CONSORT_POSTGRES_URL: z
    .string({ error: 'CONSORT_POSTGRES_URL is not set' })
    .refine((u) => /^postgres(ql)?:\/\//.test(u), {
      error: 'CONSORT_POSTGRES_URL must be a postgres:// or postgresql:// URL',
    }),
  CONSORT_POSTGRES_CLONE: z.enum(['0', '1', 'true', 'false']).optional(),
  CONSORT_POSTGRES_MAIN_DATABASE: z.string().min(1).optional(),
  CONSORT_NAMESPACE: z.string().min(1).optional(),
});

export function parseProviderName(value: string | undefined): ProviderName {
  const name = value ?? 'local';
  if (!(PROVIDERS as readonly string[]).includes(name)) {
    throw new ConsortError('invalid-input', `Unknown provider "${name}".`, {
      hint: `Use one of: ${PROVIDERS.join(', ')}.`,
    });
  }
  return name as ProviderName;
}

/**
 * The named settings, each from the caller's explicit ones when given there, else from the
 * environment: the parsers see only what they read, never a merged copy of the environment.
 */
function settingsNamed(names: readonly string[], settings: ProviderSettings): Record<string, string | undefined> {
  return Object.fromEntries(names.map((name) => [name, settings.explicit?.[name] ?? settings.env[name]]));
}

export async function openProvider(settings: ProviderSettings): Promise<BranchProvider> {
  if (settings.provider === 'local') {
    const { provider, server } = await createLocalProvider({
      dataDir: settings.dataDir ?? serverDir(settings.projectRoot, settings.env),
      ...(settings.log ? { log: settings.log } : {}),
      ...(settings.refillPools === false ? { refillPools: false } : {}),
    });
    settings.onSecret?.(server.url);
    return provider;
  }
  if (settings.provider === 'lakebase' || settings.provider === 'neon') return openCloudProvider(settings);
  const parsed = PostgresEnv.safeParse(settingsNamed(Object.keys(PostgresEnv.shape), settings));
  if (!parsed.success) {
    throw new ConsortError('config', parsed.error.issues.map((i) => i.message).join('; '), {
      hint: 'Export CONSORT_POSTGRES_URL=postgresql://user:password@host:5432/postgres (a role that may CREATEDB).',
    });
  }
  const env = parsed.data;
  settings.onSecret?.(env.CONSORT_POSTGRES_URL);
  return createPostgresProvider({
    url: env.CONSORT_POSTGRES_URL,
    namespace: settings.namespace ?? env.CONSORT_NAMESPACE ?? path.basename(settings.projectRoot),
    clone: env.CONSORT_POSTGRES_CLONE === '1' || env.CONSORT_POSTGRES_CLONE === 'true',
    ...(env.CONSORT_POSTGRES_MAIN_DATABASE ? { mainDatabase: env.CONSORT_POSTGRES_MAIN_DATABASE } : {}),
    ...(settings.refillPools === false ? { refillPools: false } : {}),
  });
}

/** Lakebase and Neon: settings from the environment; tokens and URLs reported to `onSecret` before any use. */
function openCloudProvider(settings: ProviderSettings): BranchProvider {
  const common = {
    ...(settings.log ? { log: settings.log } : {}),
    ...(settings.onSecret ? { onSecret: settings.onSecret } : {}),
  };
  if (settings.provider === 'lakebase') {
    const lakebase = parseLakebaseSettings(settingsNamed(LAKEBASE_SETTING_NAMES, settings));
    settings.onSecret?.(lakebase.auth.kind === 'token' ? lakebase.auth.token : lakebase.auth.clientSecret);
    return createLakebaseProvider(lakebase, common);
  }
  const neon = parseNeonSettings(settingsNamed(NEON_SETTING_NAMES, settings));
  settings.onSecret?.(neon.apiKey);
  return createNeonProvider(neon, common);
}

export { projectRoot };
