/**
 * Warm pools: N ready copies of a template branch, made before anyone asks, so that `create` from a
 * pooled template is a rename plus a catalog row instead of a copy (IntegreSQL's idea, with real
 * copy-on-write underneath and no extra server).
 *
 * A member is a database `<prefix>consort_pool_<random>` with a row in `consort.pool_members`. It is
 * only handed out while the template is unchanged since the copy was made: each member records the
 * template's fingerprint (its oid, and the commit/row counters the server keeps for it), and a
 * template whose fingerprint moved has its members dropped instead. A template with open sessions is
 * never served from the pool (its counters may not be flushed yet); the caller falls back to a copy.
 *
 * Crash safety follows the catalog's rule: a member row is written `filling` before its database is
 * created and `ready` after, under an advisory lock on the member; `sweep` drops what a dead process
 * left (rows whose lock is free, and pool databases with no row at all).
 */
import { randomBytes } from 'node:crypto';
import { newClient, quoteIdent, type Queryable } from '../db/sql.js';
import type { PoolStatus } from '../ports/branch-provider.js';
import { branchRoleName } from './branch-role.js';
import {
  copyDatabase,
  databaseExists,
  dropDatabase,
  renameDatabase,
  sessionsOn,
  sessionsStaying,
} from './server-ops.js';

/** At most this many ready copies per template (each is a whole database on a copy-mode server). */
export const MAX_POOL_SIZE = 64;

/** The catalog database's NOTIFY channel for handouts: the payload is `[namespace, template]` as JSON. */
export const HANDOUT_CHANNEL = 'consort_pool_handout';

/**
 * Call `onHandout(template)` for every handout from a pool of `namespace`. Returns a function that
 * stops listening. A lost session only stops the refills: a pool left empty makes `create` copy the
 * template, as without a pool.
 */
export function listenForHandouts(
  catalogUrl: string,
  namespace: string,
  onHandout: (template: string) => void,
): Promise<() => Promise<void>> {
  return listenFor(catalogUrl, HANDOUT_CHANNEL, namespace, onHandout);
}

/**
 * Call `on(name)` for every NOTIFY on `channel` whose payload is `[namespace, name]` (JSON) for this
 * namespace, on a session of its own (LISTEN needs one). Returns a function that stops listening.
 */
export async function listenFor(
  url: string,
  channel: string,
  namespace: string,
  on: (name: string) => void,
): Promise<() => Promise<void>> {
  const client = newClient({ connectionString: url, application_name: 'consort-listen' });
  client.on('notification', (n) => {
    if (n.channel !== channel) return;
    try {
      const [ns, name] = JSON.parse(n.payload ?? '') as unknown[];
      if (ns === namespace && typeof name === 'string') on(name);
    } catch {
      // not ours
    }
  });
  await client.connect();
  await client.query(`LISTEN ${quoteIdent(channel)}`);
  return async () => {
    await client.end().catch(() => undefined);
  };
}

const DDL = `
CREATE TABLE IF NOT EXISTS consort.pools (
  namespace  text        NOT NULL,
  template   text        NOT NULL,
  size       integer     NOT NULL CHECK (size > 0),
  settled    text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, template),
  FOREIGN KEY (namespace, template) REFERENCES consort.branches (namespace, name) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS consort.pool_members (
  namespace   text        NOT NULL,
  template    text        NOT NULL,
  database    text        NOT NULL PRIMARY KEY,
  state       text        NOT NULL CHECK (state IN ('filling', 'ready')),
  fingerprint text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE consort.pools ADD COLUMN IF NOT EXISTS settled text;
ALTER TABLE consort.pools ADD COLUMN IF NOT EXISTS owned boolean NOT NULL DEFAULT false;
ALTER TABLE consort.pool_members ADD COLUMN IF NOT EXISTS role boolean NOT NULL DEFAULT false;
CREATE TABLE IF NOT EXISTS consort.pool_owners (
  namespace  text        NOT NULL,
  template   text        NOT NULL,
  owner      text        NOT NULL,
  pid        integer     NOT NULL,
  host       text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, template, owner),
  FOREIGN KEY (namespace, template) REFERENCES consort.pools (namespace, template) ON DELETE CASCADE
);`;

