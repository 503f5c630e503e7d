/**
 * Least privilege on the server: a branch's own login role, which can reach that branch database
 * only. It is LOGIN and nothing else (no superuser, CREATEDB, CREATEROLE, replication or RLS
 * bypass), so `COPY … TO PROGRAM`, other branches, the catalog and the App's store are out of its
 * reach; CONNECT to branch databases is revoked from PUBLIC when they are made (confineDatabase).
 *
 * Two kinds of admin can make one. A superuser can do anything to it. An admin with CREATEROLE
 * (what a managed service's admin usually is: Neon's `neon_superuser`, Lakebase's
 * `databricks_superuser`, RDS's `rds_superuser` members) must be a member of the role to hand it
 * objects (ALTER … OWNER TO needs SET ROLE to the new owner): it grants itself that membership —
 * on PostgreSQL 16+ with SET only, not INHERIT, so the admin's sessions never act with the role's
 * privileges by accident; PostgreSQL 15 has no such option, and there CREATEROLE lets the admin
 * grant itself any non-superuser role. The membership only ever goes admin → role: the role is a
 * member of nothing, so it gains nothing from it.
 */
import { quoteIdent, quoteLiteral, type Queryable } from '../db/sql.js';
import { confineStatement } from './server-ops.js';

/** What the admin may do to make a confined role; null (from rolePower) when it cannot. */
export interface RolePower {
  superuser: boolean;
  /** server_version_num */
  version: number;
}

/** The power to confine: a superuser, or CREATEROLE on PostgreSQL 15 or later (the versions tested). */
export async function rolePower(db: Queryable): Promise<RolePower | null> {
  const { rows } = await db.query<{ rolsuper: boolean; rolcreaterole: boolean; v: number }>(
    `SELECT rolsuper, rolcreaterole, current_setting('server_version_num')::int AS v
       FROM pg_roles WHERE rolname = current_user`,
  );
  const me = rows[0];
  if (!me) return null;
  if (me.rolsuper) return { superuser: true, version: me.v };
  return me.rolcreaterole && me.v >= 150000 ? { superuser: false, version: me.v } : null;
}

/** In words, why an admin cannot confine (for a report that says the PR's code ran as the admin). */
export async function whyNoPower(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ u: string; v: number }>(
    "SELECT current_user::text AS u, current_setting('server_version_num')::int AS v",
  );
  const { u, v } = rows[0]!;
  return v < 150000
    ? `the server is PostgreSQL ${Math.floor(v / 10000)} (a confined role needs 15 or later)`
    : `its role "${u}" is neither a superuser nor has CREATEROLE`;
}

/**
 * Let the admin act as `role`: SET ROLE and ALTER … OWNER TO it; `inherit` also gives it the
 * role's privileges (to take its objects back when the role is retired). A superuser needs nothing.
 */
export async function actAs(db: Queryable, role: string, power: RolePower, inherit: boolean): Promise<void> {
  for (const sql of actAsStatements(role, power, inherit)) await db.query(sql);
}

function actAsStatements(role: string, power: RolePower, inherit: boolean): string[] {
  if (power.superuser) return [];
  const options = power.version >= 160000 ? ` WITH INHERIT ${inherit ? 'TRUE' : 'FALSE'}, SET TRUE` : '';
  return [`GRANT ${quoteIdent(role)} TO CURRENT_USER${options}`];
}

export function branchRoleName(database: string): string {
  return `${database.slice(0, 55)}_role`;
}

export interface UpsertRoleOptions {
  power: RolePower;
  /** Default: the database's own role name (branchRoleName). */
  role?: string;
  /**
   * Revoke PUBLIC's CONNECT on the database (default true). False on a service's branch, whose
   * database other roles of the project reach through PUBLIC (and its cluster holds no other branch).
   */
  confine?: boolean;
}

/**
 * Create (or re-key) the branch's role, and let it connect to its database only. A null password
 * makes (or leaves) it NOLOGIN without one: a pool copy's role, which nobody can log in as until a
 * handout gives it a key.
 */
