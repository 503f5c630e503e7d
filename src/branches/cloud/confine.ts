/**
 * A confined role on a managed service's branch (Neon, Lakebase), made with SQL through the
 * branch's own endpoint. On these services every branch is a Postgres cluster of its own and its
 * roles are the branch's (a child inherits its parent's), so a role made on a pull request's
 * branch exists on that branch and the branches forked from it, nowhere else. The services' admin
 * roles are no superusers but have CREATEROLE (`neon_superuser`, `databricks_superuser`), which on
 * PostgreSQL 15+ is enough (branch-role.ts). The role can CONNECT to the branch's database (and,
 * through PUBLIC, to the cluster's databases the admin does not own: Neon's `postgres`); CONNECT is
 * revoked from PUBLIC on the other databases the admin owns. PUBLIC keeps CONNECT on the branch's own
 * database, which the project's other roles (Lakebase's OAuth identities) reach that way.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { newClient, pgErrorCode, quoteIdent } from '../../db/sql.js';
import { grantBranchSchema, retireBranchRole, rolePower, upsertBranchRole, whyNoPower } from '../branch-role.js';

export type Confined = { url: string } | { url: null; reason: string };

/** The role's name for a service branch id (Neon `br-…`, a Lakebase branch id). */
export function cloudRoleName(branchId: string): string {
  return `consort_${branchId.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`.slice(0, 63);
}

/** Make (or re-key) `role` on the branch `adminUrl` reaches, hand it the database's objects, and give its URL. */
export async function confineCloudBranch(adminUrl: string, role: string): Promise<Confined> {
  const db = newClient({ connectionString: adminUrl, application_name: 'consort' });
  await db.connect();
  let made = false;
  try {
    const power = await rolePower(db);
    if (!power) return { url: null, reason: await whyNoPower(db) };
    const { rows } = await db.query<{ d: string }>('SELECT current_database() AS d');
    const database = rows[0]!.d;
    const password = randomBytes(18).toString('base64url'); // 144 bits: above the services' password rules
    try {
      await upsertBranchRole(db, database, password, { power, role, confine: false });
      made = true;
    } catch (e) {
      if (pgErrorCode(e) !== '42501') throw e; // the admin may not make roles after all (a service's policy)
      return { url: null, reason: `it may not make a role: ${(e as Error).message}` };
    }
    await revokeOtherDatabases(db, database);
    await grantBranchSchema(db, role, power);
    const url = new URL(adminUrl);
    url.username = encodeURIComponent(role);
    url.password = encodeURIComponent(password);
    const refused = await loginRefused(url.toString());
    if (refused) {
      await db.query(`ALTER ROLE ${quoteIdent(role)} NOLOGIN`).catch(() => undefined);
      return { url: null, reason: `the endpoint refused a password login for a role made with SQL (${refused})` };
    }
    return { url: url.toString() };
  } catch (e) {
    if (made) await db.query(`ALTER ROLE ${quoteIdent(role)} NOLOGIN`).catch(() => undefined);
    throw e;
  } finally {
    await db.end().catch(() => undefined);
  }
}

/**
 * Drop a role that confined a seed on a staging branch, before the branch is published: what it
 * made goes to the admin (SECURITY DEFINER routines become INVOKER), so no fork inherits the role.
 */
export async function retireCloudRole(adminUrl: string, role: string): Promise<void> {
  const db = newClient({ connectionString: adminUrl, application_name: 'consort' });
  await db.connect();
  try {
    const power = await rolePower(db);
    if (!power) throw new Error(`the admin can no longer manage role "${role}"`);
    const { rows } = await db.query<{ d: string }>('SELECT current_database() AS d');
    await retireBranchRole(db, db, rows[0]!.d, power, role);
  } finally {
    await db.end().catch(() => undefined);
  }
}

/**
 * PUBLIC loses CONNECT on the cluster's other databases that the admin owns (it cannot on the
 * others); those already closed are left alone (no write, so no clash with a concurrent confine).
 */
async function revokeOtherDatabases(db: pg.Client, database: string): Promise<void> {
  const { rows } = await db.query<{ datname: string }>(
    `SELECT datname FROM pg_database
      WHERE datname <> $1 AND datallowconn AND NOT datistemplate AND pg_has_role(datdba, 'USAGE')
        AND EXISTS (SELECT 1 FROM aclexplode(coalesce(datacl, acldefault('d', datdba))) a
                     WHERE a.grantee = 0 AND a.privilege_type = 'CONNECT')`,
    [database],
  );
  for (const { datname } of rows)
    await db.query(`REVOKE CONNECT, TEMPORARY ON DATABASE ${quoteIdent(datname)} FROM PUBLIC`).catch((e: unknown) => {
      if (pgErrorCode(e) !== '3D000') throw e; // dropped meanwhile
    });
}

/** Why the role cannot log in with its password (a service that allows only its own tokens), or null. */
async function loginRefused(url: string): Promise<string | null> {
  const c = newClient({ connectionString: url, application_name: 'consort', connectionTimeoutMillis: 10_000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return null;
  } catch (e) {
    const code = pgErrorCode(e);
    if (code === '28P01' || code === '28000') return (e as Error).message;
    throw e;
  } finally {
    await c.end().catch(() => undefined);
  }
}
