/**
 * The one port every lane uses to get isolated databases. Providers: `local` (embedded
 * PostgreSQL 18), `postgres` (any server, 15–18), `lakebase` (Databricks) and `neon`.
 */
export type ProviderName = 'local' | 'postgres' | 'lakebase' | 'neon';

/** How a provider makes a branch: `clone` = copy-on-write, `copy` = full copy, `native` = the service's own. */
export type BranchMode = 'clone' | 'copy' | 'native';

export interface BranchRecord {
  name: string;
  /** `null` only for the root branch `main`. */
  parent: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  /** The git branch this database branch is paired with, if any. */
  gitBranch: string | null;
  /** The physical database that holds the branch (informational). */
  database: string;
  /** Set by `create`: the branch came ready-made from a warm pool of its parent (a rename, no copy). */
  pooled?: boolean;
  /**
   * Set by `create` when the parent has a warm pool but the branch was copied instead: `empty` (no
   * ready copy: the pool is refilling, or a refill was skipped while someone was connected to the
   * parent), `stale` (its copies are of an older state of the parent; they are being replaced), or
   * `busy` (someone is connected to the parent).
   */
  poolMiss?: 'empty' | 'stale' | 'busy';
  /**
   * Set by `create` when it copied the parent on a template-based provider (`local`, `postgres`): the
   * `CREATE DATABASE` strategy that ran — `wal_log` for small parents, `file_copy` for large ones and clones.
   */
  copyStrategy?: 'file_copy' | 'wal_log';
}

export interface CreateBranchOptions {
  name: string;
  /** Defaults to `main`. */
  parent?: string;
  /** Time to live in milliseconds; `gc` removes the branch after it. */
  ttlMs?: number;
  gitBranch?: string;
  /**
   * Fork the parent as it was at this time (point-in-time branch). Only services that keep
   * history (lakebase, neon) can; the others refuse it.
   */
  at?: Date;
  /** What made the branch (`pr`, `sha`, …), stored on it where the service allows, for sweeps. */
  annotations?: Record<string, string>;
  /**
   * A parent with open connections cannot be used as a template. By default that is an error that
   * names the connected applications; `true` terminates those sessions first.
   */
  terminateConnections?: boolean;
  /**
   * Runs on the new branch (given its URL) before the branch becomes visible to anyone else; if it
   * throws, the create is rolled back. Makes "fork and initialise" (a baseline with migrations
   * and seed applied) atomic: a concurrent `ensure` of the same name waits, then reuses it.
   * It must close its connections before it resolves. `untrusted`, where the provider can make
   * one, gives a URL for the project's own code (the seed): a role confined to this database,
   * which is dropped (its objects handed back to the admin) once `prepare` ends.
   */
  prepare?: (url: string, untrusted?: () => Promise<string>) => Promise<void>;
}

export interface DeleteBranchOptions {
  recursive?: boolean;
  terminateConnections?: boolean;
  /** Told who was disconnected, one line per branch, when terminateConnections ended sessions. */
  onTerminated?: (line: string) => void;
}

export interface ResetBranchOptions {
  terminateConnections?: boolean;
  /** Told who was disconnected, one line per branch, when terminateConnections ended sessions. */
  onTerminated?: (line: string) => void;
}

export interface Capabilities {
  provider: ProviderName;
  mode: BranchMode;
  /** Why this mode was chosen, in words (e.g. "data directory on ext4: no reflinks"). */
  modeReason: string;
  serverVersion: string;
}

export interface GcResult {
  deleted: string[];
  /** Half-made work from crashed processes that was finished or rolled back. */
  repaired: string[];
  /** Expired branches kept because they still have live children. */
  kept: { name: string; reason: string }[];
}

export interface PoolStatus {
  template: string;
  /** How many ready copies the pool keeps. */
  size: number;
  /** Ready copies of the template's current state. */
  ready: number;
}

export interface PoolOptions {
  /** Reports progress while the pool fills (with `fill: 'now'`). */
  onCopy?: (made: number, wanted: number) => void;
  /**
   * `now` (default): the copies are made before `pool` resolves. `background`: `pool` resolves once
   * the pool is set up (the template settled), and the copies follow while the caller works; a
   * `create` meanwhile copies as without a pool, and the provider's `close` waits for them.
   */
  fill?: 'now' | 'background';
  /**
   * The pool is this process's, for as long as it runs (a TDD lane run's pool of its baseline): it
   * is dropped by `releasePool` from its last owner, or — when every owner died without releasing
   * it — by the next `gc`, `drainPools` or owned `pool` call on the server. A pool set up without
   * it (by hand) is never dropped that way, and an owned call leaves such a pool as it is.
   */
  owned?: boolean;
}

