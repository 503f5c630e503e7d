/**
 * The branch catalog: one table in a catalog database on the same server as the branches.
 * Every mutation is first recorded here with a transitional state (`creating`, `deleting`,
 * `resetting`) and finished afterwards, so a process killed half-way leaves a row that `gc`
 * (or the next operation on that name) can finish or roll back. A live process holds the
 * branch's advisory lock, which is how repair tells a crashed operation from a running one.
 */
import type { Queryable } from '../db/sql.js';
import type { BranchRecord } from '../ports/branch-provider.js';
import { RUN_CLAIMS_DDL } from './run-lock.js';

export type BranchState = 'creating' | 'ready' | 'deleting' | 'resetting';

export interface CatalogRow extends BranchRecord {
  state: BranchState;
  pendingDatabase: string | null;
  /**
   * Whether the server has the row's database. A row is trusted only with its database: one
   * dropped by hand, or a restored server, leaves a row that must count as missing (drift).
   */
  present: boolean;
}

const DDL = `
CREATE SCHEMA IF NOT EXISTS consort;
CREATE TABLE IF NOT EXISTS consort.branches (
  namespace        text        NOT NULL,
  name             text        NOT NULL,
  parent           text,
  database         text        NOT NULL UNIQUE,
  state            text        NOT NULL CHECK (state IN ('creating', 'ready', 'deleting', 'resetting')),
  pending_database text,
  git_branch       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz,
  PRIMARY KEY (namespace, name),
  FOREIGN KEY (namespace, parent) REFERENCES consort.branches (namespace, name)
);`;

export async function ensureCatalogSchema(db: Queryable): Promise<void> {
  // Serialized so two processes initialising a fresh server do not race on CREATE TABLE.
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended('consort:catalog-ddl', 0))");
  await db.query(DDL);
  await db.query(RUN_CLAIMS_DDL);
}

interface Raw {
  name: string;
  parent: string | null;
  database: string;
  state: BranchState;
  pending_database: string | null;
  git_branch: string | null;
  created_at: Date;
  expires_at: Date | null;
  present: boolean;
}

const COLUMNS =
  'name, parent, database, state, pending_database, git_branch, created_at, expires_at, ' +
  'EXISTS (SELECT 1 FROM pg_database d WHERE d.datname = database) AS present';

function toRow(r: Raw): CatalogRow {
  return {
    name: r.name,
    parent: r.parent,
    database: r.database,
    state: r.state,
    pendingDatabase: r.pending_database,
    gitBranch: r.git_branch,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    present: r.present,
  };
}

export function toRecord(row: CatalogRow): BranchRecord {
  const { state: _state, pendingDatabase: _pending, present: _present, ...record } = row;
  return record;
}

export class Catalog {
  constructor(private readonly namespace: string) {}

  async get(db: Queryable, name: string): Promise<CatalogRow | undefined> {
    const { rows } = await db.query<Raw>(`SELECT ${COLUMNS} FROM consort.branches WHERE namespace = $1 AND name = $2`, [
      this.namespace,
      name,
    ]);
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  async all(db: Queryable): Promise<CatalogRow[]> {
    const { rows } = await db.query<Raw>(
      `SELECT ${COLUMNS} FROM consort.branches WHERE namespace = $1 ORDER BY created_at, name`,
      [this.namespace],
    );
    return rows.map(toRow);
  }

  /** The branch and all its descendants, deepest first (the order they must be deleted in). */
  async subtree(db: Queryable, name: string): Promise<CatalogRow[]> {
    const { rows } = await db.query<Raw & { depth: number }>(
      `WITH RECURSIVE t AS (
         SELECT b.*, 0 AS depth FROM consort.branches b WHERE namespace = $1 AND name = $2
         UNION ALL
         SELECT c.*, t.depth + 1 FROM consort.branches c JOIN t ON c.namespace = t.namespace AND c.parent = t.name
       ) SELECT ${COLUMNS}, depth FROM t ORDER BY depth DESC, name`,
      [this.namespace, name],
    );
    return rows.map(toRow);
  }

  async insert(db: Queryable, row: Omit<CatalogRow, 'createdAt' | 'pendingDatabase' | 'present'>): Promise<void> {
    await db.query(
      `INSERT INTO consort.branches (namespace, name, parent, database, state, git_branch, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [this.namespace, row.name, row.parent, row.database, row.state, row.gitBranch, row.expiresAt],
    );
  }

  async setState(
    db: Queryable,
    name: string,
    state: BranchState,
    pendingDatabase: string | null = null,
  ): Promise<void> {
    await db.query('UPDATE consort.branches SET state = $3, pending_database = $4 WHERE namespace = $1 AND name = $2', [
      this.namespace,
      name,
      state,
      pendingDatabase,
    ]);
  }

  /**
   * The branch is ready, made now. `ttlMs`: it expires that long after now, the time it is said to
   * be made (null: never; undefined: as it was), so `expiresAt − createdAt` is the TTL asked for.
   */
  async markReady(db: Queryable, name: string, ttlMs: number | null | undefined): Promise<void> {
    await db.query(
      `UPDATE consort.branches SET state = 'ready', pending_database = NULL, created_at = now(),
         expires_at = CASE WHEN $3::boolean THEN now() + make_interval(secs => $4::double precision / 1000)
                      ELSE expires_at END
       WHERE namespace = $1 AND name = $2`,
      [this.namespace, name, ttlMs !== undefined, ttlMs ?? null],
    );
  }

  /** Children of `name` become children of `parent` (repairing drift: their databases are intact). */
  async reparent(db: Queryable, name: string, parent: string | null): Promise<void> {
    await db.query('UPDATE consort.branches SET parent = $3 WHERE namespace = $1 AND parent = $2', [
      this.namespace,
      name,
      parent,
    ]);
  }

  async setExpiry(db: Queryable, name: string, expiresAt: Date | null): Promise<boolean> {
    const { rowCount } = await db.query(
      'UPDATE consort.branches SET expires_at = $3 WHERE namespace = $1 AND name = $2',
      [this.namespace, name, expiresAt],
    );
    return (rowCount ?? 0) > 0;
  }

  async remove(db: Queryable, name: string): Promise<void> {
    await db.query('DELETE FROM consort.branches WHERE namespace = $1 AND name = $2', [this.namespace, name]);
  }

  lockKey(name: string): string {
    return `consort:branch:${this.namespace}:${name}`;
  }
}