export async function ensurePoolSchema(db: Queryable): Promise<void> {
  await db.query(DDL);
}

/**
 * What `take` found: a database to rename, or why the pool could not serve. `role`: the name of the
 * confined role the member came with (null: none), already the owner of what is in it and still
 * without a login or password — the target's (`branchRoleName`) unless the caller or a conflict kept
 * the member's own.
 */
export type Handout =
  | { kind: 'member'; database: string; role: string | null }
  | { kind: 'miss'; reason: 'no-pool' | 'empty' | 'stale' | 'busy' };

/**
 * Makes a member's confined role as the member is filled (NOLOGIN, no password, owner of the copy's
 * objects, CONNECT on the copy only); false when this server's admin cannot make one.
 */
export type PrepareMember = (database: string) => Promise<boolean>;

/** Drop the roles of pool copies (or of a branch database renamed aside); each may already be gone. */
export async function dropRolesOf(db: Queryable, databases: readonly string[]): Promise<void> {
  for (const d of databases)
    await db.query(`DROP ROLE IF EXISTS ${quoteIdent(branchRoleName(d))}`).catch(() => undefined);
}

/**
 * The template's identity, change counters and own settings: equal fingerprints mean no change
 * between them. Any write to the template comes from a client session on it (`sessions`, which
 * counts client backends only) and most change rows (tup_*); a reset or a re-created template has
 * another oid. An `ALTER DATABASE … SET` can come from a session on any database, so the settings a
 * copy would carry (database-settings.ts) are part of it too. Transaction counts are not used:
 * autovacuum's visits to an unchanged template commit transactions there, which made good copies
 * look stale. Without `track_counts` the counters stand still, so there is no fingerprint and the
 * pool never serves. `settingsOf`: take the settings part from this database instead (a copy just
 * made: what it really got, even if the template's settings changed meanwhile).
 */
export async function fingerprint(
  db: Queryable,
  database: string,
  settingsOf: string = database,
): Promise<string | undefined> {
  const { rows } = await db.query<{ f: string | null }>(
    `SELECT CASE WHEN current_setting('track_counts')::boolean
                 THEN concat_ws(':', d.oid, s.sessions, s.tup_inserted, s.tup_updated, s.tup_deleted,
                                extract(epoch FROM s.stats_reset),
                                (SELECT 's' || md5(string_agg(r.setrole::text || '=' || r.setconfig::text, ','
                                                              ORDER BY r.setrole))
                                   FROM pg_db_role_setting r JOIN pg_database rd ON rd.oid = r.setdatabase
                                  WHERE rd.datname = $2)) END AS f
       FROM pg_database d LEFT JOIN pg_stat_database s ON s.datid = d.oid
      WHERE d.datname = $1`,
    [database, settingsOf],
  );
  return rows[0]?.f ?? undefined;
}

/** Drops databases a pool no longer holds (their rows already gone); by default one after another on `db`. */
export type DropDatabases = (db: Queryable, databases: readonly string[]) => Promise<void>;

const oneByOne: DropDatabases = async (db, databases) => {
  for (const d of databases) await dropDatabase(db, d, true);
};

export class Pools {
  constructor(
    private readonly namespace: string,
    private readonly databasePrefix: string,
    /**
     * How copies are dropped: the provider drops them side by side on connections of its own (on
     * PostgreSQL 15 and older every DROP DATABASE waits for a checkpoint, which drops under way
     * together share).
     */
    private readonly dropDatabases: DropDatabases = oneByOne,
  ) {}

  memberLockKey(database: string): string {
    return `consort:pool-member:${database}`;
  }

  /** Held on a session of its own by a process that owns pools, for as long as it lives. */
  ownerLockKey(owner: string): string {
    return `consort:pool-owner:${owner}`;
  }