export async function upsertBranchRole(
  db: Queryable,
  database: string,
  password: string | null,
  options: UpsertRoleOptions,
): Promise<string> {
  return (await keyRole(db, database, password, options, true))!;
}

/**
 * Only a new key for the branch's role (LOGIN with a new password; the old one stops working for
 * every new connection at once), for a role that already owns what is in its database: a pool
 * copy's, or one handed out before whose branch only it has changed since. Null when there is no
 * such role: make it with upsertBranchRole and grantBranchSchema.
 */
export async function rekeyBranchRole(
  db: Queryable,
  database: string,
  password: string,
  options: UpsertRoleOptions,
): Promise<string | null> {
  return keyRole(db, database, password, options, false);
}

async function keyRole(
  db: Queryable,
  database: string,
  password: string | null,
  options: UpsertRoleOptions,
  create: boolean,
): Promise<string | null> {
  const role = options.role ?? branchRoleName(database);
  const { rows } = await db.query<{ raised: boolean }>(
    'SELECT rolsuper OR rolreplication OR rolbypassrls AS raised FROM pg_roles WHERE rolname = $1',
    [role],
  );
  if (rows.length === 0 && !create) return null;
  const login = password === null ? 'NOLOGIN' : 'LOGIN';
  const attributes = `${login} NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT`;
  // The password is generated by us (base64url), never user text; PASSWORD takes no bind parameter.
  const literal = password === null ? 'NULL' : quoteLiteral(password);
  // Re-keyed by a CREATEROLE admin: PostgreSQL 16+ refuses it even NOSUPERUSER, NOREPLICATION or
  // NOBYPASSRLS (only a role that has the attribute may change it), which a role it made cannot
  // have anyway — unless a superuser gave them since: then it is no confined role.
  if (rows.length > 0 && !options.power.superuser && rows[0]!.raised)
    throw new Error(`role "${role}" has SUPERUSER, REPLICATION or BYPASSRLS, which only a superuser can take away`);
  const roleStatement =
    rows.length === 0
      ? `CREATE ROLE ${quoteIdent(role)} ${attributes} PASSWORD ${literal}`
      : options.power.superuser
        ? `ALTER ROLE ${quoteIdent(role)} ${attributes} PASSWORD ${literal}`
        : `ALTER ROLE ${quoteIdent(role)} ${login} NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD ${literal}`;
  // One batch, one transaction (one commit to wait for instead of four).
  const statements = [
    roleStatement,
    ...actAsStatements(role, options.power, false),
    ...(options.confine !== false ? [confineStatement(database)] : []),
    // CREATE: schemas and trusted extensions (pgcrypto, uuid-ossp, citext…) in its own database only.
    `GRANT CONNECT, TEMPORARY, CREATE ON DATABASE ${quoteIdent(database)} TO ${quoteIdent(role)}`,
  ];
  await db.query(statements.join(';\n'));
  return role;
}

/** Run `sql`; a CREATEROLE admin may lack the privilege on some objects (another role's): then it grants nothing. */
const tolerant = (sql: string) => `DO $g$ BEGIN ${sql}; EXCEPTION WHEN insufficient_privilege THEN NULL; END $g$`;

/**
 * Inside the branch database (as the admin): the branch's role owns its schemas, relations, types
 * and routines, so a suite, an agent or a pull request's migrations can migrate and test its own
 * branch (ALTER TABLE, ALTER TYPE … ADD VALUE, CREATE OR REPLACE FUNCTION need the owner) — and
 * nothing outside it. Sequences owned by a column and a table's row type follow their table; an
 * extension's members stay the extension's. A partitioned table and each of its partitions are
 * handed over one by one: its partition key is an internal dependency on itself, and each
 * partition's on its parent is automatic, yet neither follows the other's owner. A SECURITY DEFINER routine handed over runs as the
 * role from then on: no more power than the caller's. Only objects whose owner's privileges the
 * admin has are handed over (all of them for a superuser); the grants come first, while the admin
 * still owns what it hands over.
 */
