/**
 * The `postgres` provider: branches as databases on a server the user already runs (a CI service
 * container, docker-compose, a shared dev server), PostgreSQL 15–18, reached with an admin URL
 * whose role may CREATEDB. Branch databases are prefixed with the namespace, and the catalog rows
 * are keyed by it, so several projects can share one server without seeing each other's branches.
 */
import { TemplateBranchProvider } from './template-provider.js';
import { sanitizeNamespace } from './database-name.js';

export const POSTGRES_CATALOG_DATABASE = 'consort_catalog';

export interface PostgresProviderOptions {
  /** Admin connection string (CONSORT_POSTGRES_URL). */
  url: string;
  namespace: string;
  /** Opt in to `file_copy_method = clone` (PostgreSQL 18 on a reflink filesystem; Consort cannot see the server's disk). */
  clone?: boolean;
  /** Adopt an existing database as the root branch `main`. */
  mainDatabase?: string;
  catalogDatabase?: string;
  /** Refill warm pools after a handout (default true); false in a one-shot process that will not use them again. */
  refillPools?: boolean;
}

export function createPostgresProvider(options: PostgresProviderOptions): TemplateBranchProvider {
  const namespace = sanitizeNamespace(options.namespace);
  return new TemplateBranchProvider({
    provider: 'postgres',
    adminUrl: options.url,
    namespace,
    databasePrefix: `${namespace}_`,
    catalogDatabase: options.catalogDatabase ?? POSTGRES_CATALOG_DATABASE,
    ...(options.mainDatabase ? { mainDatabase: options.mainDatabase } : {}),
    ...(options.refillPools === false ? { refillPools: false } : {}),
    cloneMode: async (version) => {
      if (!options.clone)
        return {
          clone: false,
          reason: 'full copies (set CONSORT_POSTGRES_CLONE=1 on PostgreSQL 18 with a reflink filesystem for clones)',
        };
      if (version < 180000)
        return { clone: false, reason: 'clone requested, but PostgreSQL before 18 cannot clone files: full copies' };
      return {
        clone: true,
        reason: 'file_copy_method = clone (requested; copy-on-write if the server filesystem has reflinks)',
      };
    },
  });
}