  memberPattern(): string {
    return `${this.databasePrefix}consort_pool_`;
  }

  async status(db: Queryable, template?: string): Promise<PoolStatus[]> {
    const { rows } = await db.query<{ template: string; size: number; ready: string }>(
      `SELECT p.template, p.size,
              (SELECT count(*) FROM consort.pool_members m
                WHERE m.namespace = p.namespace AND m.template = p.template AND m.state = 'ready') AS ready
         FROM consort.pools p
        WHERE p.namespace = $1 AND ($2::text IS NULL OR p.template = $2)
        ORDER BY p.template`,
      [this.namespace, template ?? null],
    );
    return rows.map((r) => ({ template: r.template, size: r.size, ready: Number(r.ready) }));
  }

  /** Size a pool by hand (0 forgets it): such a pool is nobody's run's, so it is not owned. */
  async setSize(db: Queryable, template: string, size: number): Promise<void> {
    if (size === 0)
      await db.query('DELETE FROM consort.pools WHERE namespace = $1 AND template = $2', [this.namespace, template]);
    else {
      await db.query(
        `INSERT INTO consort.pools (namespace, template, size) VALUES ($1, $2, $3)
         ON CONFLICT (namespace, template) DO UPDATE SET size = EXCLUDED.size, owned = false`,
        [this.namespace, template, size],
      );
    }
  }

  /**
   * Set up (or join) a pool owned by `owner`: a new pool is owned; an owned one grows to `size` if
   * smaller; a pool someone set up by hand keeps its size and is not owned (nothing of this run
   * drops it). Returns whether `owner` now holds the pool (and must release it).
   */
  async claim(
    db: Queryable,
    template: string,
    size: number,
    owner: { id: string; pid: number; host: string },
  ): Promise<boolean> {
    const { rows } = await db.query<{ owned: boolean }>(
      `INSERT INTO consort.pools (namespace, template, size, owned) VALUES ($1, $2, $3, true)
       ON CONFLICT (namespace, template) DO UPDATE
         SET size = CASE WHEN consort.pools.owned THEN greatest(consort.pools.size, EXCLUDED.size)
                         ELSE consort.pools.size END
       RETURNING owned`,
      [this.namespace, template, size],
    );
    if (!rows[0]!.owned) return false;
    await db.query(
      `INSERT INTO consort.pool_owners (namespace, template, owner, pid, host) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT DO NOTHING`,
      [this.namespace, template, owner.id, owner.pid, owner.host],
    );
    return true;
  }

  /**
   * `owner` is done with `template`'s pool: when it was the last owner of an owned pool, the pool
   * and its copies are dropped. The caller holds the template's branch lock (no refill is under
   * way). Returns the copies dropped.
   */
  async release(db: Queryable, template: string, owner: string): Promise<number> {
    await db.query('DELETE FROM consort.pool_owners WHERE namespace = $1 AND template = $2 AND owner = $3', [
      this.namespace,
      template,
      owner,
    ]);
    return this.dropIfOwnerless(db, template);
  }

  /** Drop an owned pool nobody owns any more, with its copies (caller holds the template's lock). */
  async dropIfOwnerless(db: Queryable, template: string): Promise<number> {
    const { rows } = await db.query<{ orphaned: boolean }>(
      `SELECT p.owned AND NOT EXISTS (SELECT 1 FROM consort.pool_owners o
                                       WHERE o.namespace = p.namespace AND o.template = p.template) AS orphaned
         FROM consort.pools p WHERE p.namespace = $1 AND p.template = $2`,
      [this.namespace, template],
    );
    if (rows[0]?.orphaned !== true) return 0;
    return this.drain(db, template, true);
  }