export async function grantBranchSchema(db: Queryable, role: string, power: RolePower): Promise<void> {
  const borrowed = await borrowOwners(db, role, power);
  try {
    await handOver(db, role);
  } finally {
    for (const owner of borrowed) await actAs(db, owner, power, false);
  }
  await shareWithAdmin(db, role, power);
}

/**
 * The admin keeps reading the branch it handed over. A CREATEROLE admin on PostgreSQL 16+ holds the
 * role without its privileges (branch-role.ts), so once the role owns the branch's tables the
 * owner's own URL — `consort branch url pr-7` after a check, which leaves the PR branch for people
 * to look at, on every provider — could no longer read them. The role grants the admin every privilege on what it owns
 * now and will create (its default privileges): the admin is the branch's owner anyway, and the
 * role gains nothing by it. A superuser, or a PostgreSQL 15 admin (which inherits), needs none.
 */
async function shareWithAdmin(db: Queryable, role: string, power: RolePower): Promise<void> {
  if (power.superuser || power.version < 160000) return;
  const { rows } = await db.query<{ u: string }>('SELECT current_user::text AS u');
  const admin = quoteIdent(rows[0]!.u);
  await db.query(`SET ROLE ${quoteIdent(role)}`);
  try {
    await db.query(`DO $$ DECLARE s record; BEGIN
      FOR s IN SELECT nspname FROM pg_namespace
        WHERE nspname NOT IN ('pg_catalog', 'information_schema') AND nspname NOT LIKE 'pg\\_%'
          AND (nspowner = current_user::regrole OR nspname = 'public') LOOP
        BEGIN
          EXECUTE format('GRANT ALL ON ALL TABLES IN SCHEMA %I TO %s', s.nspname, ${quoteLiteral(admin)});
          EXECUTE format('GRANT ALL ON ALL SEQUENCES IN SCHEMA %I TO %s', s.nspname, ${quoteLiteral(admin)});
          IF (SELECT nspowner FROM pg_namespace WHERE nspname = s.nspname) = current_user::regrole THEN
            EXECUTE format('GRANT ALL ON SCHEMA %I TO %s', s.nspname, ${quoteLiteral(admin)});
          END IF;
        EXCEPTION WHEN insufficient_privilege THEN NULL;
        END;
      END LOOP;
    END $$`);
    await db.query(`ALTER DEFAULT PRIVILEGES GRANT ALL ON TABLES TO ${admin}`);
    await db.query(`ALTER DEFAULT PRIVILEGES GRANT ALL ON SEQUENCES TO ${admin}`);
    await db.query(`ALTER DEFAULT PRIVILEGES GRANT ALL ON SCHEMAS TO ${admin}`);
  } finally {
    await db.query('RESET ROLE');
  }
}

async function handOver(db: Queryable, role: string): Promise<void> {
  const r = quoteIdent(role);
  const mine = (owner: string) => `pg_has_role(${owner}, 'USAGE') AND ${owner} <> ${quoteLiteral(role)}::regrole`;
  // One batch, one transaction: the grants come first, while the admin still owns what it hands over.
  await db.query(`${tolerant(`GRANT USAGE, CREATE ON SCHEMA public TO ${r}`)};
  ${tolerant(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${r}`)};
  ${tolerant(`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${r}`)};
  ${tolerant(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO ${r}`)};
  DO $$ DECLARE x record; BEGIN
    FOR x IN SELECT n.nspname FROM pg_namespace n WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
        AND ${mine('n.nspowner')} LOOP
      EXECUTE format('ALTER SCHEMA %I OWNER TO %I', x.nspname, ${quoteLiteral(role)});
    END LOOP;
    FOR x IN SELECT c.relkind, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%' AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
        AND ${mine('c.relowner')}
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i', 'e')
          AND NOT (d.refclassid = 'pg_class'::regclass AND (d.refobjid = c.oid OR (c.relispartition AND d.deptype = 'a')))) LOOP
      EXECUTE format('ALTER %s %I.%I OWNER TO %I', CASE x.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE' WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, x.nspname, x.relname, ${quoteLiteral(role)});
    END LOOP;
    FOR x IN SELECT t.oid::regtype AS sig, t.typtype FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%' AND t.typtype IN ('e', 'd', 'r', 'c')
        AND ${mine('t.typowner')}
        AND (t.typtype <> 'c' OR (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c')
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype IN ('e', 'i', 'a')) LOOP
      EXECUTE format('ALTER %s %s OWNER TO %I', CASE x.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END, x.sig, ${quoteLiteral(role)});
    END LOOP;
    FOR x IN SELECT p.oid::regprocedure AS sig, p.prokind FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
        AND ${mine('p.proowner')}
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype IN ('e', 'i', 'a')) LOOP
      EXECUTE format('ALTER %s %s OWNER TO %I', CASE x.prokind WHEN 'p' THEN 'PROCEDURE' WHEN 'a' THEN 'AGGREGATE' ELSE 'FUNCTION' END, x.sig, ${quoteLiteral(role)});
    END LOOP;
  END $$`);
}

