/**
 * Which branch providers the App offers, and which one a repository gets.
 *
 * The operator sets credentials in the App's environment (CONSORT_POSTGRES_URL, Lakebase's
 * DATABRICKS_* and CONSORT_LAKEBASE_PROJECT, Neon's NEON_*); `CONSORT_APP_PROVIDERS` (a comma
 * list) limits what is offered, by default every provider whose credentials are set plus the
 * App's default (`CONSORT_PROVIDER`, else `local`). A repository chooses with `database.provider`
 * in its configuration; one that does not say gets the App's default.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { parseLakebaseSettings, type LakebaseSettings } from '../src/branches/lakebase/settings.js';
import { parseNeonSettings, type NeonSettings } from '../src/branches/neon/settings.js';
import { ConsortError } from '../src/core/errors.js';
import type { ProviderName } from '../src/ports/branch-provider.js';

export const APP_PROVIDERS = ['local', 'postgres', 'lakebase', 'neon'] as const satisfies readonly ProviderName[];

export interface ProviderOffer {
  /** What repositories may choose, the default first. */
  offered: ProviderName[];
  /** What a repository that does not choose gets. */
  fallback: ProviderName;
  lakebase?: LakebaseSettings;
  neon?: NeonSettings;
}

const isProvider = (s: string): s is ProviderName => (APP_PROVIDERS as readonly string[]).includes(s);

/** The offer from the environment; a provider that is asked for but lacks credentials is an error that names them. */
export function parseProviderOffer(env: NodeJS.ProcessEnv): ProviderOffer {
  const set = (name: string): boolean => (env[name] ?? '').trim() !== '';
  const fallbackRaw = env.CONSORT_PROVIDER?.trim() || undefined;
  if (fallbackRaw !== undefined && !isProvider(fallbackRaw)) {
    throw new ConsortError('config', `CONSORT_PROVIDER "${fallbackRaw}" is not a provider.`, {
      hint: `Use one of: ${APP_PROVIDERS.join(', ')}.`,
    });
  }
  let offered: ProviderName[];
  const listed =
    env.CONSORT_APP_PROVIDERS?.split(',')
      .map((s) => s.trim())
      .filter(Boolean) ?? [];
  if (listed.length > 0) {
    const unknown = listed.filter((p) => !isProvider(p));
    if (unknown.length > 0)
      throw new ConsortError('config', `CONSORT_APP_PROVIDERS names unknown provider(s): ${unknown.join(', ')}.`, {
        hint: `Use a comma list of: ${APP_PROVIDERS.join(', ')}.`,
      });
    offered = [...new Set(listed as ProviderName[])];
    if (fallbackRaw !== undefined && !offered.includes(fallbackRaw)) {
      throw new ConsortError(
        'config',
        `CONSORT_PROVIDER is ${fallbackRaw}, which CONSORT_APP_PROVIDERS (${offered.join(', ')}) does not offer.`,
        {
          hint: 'Add it to CONSORT_APP_PROVIDERS, or set CONSORT_PROVIDER to one of them.',
        },
      );
    }
  } else {
    offered = [fallbackRaw ?? 'local'];
    if (set('CONSORT_POSTGRES_URL')) offered.push('postgres');
    if (set('DATABRICKS_HOST')) offered.push('lakebase');
    if (set('NEON_API_KEY')) offered.push('neon');
    offered = [...new Set(offered)];
  }
  const fallback = fallbackRaw ?? offered[0]!;
  if (offered.includes('postgres') && !set('CONSORT_POSTGRES_URL')) {
    throw new ConsortError(
      'config',
      'The postgres provider needs CONSORT_POSTGRES_URL (an admin URL of the server branches live on).',
    );
  }
  return {
    offered: [fallback, ...offered.filter((p) => p !== fallback)],
    fallback,
    // Parsed now, so a missing or malformed credential stops the App at startup, not at the first check.
    ...(offered.includes('lakebase') ? { lakebase: parseLakebaseSettings(env) } : {}),
    ...(offered.includes('neon') ? { neon: parseNeonSettings(env) } : {}),
  };
}

export type ProviderDecision = { ok: true; provider: ProviderName } | { ok: false; message: string };

/** The provider for a repository that asked for `requested` (undefined: it did not say). */
export function chooseProvider(
  offer: Pick<ProviderOffer, 'offered' | 'fallback'>,
  requested: ProviderName | undefined,
): ProviderDecision {
  if (requested === undefined) return { ok: true, provider: offer.fallback };
  if (offer.offered.includes(requested)) return { ok: true, provider: requested };
  return {
    ok: false,
    message:
      `This repository's configuration asks for database.provider "${requested}", which this Consort App does not offer (it offers: ${offer.offered.join(', ')}). ` +
      `Set database.provider to one of those, or remove it to use "${offer.fallback}"; the App's operator can offer more with CONSORT_APP_PROVIDERS and the provider's credentials (docs/app.md).`,
  };
}

/**
 * `database.provider` as written in the configuration file, or undefined when the file does not
 * say (the parsed configuration cannot tell: its schema fills in `local`). The file was already
 * validated by loadConfig, so only the one key is read here.
 */
export async function requestedProvider(workspace: string, source: string | null): Promise<ProviderName | undefined> {
  if (source === null) return undefined;
  const raw: unknown = parse(await readFile(path.resolve(workspace, source), 'utf8'));
  const database = typeof raw === 'object' && raw !== null && 'database' in raw ? raw.database : undefined;
  const provider =
    typeof database === 'object' && database !== null && 'provider' in database ? database.provider : undefined;
  return typeof provider === 'string' && isProvider(provider) ? provider : undefined;
}
