/**
 * An admin that is not a superuser, as managed PostgreSQL services hand out (Neon's
 * `neon_superuser`, Lakebase's `databricks_superuser`, RDS's `rds_superuser` members): a login role
 * with CREATEDB and CREATEROLE only, made on a real server for the test, and dropped with everything
 * it made by `cleanup`.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { supportsReflink } from '../../src/branches/local/reflink.js';
import { TemplateBranchProvider } from '../../src/branches/template-provider.js';
import { quoteIdent } from '../../src/db/sql.js';
import { sharedServer } from '../setup/clusters.js';
import { dropNamespace, query, SYSTEM_PG_URL, type TestProvider } from './servers.js';

export interface RoleAdmin {
  /** The admin's own URL (same server and database as `superUrl`). */
  url: string;
  role: string;
  /** Drops the roles whose name starts with `prefix` (what the admin made), then the admin. */
  drop: (prefix?: string) => Promise<void>;
}

/** Make `role` (LOGIN CREATEDB CREATEROLE, nothing else) with a password, through the superuser `superUrl`. */
export async function createRoleAdmin(superUrl: string, role: string): Promise<RoleAdmin> {
  const password = randomBytes(12).toString('hex');
  await query(superUrl, `CREATE ROLE ${quoteIdent(role)} LOGIN CREATEDB CREATEROLE PASSWORD '${password}'`);
  const url = new URL(superUrl);
  url.username = role;
  url.password = password;
  return {
    url: url.toString(),
    role,
    drop: async (prefix) => {
      if (prefix !== undefined) {
        const made = await query<{ rolname: string }>(
          superUrl,
          'SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1) AND rolname <> $2',
          [prefix, role],
        );
        for (const { rolname } of made) await query(superUrl, `DROP ROLE IF EXISTS ${quoteIdent(rolname)}`);
      }
      await query(superUrl, `DROP ROLE IF EXISTS ${quoteIdent(role)}`);
    },
  };
}

export interface RoleAdminTestProvider extends TestProvider {
  catalogDatabase: string;
  /** The superuser URL of the same server (for the test's own inspection and cleanup). */
  superUrl: string;
}

/**
 * The `local` (shared embedded PostgreSQL 18) or `postgres` (the system server) provider whose admin
 * is a CREATEROLE + CREATEDB role, in a namespace of its own with a catalog database of its own (the
 * shared catalogs belong to the superuser and are closed to other roles).
 */
export async function roleAdminTestProvider(kind: 'local' | 'postgres'): Promise<RoleAdminTestProvider> {
  const server = kind === 'local' ? await sharedServer() : undefined;
  const superUrl = server?.url ?? SYSTEM_PG_URL;
  const namespace = `${kind === 'local' ? 'l' : 't'}${randomBytes(4).toString('hex')}`;
  const catalogDatabase = `${namespace}_catalog`;
  const admin = await createRoleAdmin(superUrl, `${namespace}_admin`);
  const provider = new TemplateBranchProvider({
    provider: kind,
    adminUrl: admin.url,
    namespace,
    databasePrefix: `${namespace}_`,
    catalogDatabase,
    cloneMode: async (version) => {
      if (!server || version < 180000) return { clone: false, reason: 'no clone in this test' };
      const { reflink, reason } = await supportsReflink(path.dirname(server.pgdata));
      return { clone: reflink, reason };
    },
  });
  return {
    provider,
    adminUrl: admin.url,
    superUrl,
    namespace,
    catalogDatabase,
    cleanup: async () => {
      await provider.close();
      await dropNamespace(superUrl, namespace, catalogDatabase);
      await admin.drop(`${namespace}_`);
    },
  };
}