export type EnsureOutcome = 'created' | 'reused' | 'recreated';

export interface RunLockOptions {
  /**
   * true: the newest run takes over — a run waiting for the lock, or holding it, is told it was
   * superseded (the pull request's older runs); false: wait in turn (runs of the same commit).
   */
  supersede: boolean;
  /** Stop waiting when aborted. */
  signal?: AbortSignal;
  /** Called (once) while the lock is held, when a newer run claimed the key. */
  onSuperseded?: () => void;
}

export type RunLockResult =
  { ok: true; release: () => Promise<void> } | { ok: false; reason: 'superseded' | 'aborted' };

export interface BranchDrift {
  name: string;
  /** The catalog row names a database the server does not have (dropped by hand, a restored server). */
  problem: 'database-missing';
  database: string;
}

export interface ConfinedUriOptions {
  /**
   * Only a new key: the branch's role was handed out before and everything in its database is its
   * own (made by it, or handed to it then) — nothing made there since as the admin. Re-keying then
   * skips handing the objects over again. Where the role is gone, it is made the long way.
   */
  rekey?: boolean;
}

export interface BranchProvider {
  readonly name: ProviderName;
  capabilities(): Promise<Capabilities>;
  create(options: CreateBranchOptions): Promise<BranchRecord>;
  /** Reuse the branch if it came from the same parent; recreate it if the parent differs. */
  ensure(options: CreateBranchOptions): Promise<{ branch: BranchRecord; outcome: EnsureOutcome }>;
  get(name: string): Promise<BranchRecord | undefined>;
  list(): Promise<BranchRecord[]>;
  delete(name: string, options?: DeleteBranchOptions): Promise<string[]>;
  /** Throw away the branch's changes: it becomes a fresh copy of its parent's current state. */
  reset(name: string, options?: ResetBranchOptions): Promise<BranchRecord>;
  /** A connection string for the branch (contains credentials: never log it unmasked). */
  connectionUri(name: string): Promise<string>;
  /**
   * A connection string for untrusted code (a suite, an agent) that reaches this branch only: a
   * login role without superuser, CREATEDB or CREATEROLE. Providers that cannot make one omit it;
   * null when this server's admin cannot (neither a superuser nor CREATEROLE on PostgreSQL 15+):
   * the caller uses connectionUri and says so in its report.
   */
  confinedUri?(name: string, options?: ConfinedUriOptions): Promise<string | null>;
  /**
   * Prove that `url` reaches branch `name` and not another one (its parent); throws if not.
   * Providers where the database name alone does not identify a branch (the cloud services,
   * whose branches all hold a database of the same name) implement it; for the others the
   * caller compares `current_database()` with the record's `database`.
   */
  verifyUrl?(name: string, url: string): Promise<void>;
  gc(now?: Date): Promise<GcResult>;
  /**
   * Serialize runs of the PR lane on one key (its PR branch), held on the provider's catalog
   * server so every shell and machine that shares it takes turns. A run killed outright releases
   * it with its session. Providers without a catalog omit it (runs are then not serialized).
   */
  lockRun?(key: string, options: RunLockOptions): Promise<RunLockResult>;
  /** Catalog rows whose database is gone: `get` and `list` treat them as missing, `gc` removes them. */
  drift?(): Promise<BranchDrift[]>;
  /**
   * Warm pools (local and postgres): keep `size` ready copies of `template` so `create` and `reset`
   * from it are a rename; 0 drops the pool.
   */
  pool?(template: string, size: number, options?: PoolOptions): Promise<PoolStatus>;
  poolStatus?(template?: string): Promise<PoolStatus[]>;
  /** Give back a pool set up with `owned`: its last owner's release drops it. Returns the copies dropped. */
  releasePool?(template: string): Promise<number>;
  /** Bytes each ready branch's database takes, by branch name. Providers that cannot tell omit it. */
  sizes?(): Promise<Record<string, number>>;
  /** Drop every pooled copy (they are a cache); the pools stay configured. */
  drainPools?(): Promise<number>;
  /**
   * Hold this process's background work (pool refills, drops of databases a reset put aside) while
   * the caller is on a clock: it starts once every hold is released, or after a bound, so it never
   * starves. Returns the release (idempotent).
   */
  holdBackground?(): () => void;
  /** Release pooled connections (the server keeps running). */
  close(): Promise<void>;
}
