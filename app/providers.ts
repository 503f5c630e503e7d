/**
 * Database branches for every repository the App serves, on one server: each repository gets its
 * own namespace (`gh<repository id>`: branch databases prefixed with it, catalog rows keyed by
 * it), so `pr-12` of one repository never meets `pr-12` of another. The server is the App's
 * embedded PostgreSQL (`local`, the default) or one the operator runs (`postgres`).
 *
 * Also here: a provider that refuses new branch work once a run is cancelled, so a superseded
 * check stops at its next branch operation instead of finishing work nobody will look at.
 */
import path from 'node:path';
import { POSTGRES_CATALOG_DATABASE } from '../src/branches/postgres-provider.js';
import { supportsReflink } from '../src/branches/local/reflink.js';
import { TemplateBranchProvider } from '../src/branches/template-provider.js';
import { ConsortError } from '../src/core/errors.js';
import type { BranchProvider, ProviderName } from '../src/ports/branch-provider.js';
import { namespacedProvider } from './namespaced-provider.js';
import { chooseProvider, requestedProvider, type ProviderDecision } from './provider-choice.js';

export interface RepoProviders {
  /** The branches of a repository on `provider` (default: the App's default provider). */
  forRepository(repositoryId: number, provider?: ProviderName): Promise<BranchProvider>;
  /** Which provider a repository that asks for `requested` gets (undefined: it did not ask); default: the App's one. */
  choose?(requested: ProviderName | undefined): ProviderDecision;
  /** Every provider the App offers, where a repository's branches may be (cleanup looks in each); default: the App's one. */
  offered?(): ProviderName[];
  close(): Promise<void>;
}

export interface RepoProviderSettings {
  provider: ProviderName;
  /** An admin connection URL of the server branches live on. */
  adminUrl: string;
  /** local: the embedded server's data directory (for the copy-on-write probe). */
  dataDir?: string;
  /** postgres: clone mode requested (PostgreSQL 18 on a reflink filesystem). */
  clone?: boolean;
}

export const repositoryNamespace = (repositoryId: number): string => `gh${repositoryId}`;

export function repoProviders(settings: RepoProviderSettings): RepoProviders {
  const cache = new Map<number, TemplateBranchProvider>();
  const cloneMode = async (version: number): Promise<{ clone: boolean; reason: string }> => {
    if (version < 180000) return { clone: false, reason: 'PostgreSQL before 18 cannot clone files: full copies' };
    if (settings.provider === 'local' && settings.dataDir) {
      const { reflink, reason } = await supportsReflink(path.join(settings.dataDir, 'pgdata'));
      return { clone: reflink, reason };
    }
    return settings.clone
      ? { clone: true, reason: 'file_copy_method = clone (requested)' }
      : { clone: false, reason: 'full copies (CONSORT_POSTGRES_CLONE=1 for clones)' };
  };
  return {
    async forRepository(repositoryId) {
      let provider = cache.get(repositoryId);
      if (!provider) {
        const namespace = repositoryNamespace(repositoryId);
        provider = new TemplateBranchProvider({
          provider: settings.provider,
          adminUrl: settings.adminUrl,
          namespace,
          databasePrefix: `${namespace}_`,
          catalogDatabase: POSTGRES_CATALOG_DATABASE,
          cloneMode,
        });
        cache.set(repositoryId, provider);
      }
      return provider;
    },
    async close() {
      await Promise.all([...cache.values()].map((p) => p.close()));
      cache.clear();
    },
  };
}

export interface AppProviderSettings {
  /** The App's own servers by provider name (`local`: the embedded one; `postgres`: the operator's). */
  servers: Partial<Record<'local' | 'postgres', RepoProviders>>;
  /** The cloud providers the operator configured, each one project shared by every repository. */
  cloud: Partial<Record<'lakebase' | 'neon', BranchProvider>>;
  offered: ProviderName[];
  fallback: ProviderName;
}