/**
 * A fork's objects can belong to the role of the branch it was forked from (a suite's copy of a
 * pull request's branch). A superuser hands them over as they are; a CREATEROLE admin on
 * PostgreSQL 16+ holds that role without its privileges, so it takes them (INHERIT) for the
 * hand-over and gives them back after it. Only roles it administers (that it made) qualify. It
 * takes the new owner's too: moving a table into the role's hands needs USAGE on a schema the
 * role already owns.
 */
async function borrowOwners(db: Queryable, role: string, power: RolePower): Promise<string[]> {
  if (power.superuser || power.version < 160000) return [];
  await actAs(db, role, power, true);
  const { rows } = await db.query<{ rolname: string }>(
    `SELECT DISTINCT r.rolname FROM (
         SELECT nspowner AS o FROM pg_namespace UNION SELECT relowner FROM pg_class
         UNION SELECT typowner FROM pg_type UNION SELECT proowner FROM pg_proc) x
       JOIN pg_roles r ON r.oid = x.o
      WHERE r.rolname <> $1 AND NOT pg_has_role(x.o, 'USAGE') AND pg_has_role(x.o, 'MEMBER WITH ADMIN OPTION')`,
    [role],
  );
  for (const { rolname } of rows) await actAs(db, rolname, power, true);
  return [role, ...rows.map((r) => r.rolname)];
}

/**
 * A role that confined untrusted code while a database was prepared goes: its sessions end (a
 * seed's background process keeps no way in), what it made is handed to the admin (`inside`: a
 * session on that database), and the role is dropped, so no fork inherits an object it owns.
 */
export async function retireBranchRole(
  db: Queryable,
  inside: Queryable,
  database: string,
  power: RolePower,
  role = branchRoleName(database),
): Promise<void> {
  await db.query(`ALTER ROLE ${quoteIdent(role)} NOLOGIN`);
  // A CREATEROLE admin takes the role's privileges now (also restoring a membership the role revoked on 15).
  await actAs(db, role, power, true);
  await db.query(
    'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1 AND pid <> pg_backend_pid()',
    [role],
  );
  // Handed to the admin, a SECURITY DEFINER function the seed wrote would run as the admin (a
  // superuser) for whoever calls it in any fork: it becomes SECURITY INVOKER first.
  await inside.query(`DO $$ DECLARE f record; BEGIN
    FOR f IN SELECT p.oid::regprocedure AS sig, p.prokind FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner
      WHERE r.rolname = ${quoteLiteral(role)} AND p.prosecdef LOOP
      EXECUTE format('ALTER %s %s SECURITY INVOKER', CASE f.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END, f.sig);
    END LOOP;
  END $$`);
  await inside.query(`REASSIGN OWNED BY ${quoteIdent(role)} TO CURRENT_USER`);
  await inside.query(`DROP OWNED BY ${quoteIdent(role)}`);
  await db.query(`DROP ROLE IF EXISTS ${quoteIdent(role)}`);
}

export async function dropBranchRole(db: Queryable, database: string): Promise<void> {
  await db.query(`DROP ROLE IF EXISTS ${quoteIdent(branchRoleName(database))}`);
}
