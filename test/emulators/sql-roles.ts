/**
 * Roles on an emulated service's branches. A service's admin is no superuser but has CREATEROLE
 * and CREATEDB (Neon's `neon_superuser`, Lakebase's `databricks_superuser` members): `ownerRole`
 * makes such a role on the scratch server. Roles made with SQL log in with their password: the
 * scratch server trusts every login, so the endpoint (pg-proxy.ts) checks the password against the
 * role's SCRAM verifier itself, as the real endpoint would.
 */
import { createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import pg from 'pg';
import { scratchPgUrl } from '../setup/system-postgres.js';

async function asSuperuser<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: await scratchPgUrl(), application_name: 'consort-emulator' });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** A login role with CREATEDB and (unless `createrole` is false) CREATEROLE, nothing else. */
export async function ownerRole(name: string, createrole = true): Promise<void> {
  await asSuperuser((c) => c.query(`CREATE ROLE ${quote(name)} LOGIN CREATEDB ${createrole ? 'CREATEROLE' : ''}`));
}

/** Drop the roles `owner` made (it holds a membership in each), then `owner`. */
export async function dropOwnerRole(owner: string): Promise<void> {
  await asSuperuser(async (c) => {
    const { rows } = await c.query<{ r: string }>(
      `SELECT DISTINCT m.roleid::regrole::text AS r FROM pg_auth_members m JOIN pg_roles o ON o.oid = m.member
        WHERE o.rolname = $1`,
      [owner],
    );
    for (const { r } of rows) await c.query(`DROP ROLE IF EXISTS ${r}`);
    await c.query(`DROP ROLE IF EXISTS ${quote(owner)}`);
  });
}

/** True when `user` is a login role whose SCRAM-SHA-256 verifier matches `password`. */
export async function sqlRoleLogin(user: string, password: string): Promise<boolean> {
  const rows = await asSuperuser(
    async (c) =>
      (
        await c.query<{ p: string | null }>(
          'SELECT rolpassword AS p FROM pg_authid WHERE rolname = $1 AND rolcanlogin',
          [user],
        )
      ).rows,
  );
  const m = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):/.exec(rows[0]?.p ?? '');
  if (!m) return false;
  const salted = pbkdf2Sync(password, Buffer.from(m[2]!, 'base64'), Number(m[1]), 32, 'sha256');
  const stored = createHash('sha256').update(createHmac('sha256', salted).update('Client Key').digest()).digest();
  const expected = Buffer.from(m[3]!, 'base64');
  return expected.length === stored.length && timingSafeEqual(expected, stored);
}