  /**
   * Forget the owners that are gone (their session lock is free: the process died or its session
   * ended without a release) and name the owned pools nobody owns any more, for the caller to drop
   * under each template's lock (`dropIfOwnerless`).
   */
  async reapOwners(db: Queryable): Promise<string[]> {
    const { rows } = await db.query<{ template: string; owner: string }>(
      'SELECT template, owner FROM consort.pool_owners WHERE namespace = $1',
      [this.namespace],
    );
    for (const r of rows) {
      const key = this.ownerLockKey(r.owner);
      const { rows: got } = await db.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok',
        [key],
      );
      if (!got[0]!.ok) continue; // alive
      try {
        await db.query('DELETE FROM consort.pool_owners WHERE namespace = $1 AND template = $2 AND owner = $3', [
          this.namespace,
          r.template,
          r.owner,
        ]);
      } finally {
        await db.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
      }
    }
    const { rows: orphaned } = await db.query<{ template: string }>(
      `SELECT p.template FROM consort.pools p
        WHERE p.namespace = $1 AND p.owned
          AND NOT EXISTS (SELECT 1 FROM consort.pool_owners o WHERE o.namespace = p.namespace AND o.template = p.template)
        ORDER BY p.template`,
      [this.namespace],
    );
    return orphaned.map((r) => r.template);
  }

  /**
   * Take one ready member of `template` (whose database is `templateDb`) and rename it to `target`, in
   * one transaction: either the caller has its database and the member is gone, or nothing changed.
   * Stale members are left for `dropStale`. `db` must be a dedicated session (it runs BEGIN/COMMIT).
   */
  async take(
    db: Queryable,
    template: string,
    templateDb: string,
    target: string,
    /** The name the member's role takes (default: the target's `branchRoleName`; null: it keeps its own). */
    options: { roleAs?: string | null } = {},
  ): Promise<Handout> {
    const pool = await this.status(db, template);
    if (pool.length === 0) return { kind: 'miss', reason: 'no-pool' };
    if ((await sessionsStaying(db, templateDb)).length > 0) return { kind: 'miss', reason: 'busy' };
    const current = await fingerprint(db, templateDb);
    await db.query('BEGIN');
    try {
      const { rows } = await db.query<{ database: string; fingerprint: string | null; role: boolean }>(
        `SELECT database, fingerprint, role FROM consort.pool_members
          WHERE namespace = $1 AND template = $2 AND state = 'ready'
          ORDER BY (fingerprint IS NOT DISTINCT FROM $3) DESC, created_at
          LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [this.namespace, template, current ?? null],
      );
      const member = rows[0];
      if (!member || current === undefined || member.fingerprint !== current) {
        await db.query('ROLLBACK');
        return { kind: 'miss', reason: member ? 'stale' : 'empty' };
      }
      await db.query('DELETE FROM consort.pool_members WHERE database = $1', [member.database]);
      await renameDatabase(db, member.database, target);
      const roleAs = options.roleAs === undefined ? branchRoleName(target) : options.roleAs;
      const own = branchRoleName(member.database);
      const role = !member.role
        ? null
        : roleAs !== null && (await this.renameRole(db, member.database, roleAs))
          ? roleAs
          : own;
      // Delivered at COMMIT: a process watching the pools (watchPools) refills it.
      await db.query('SELECT pg_notify($1, $2)', [HANDOUT_CHANNEL, JSON.stringify([this.namespace, template])]);
      await db.query('COMMIT');
      return { kind: 'member', database: target, role };
    } catch (e) {
      await db.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  /**
   * The member's role takes the name the branch's role has (`roleAs`), in the handout's transaction.
   * A role of that name left behind (its drop failed when its branch went) is dropped first; if that
   * fails too, the member keeps its role's name and false says so: the first `confinedUri` then makes
   * the branch's role the long way, handing it the objects (the member's role, NOLOGIN and without a
   * password, owns nothing after that and goes with the next `sweep`).
   */
  private async renameRole(db: Queryable, member: string, roleAs: string): Promise<boolean> {
    await db.query('SAVEPOINT consort_member_role');
    try {
      await db.query(`DROP ROLE IF EXISTS ${quoteIdent(roleAs)}`);
      await db.query(`ALTER ROLE ${quoteIdent(branchRoleName(member))} RENAME TO ${quoteIdent(roleAs)}`);
      await db.query('RELEASE SAVEPOINT consort_member_role');
      return true;
    } catch {
      await db.query('ROLLBACK TO SAVEPOINT consort_member_role');
      return false;
    }
  }

  /** Drop members' databases, then their roles (a role cannot go while it owns objects in one). */
  private async dropMembers(db: Queryable, databases: readonly string[]): Promise<void> {
    await this.dropDatabases(db, databases);
    await dropRolesOf(db, databases);
  }

  /** Drop the members of `template` made from another state of it than the current one. */
  async dropStale(db: Queryable, template: string, templateDb: string): Promise<number> {
    const current = await fingerprint(db, templateDb);
    const { rows } = await db.query<{ database: string }>(
      `DELETE FROM consort.pool_members
        WHERE namespace = $1 AND template = $2 AND state = 'ready' AND fingerprint IS DISTINCT FROM $3
        RETURNING database`,
      [this.namespace, template, current ?? null],
    );
    await this.dropMembers(
      db,
      rows.map((r) => r.database),
    );
    return rows.length;
  }

  /**
   * Copy the template until the pool holds `size` ready members of its current state. The caller
   * holds the template's branch lock (so it is neither reset nor deleted meanwhile) and has checked
   * that nobody is connected to it. Returns how many copies were made.
   */
  async fill(
    db: Queryable,
    template: string,
    templateDb: string,
    clone: boolean,
    onCopy?: (made: number, wanted: number) => void,
    prepare?: PrepareMember,
  ): Promise<number> {
    await this.dropStale(db, template, templateDb);
    const [pool] = await this.status(db, template);
    if (!pool) return 0;
    const wanted = pool.size - pool.ready;
    let made = 0;
    for (; made < wanted; made++) {
      if ((await sessionsOn(db, templateDb)).length > 0) break; // someone connected: the copy would fail
      const database = `${this.memberPattern()}${randomBytes(6).toString('hex')}`;
      const key = this.memberLockKey(database);
      await db.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]);
      try {
        await db.query(
          "INSERT INTO consort.pool_members (namespace, template, database, state) VALUES ($1, $2, $3, 'filling')",
          [this.namespace, template, database],
        );
        await copyDatabase(db, database, templateDb, template, clone);
        const after = await fingerprint(db, templateDb, database);
        // The copy's confined role is made now, off anyone's time, so a handout needs only a rename
        // and a password; a member whose role could not be made goes (the next refill tries again).
        const role = prepare
          ? await prepare(database).catch(async (e: unknown) => {
              await this.dropMembers(db, [database]).catch(() => undefined);
              await db.query('DELETE FROM consort.pool_members WHERE database = $1', [database]);
              throw e;
            })
          : false;
        await db.query(
          "UPDATE consort.pool_members SET state = 'ready', fingerprint = $2, role = $3 WHERE database = $1",
          [database, after ?? null, role],
        );
      } finally {
        await db.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
      }
      onCopy?.(made + 1, wanted);
    }
    return made;
  }

  /**
   * Run `vacuum` (VACUUM (ANALYZE) on the template) unless the template is unchanged since the last
   * time: afterwards autovacuum finds nothing to do there, so it does not move the counters and make
   * every copy look stale. Only the explicit `branch pool` does this — a background refill never
   * connects to the template, so it never gets in the way of a create that copies it.
   */
  async settle(db: Queryable, template: string, templateDb: string, vacuum: () => Promise<void>): Promise<void> {
    const { rows } = await db.query<{ settled: string | null }>(
      'SELECT settled FROM consort.pools WHERE namespace = $1 AND template = $2',
      [this.namespace, template],
    );
    const before = await fingerprint(db, templateDb);
    if (before !== undefined && rows[0]?.settled === before) return;
    await vacuum();
    await db.query('UPDATE consort.pools SET settled = $3 WHERE namespace = $1 AND template = $2', [
      this.namespace,
      template,
      (await fingerprint(db, templateDb)) ?? null,
    ]);
  }

  /** The databases of `template`'s members. */
  async memberDatabases(db: Queryable, template: string): Promise<string[]> {
    const { rows } = await db.query<{ database: string }>(
      'SELECT database FROM consort.pool_members WHERE namespace = $1 AND template = $2 ORDER BY database',
      [this.namespace, template],
    );
    return rows.map((r) => r.database);
  }

  /** Drop every member of `template` (the pool itself stays unless `forget`). */
  async drain(db: Queryable, template: string, forget = false): Promise<number> {
    const { rows } = await db.query<{ database: string }>(
      'DELETE FROM consort.pool_members WHERE namespace = $1 AND template = $2 RETURNING database',
      [this.namespace, template],
    );
    await this.dropMembers(
      db,
      rows.map((r) => r.database),
    );
    if (forget) await this.setSize(db, template, 0);
    return rows.length;
  }

  /**
   * The templates that have a pool or members (`db stop` drains each under its template's lock, so
   * a fill under way in another process finishes first and its copies go too).
   */
  async templates(db: Queryable): Promise<string[]> {
    const { rows } = await db.query<{ template: string }>(
      `SELECT template FROM consort.pools WHERE namespace = $1
        UNION SELECT template FROM consort.pool_members WHERE namespace = $1
        ORDER BY 1`,
      [this.namespace],
    );
    return rows.map((r) => r.template);
  }

  /**
   * Repair after crashes: members left `filling` by a dead process, rows whose database is gone,
   * and pool databases no row knows (a process killed between CREATE DATABASE and the row's insert
   * cannot happen — the row comes first — but a server restored from elsewhere can hold them).
   */
  async sweep(db: Queryable): Promise<string[]> {
    const repaired: string[] = [];
    const { rows } = await db.query<{ database: string; state: string }>(
      'SELECT database, state FROM consort.pool_members WHERE namespace = $1',
      [this.namespace],
    );
    for (const r of rows) {
      const gone = !(await databaseExists(db, r.database));
      if (r.state === 'ready' && !gone) continue;
      const key = this.memberLockKey(r.database);
      const { rows: got } = await db.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok',
        [key],
      );
      if (!got[0]!.ok) continue; // a live process is filling it
      try {
        await dropDatabase(db, r.database, true);
        await dropRolesOf(db, [r.database]);
        await db.query('DELETE FROM consort.pool_members WHERE database = $1', [r.database]);
        repaired.push(r.database);
      } finally {
        await db.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
      }
    }
    const { rows: orphans } = await db.query<{ datname: string }>(
      `SELECT datname FROM pg_database
        WHERE starts_with(datname, $1)
          AND NOT EXISTS (SELECT 1 FROM consort.pool_members m WHERE m.database = datname)`,
      [this.memberPattern()],
    );
    for (const o of orphans) {
      const key = this.memberLockKey(o.datname);
      const { rows: got } = await db.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok',
        [key],
      );
      if (!got[0]!.ok) continue;
      try {
        await db.query(`DROP DATABASE IF EXISTS ${quoteIdent(o.datname)} WITH (FORCE)`);
        await dropRolesOf(db, [o.datname]);
        repaired.push(o.datname);
      } finally {
        await db.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
      }
    }
    // Roles of copies that are gone: a handout whose member kept its role's name (renameRole), once
    // that branch went; a role that still has a privilege somewhere is not dropped (and stays).
    const { rows: members } = await db.query<{ database: string }>('SELECT database FROM consort.pool_members');
    const live = new Set(members.map((m) => branchRoleName(m.database)));
    const { rows: roles } = await db.query<{ rolname: string }>(
      "SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1) AND rolname LIKE '%\\_role' ORDER BY 1",
      [this.memberPattern()],
    );
    for (const { rolname } of roles) {
      if (live.has(rolname)) continue;
      const dropped = await db.query(`DROP ROLE IF EXISTS ${quoteIdent(rolname)}`).then(
        () => true,
        () => false,
      );
      if (dropped) repaired.push(rolname);
    }
    return repaired;
  }
}