/**
 * Every provider the App offers, behind one RepoProviders: a server's repositories are kept apart
 * by database prefix (above), a cloud project's by branch-name prefix (namespaced-provider.ts).
 */
export function appProviders(settings: AppProviderSettings): RepoProviders {
  const cache = new Map<string, BranchProvider>();
  return {
    choose: (requested) => chooseProvider(settings, requested),
    offered: () => [...settings.offered],
    async forRepository(repositoryId, name = settings.fallback) {
      if (!settings.offered.includes(name))
        throw new ConsortError('config', `This Consort App does not offer the ${name} provider.`, {
          hint: 'See docs/app.md, CONSORT_APP_PROVIDERS.',
        });
      if (name === 'local' || name === 'postgres') {
        const server = settings.servers[name];
        if (!server) throw new ConsortError('internal', `The ${name} provider is offered but not set up.`);
        return server.forRepository(repositoryId);
      }
      const cloud = settings.cloud[name];
      if (!cloud) throw new ConsortError('internal', `The ${name} provider is offered but not set up.`);
      const key = `${name}:${repositoryId}`;
      let provider = cache.get(key);
      if (!provider) cache.set(key, (provider = namespacedProvider(cloud, repositoryNamespace(repositoryId))));
      return provider;
    },
    async close() {
      cache.clear();
      await Promise.all([
        ...Object.values(settings.servers).map((s) => s.close()),
        ...Object.values(settings.cloud).map((c) => c.close()),
      ]);
    },
  };
}

/**
 * `provider` with creates, resets and ensures refused once `signal` aborts. Deletes still work,
 * so the lane's own cleanup runs to the end. URL verification is passed through untouched.
 */
export function cancellable(provider: BranchProvider, signal: AbortSignal): BranchProvider {
  const guard = (): void => {
    if (signal.aborted) {
      throw new ConsortError('internal', `cancelled: ${String(signal.reason ?? 'superseded')}`, {
        hint: 'A newer run of this pull request took over.',
      });
    }
  };
  return {
    name: provider.name,
    capabilities: () => provider.capabilities(),
    create: async (o) => (guard(), provider.create(o)),
    ensure: async (o) => (guard(), provider.ensure(o)),
    reset: async (n, o) => (guard(), provider.reset(n, o)),
    get: (n) => provider.get(n),
    list: () => provider.list(),
    delete: (n, o) => provider.delete(n, o),
    connectionUri: async (n) => (guard(), provider.connectionUri(n)),
    gc: (now) => provider.gc(now),
    close: () => provider.close(),
    // Never dropped: without it the lane could not prove a cloud branch's URL is not its parent's.
    ...(provider.verifyUrl ? { verifyUrl: provider.verifyUrl.bind(provider) } : {}),
    // The lane's per-PR run lock and drift report pass through: they are how runs take turns.
    ...(provider.lockRun ? { lockRun: provider.lockRun.bind(provider) } : {}),
    ...(provider.drift ? { drift: provider.drift.bind(provider) } : {}),
    // Nor this: without it a pull request's suite and seed would get the provider's own credentials.
    ...(provider.confinedUri ? { confinedUri: async (n: string) => (guard(), provider.confinedUri!(n)) } : {}),
  };
}

/** The provider a repository's configuration (in `workspace`, read from `source`) chooses, if the App offers it. */
export async function configuredProvider(
  providers: RepoProviders,
  repositoryId: number,
  workspace: string,
  source: string | null,
): Promise<{ ok: true; provider: BranchProvider } | { ok: false; message: string }> {
  const decision = providers.choose?.(await requestedProvider(workspace, source));
  if (decision && !decision.ok) return decision;
  return { ok: true, provider: await providers.forRepository(repositoryId, decision?.provider) };
}

/** A repository's branches on every provider the App offers (where cleanup must look). */
export async function everyProvider(providers: RepoProviders, repositoryId: number): Promise<BranchProvider[]> {
  const names: (ProviderName | undefined)[] = providers.offered?.() ?? [undefined];
  return Promise.all(names.map((name) => providers.forRepository(repositoryId, name)));
}
