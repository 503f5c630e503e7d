/**
 * A BranchProvider for any PostgreSQL server: a branch is a database copied from its parent with
 * `CREATE DATABASE … TEMPLATE parent` (STRATEGY WAL_LOG for small parents, FILE_COPY for large ones;
 * FILE_COPY with `file_copy_method = clone` is a reflink clone on PostgreSQL 18, see server-ops.ts).
 * `local` and `postgres` differ only in how they reach the server.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import { assertBranchName, ROOT_BRANCH } from '../core/names.js';
import { branchExists, rootHasNoParent } from './errors.js';
import { ConsortError, isConsortError } from '../core/errors.js';
import { newClient, newPool, pgErrorCode, quoteIdent, withDatabase, withTransaction } from '../db/sql.js';
import type {
  BranchDrift,
  BranchProvider,
  BranchRecord,
  Capabilities,
  ConfinedUriOptions,
  CreateBranchOptions,
  DeleteBranchOptions,
  EnsureOutcome,
  GcResult,
  PoolOptions,
  PoolStatus,
  ProviderName,
  ResetBranchOptions,
  RunLockOptions,
  RunLockResult,
} from '../ports/branch-provider.js';
import { Catalog, ensureCatalogSchema, toRecord, type CatalogRow } from './catalog.js';
import { acquireRunLock } from './run-lock.js';
import {
  asideDatabaseName,
  asidePattern,
  assertNotReserved,
  databaseName,
  sanitizeNamespace,
  scratchDatabaseName,
} from './database-name.js';
import { dropRolesOf, ensurePoolSchema, listenForHandouts, MAX_POOL_SIZE, Pools } from './pool.js';
import {
  clearSessions,
  confineDatabase,
  copyDatabase,
  type CopyStrategy,
  databaseExists,
  dropDatabase,
  renameDatabase,
  serverVersionNum,
  sessionsStaying,
} from './server-ops.js';
import {
  branchRoleName,
  dropBranchRole,
  grantBranchSchema,
  rekeyBranchRole,
  retireBranchRole,
  rolePower,
  type RolePower,
  upsertBranchRole,
} from './branch-role.js';
import { count } from '../core/plural.js';

export interface TemplateProviderOptions {
  provider: ProviderName;
  /** Admin connection (any database that is not a branch, usually `postgres`). */
  adminUrl: string;
  namespace: string;
  /** Prefix of branch databases ('' on a server Consort owns). */
  databasePrefix: string;
  catalogDatabase: string;
  /** Adopt an existing database as `main` instead of creating one. */
  mainDatabase?: string;
  /** Decide clone vs copy once the server version is known. */
  cloneMode: (serverVersionNum: number) => Promise<{ clone: boolean; reason: string }>;
  /**
   * What another process with these same settings already established (a test worker reopening its
   * run's provider): the server is checked and the catalog exists, so `capabilities` skips that work.
   */
  known?: Capabilities;
  /**
   * Refill a warm pool in this process after a handout (default true). False where another process
   * keeps the pools filled (`watchPools`), so a short-lived process never waits for a copy on close.
   */
  refillPools?: boolean;
}

/** Enough to open the same provider again in another process (contains the admin URL: a secret). */
export type ProviderSettingsSnapshot = Omit<TemplateProviderOptions, 'cloneMode' | 'refillPools' | 'mainDatabase'> & {
  known: Capabilities;
};

type Client = pg.PoolClient;

/** The longest a background refill or drop waits for `holdBackground`'s holders. */
const HOLD_MAX_MS = 60_000;

export class TemplateBranchProvider implements BranchProvider {
  readonly name: ProviderName;
  private readonly catalog: Catalog;
  private readonly pools: Pools;
  /** Background refills of warm pools, by template; `close` waits for them. */
  private readonly refills = new Map<string, Promise<void>>();
  private readonly refillAgain = new Set<string>();
  private readonly admin: pg.Pool;
  private readonly catalogPool: pg.Pool;
  private ready: Promise<Capabilities> | undefined;
  /** This process as the owner of run pools: a session holding its owner lock (see pool.ts). */
  private owner: Promise<{ id: string; client: pg.Client }> | undefined;

  constructor(private readonly options: TemplateProviderOptions) {
    this.name = options.provider;
    this.catalog = new Catalog(options.namespace);
    // A pool's copies are dropped side by side, each on an admin connection of its own (up to the pool's 4).
    this.pools = new Pools(options.namespace, options.databasePrefix, async (_db, databases) => {
      const dropped = await Promise.allSettled(databases.map((d) => dropDatabase(this.admin, d, true)));
      const failed = dropped.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    });
    const pool = (connectionString: string) =>
      newPool({ connectionString, max: 4, application_name: 'consort', connectionTimeoutMillis: 10_000 });
    this.admin = pool(options.adminUrl);
    this.catalogPool = pool(withDatabase(options.adminUrl, options.catalogDatabase));
  }

  capabilities(): Promise<Capabilities> {
    if (this.options.known) return Promise.resolve(this.options.known);
    this.ready ??= this.initialise().catch((e) => {
      this.ready = undefined;
      throw e;
    });
    return this.ready;
  }

  private async initialise(): Promise<Capabilities> {
    const admin = await this.admin.connect().catch((e: unknown) => {
      throw cannotConnect(this.name, this.options.adminUrl, e);
    });
    try {
      const version = await serverVersionNum(admin);
      if (version < 150000) {
        throw new ConsortError(
          'unsupported-server',
          `PostgreSQL ${Math.floor(version / 10000)} is too old for database branches.`,
          {
            hint: 'Consort needs PostgreSQL 15 or later (CREATE DATABASE … STRATEGY).',
          },
        );
      }
      if (!(await databaseExists(admin, this.options.catalogDatabase))) {
        await admin.query(`CREATE DATABASE "${this.options.catalogDatabase.replace(/"/g, '""')}"`).catch((e) => {
          if (pgErrorCode(e) !== '42P04' && pgErrorCode(e) !== '23505') throw e; // created concurrently
        });
      }
      const { clone, reason } = await this.options.cloneMode(version);
      // The catalog is the admin's: no branch role may connect to it.
      await confineDatabase(admin, this.options.catalogDatabase);
      await this.withLocked(ROOT_BRANCH, async (cat) => {
        await withTransaction(cat, async () => {
          await ensureCatalogSchema(cat);
          await ensurePoolSchema(cat);
        });
        await this.ensureMain(cat, admin);
      });
      const major = Math.floor(version / 10000);
      return {
        provider: this.name,
        mode: clone ? 'clone' : 'copy',
        modeReason: reason,
        serverVersion: `${major}.${version % 100}`,
      };
    } finally {
      admin.release();
    }
  }

  private async ensureMain(cat: Client, admin: Client): Promise<void> {
    const row = await this.catalog.get(cat, ROOT_BRANCH);
    const database = this.options.mainDatabase ?? databaseName(this.options.databasePrefix, ROOT_BRANCH);
    if (row?.state === 'ready' && (await databaseExists(admin, row.database))) return;
    if (!(await databaseExists(admin, database))) {
      await admin.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
      // Every baseline forks from it; a database the user adopted as main keeps its own grants.
      await confineDatabase(admin, database);
    }
    if (row) await this.catalog.markReady(cat, ROOT_BRANCH, null);
    else
      await this.catalog.insert(cat, {
        name: ROOT_BRANCH,
        parent: null,
        database,
        state: 'ready',
        gitBranch: null,
        expiresAt: null,
      });
  }

  /**
   * Run `fn` holding the branch's advisory lock on a catalog session (released if we crash).
   * The same session also issues the CREATE/DROP DATABASE, so if this process dies mid-copy the
   * lock stays held by that backend until its statement ends: repair never races a running copy.
   */
  private async withLocked<T>(name: string, fn: (cat: Client) => Promise<T>): Promise<T> {
    const cat = await this.catalogPool.connect();
    try {
      await cat.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [this.catalog.lockKey(name)]);
      try {
        return await fn(cat);
      } finally {
        await cat.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [this.catalog.lockKey(name)]);
      }
    } finally {
      cat.release();
    }
  }

  async create(options: CreateBranchOptions): Promise<BranchRecord> {
    const caps = await this.capabilities();
    const name = assertBranchName(options.name);
    assertNotReserved(name);
    if (options.at) {
      throw new ConsortError('invalid-input', `The ${this.name} provider cannot fork a branch as of a past time.`, {
        hint: 'Point-in-time branches need a service that keeps history: use --provider lakebase or neon.',
      });
    }
    const parentName = options.parent ?? ROOT_BRANCH;
    return this.withLocked(name, async (cat) => {
      const existing = await this.catalog.get(cat, name);
      // We hold the lock, so a row in a transitional state was left by a process that died.
      if (existing && existing.state !== 'ready') await this.repairLocked(cat, existing);
      // A row whose database is gone is not a branch: forget it and make the branch anew.
      else if (existing && !existing.present) await this.repairDrift(cat, existing);
      else if (existing) throw branchExists(name, existing.parent);
      const parent = await this.requireReady(cat, parentName);
      const database = databaseName(this.options.databasePrefix, name);
      const expiresAt = options.ttlMs === undefined ? null : new Date(Date.now() + options.ttlMs);
      await this.catalog.insert(cat, {
        name,
        parent: parent.name,
        database,
        state: 'creating',
        gitBranch: options.gitBranch ?? null,
        expiresAt,
      });
      let copied = false;
      let pooled = false;
      let poolMiss: BranchRecord['poolMiss'];
      let strategy: CopyStrategy | undefined;
      let refill = false;
      try {
        // A warm pool of the parent hands out a ready copy (a rename); otherwise copy now.
        const handout = await this.pools.take(cat, parent.name, parent.database, database);
        pooled = handout.kind === 'member';
        if (handout.kind === 'miss' && handout.reason !== 'no-pool') poolMiss = handout.reason;
        this.keyOnly.delete(database);
        if (handout.kind === 'member' && handout.role === branchRoleName(database)) this.keyOnly.add(database);
        refill = handout.kind === 'member' || handout.reason === 'empty' || handout.reason === 'stale';
        if (!pooled) {
          // A handout refused as busy has given the sessions their grace already: not a second one.
          await clearSessions(
            cat,
            parent.database,
            parent.name,
            'fork',
            options.terminateConnections === true,
            undefined,
            handout.kind === 'miss' && handout.reason === 'busy' ? 0 : undefined,
          );
          strategy = await copyDatabase(cat, database, parent.database, parent.name, caps.mode === 'clone');
        }
        copied = true;
        // Branch databases are not PUBLIC: only the admin and the branch's own role connect.
        await confineDatabase(cat, database);
        if (options.prepare) await this.runPrepare(cat, database, options.prepare);
        await this.catalog.markReady(cat, name, options.ttlMs ?? null);
      } catch (e) {
        // Leave neither a database, its role (a pool copy's, renamed to the branch's) nor a catalog row behind.
        if (copied) await dropDatabase(cat, database, true).catch(() => undefined);
        if (copied) await dropBranchRole(cat, database).catch(() => undefined);
        await this.catalog.remove(cat, name).catch(() => undefined);
        throw e;
      }
      if (refill && this.options.refillPools !== false) this.refillSoon(parent.name);
      return {
        ...toRecord((await this.catalog.get(cat, name))!),
        pooled,
        ...(poolMiss ? { poolMiss } : {}),
        ...(strategy ? { copyStrategy: strategy } : {}),
      };
    });
  }

  /**
   * Keep `size` ready copies of `template` (0 drops the pool and its copies), filled now or (with
   * `fill: 'background'`) after the template is settled; `create` from the template then takes one
   * and a refill starts in the background.
   */
  async pool(template: string, size: number, options: PoolOptions = {}): Promise<PoolStatus> {
    const caps = await this.capabilities();
    if (!Number.isInteger(size) || size < 0 || size > MAX_POOL_SIZE) {
      throw new ConsortError(
        'invalid-input',
        `A pool size must be a whole number from 0 to ${MAX_POOL_SIZE} (got ${size}).`,
        {
          hint: 'Pass --size 0 to drop the pool.',
        },
      );
    }
    if (options.owned && size === 0) {
      throw new ConsortError('invalid-input', 'An owned pool needs a size of at least 1.', {
        hint: 'Give an owned pool back with releasePool.',
      });
    }
    // A run's pool: first drop the pools of runs that died (their copies of this template are kept
    // for this run to use), then join this one as a live owner.
    const owner = options.owned ? await this.liveOwnerSession() : undefined;
    if (owner) await this.reapPools(template);
    return this.withLocked(template, async (cat) => {
      const row = await this.requireReady(cat, template);
      if (size === 0) {
        await this.pools.drain(cat, template, true);
        return { template, size: 0, ready: 0 };
      }
      let claimed = false;
      if (owner)
        claimed = await this.pools.claim(cat, template, size, { id: owner.id, pid: process.pid, host: os.hostname() });
      else await this.pools.setSize(cat, template, size);
      try {
        // More copies than wanted (a smaller size): drop the surplus, oldest first.
        const [before] = await this.pools.status(cat, template);
        if (before && before.ready > before.size) {
          await this.pools.drain(cat, template);
        }
        await clearSessions(cat, row.database, template, 'fork', false);
        await this.pools.settle(cat, template, row.database, () => this.vacuumTemplate(row.database));
        if (options.fill === 'background') {
          const status = (await this.pools.status(cat, template))[0]!;
          if (status.ready < status.size) this.refillSoon(template); // waits for this lock, then copies
          return status;
        }
        await this.pools.fill(cat, template, row.database, caps.mode === 'clone', options.onCopy, this.prepareMember);
        return (await this.pools.status(cat, template))[0]!;
      } catch (e) {
        // A run that cannot have its pool does not keep one it would never release.
        if (claimed) await this.pools.release(cat, template, owner!.id).catch(() => undefined);
        throw e;
      }
    });
  }

  /**
   * This run is done with the pool it set up with `pool(…, { owned: true })`: the last owner's
   * release drops the pool and its copies (after a refill under way, which holds the template's lock).
   * Returns the copies dropped; a pool this process does not own is left alone (unless no live
   * process owns it either: then it goes, as with `gc`).
   */
  async releasePool(template: string): Promise<number> {
    if (this.owner === undefined) return 0;
    const owner = await this.owner;
    await this.capabilities();
    return this.withLocked(template, (cat) => this.pools.release(cat, template, owner.id));
  }

  /** The owner session, made anew if the one this process had was lost (its lock went with it). */
  private async liveOwnerSession(): Promise<{ id: string; client: pg.Client }> {
    const session = this.ownerSession();
    const owner = await session;
    const alive = await owner.client.query('SELECT 1').then(
      () => true,
      () => false,
    );
    if (alive) return owner;
    if (this.owner === session) this.owner = undefined;
    await owner.client.end().catch(() => undefined);
    return this.ownerSession();
  }

  /**
   * The session whose advisory lock says this process is alive, for every pool it owns: a process
   * killed outright loses it with its connection, and the next `gc`, run pool or `db stop` drops
   * the pools no live process owns.
   */
  private ownerSession(): Promise<{ id: string; client: pg.Client }> {
    const session = (this.owner ??= (async () => {
      await this.capabilities();
      const client = newClient({
        connectionString: withDatabase(this.options.adminUrl, this.options.catalogDatabase),
        application_name: 'consort pool owner',
      });
      // The next pool this process sets up gets a live owner again (not a lock nobody holds).
      client.on('end', () => {
        if (this.owner === session) this.owner = undefined;
      });
      await client.connect();
      const id = randomUUID();
      try {
        await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [this.pools.ownerLockKey(id)]);
      } catch (e) {
        await client.end().catch(() => undefined);
        throw e;
      }
      return { id, client };
    })().catch((e: unknown) => {
      if (this.owner === session) this.owner = undefined;
      throw e;
    }));
    return session;
  }

  /**
   * Drop the pools of runs that died without releasing them (every owner's lock is free), each
   * under its template's lock. `keep`: a template whose copies a new owner is about to adopt.
   * Returns the copies' databases dropped.
   */
  private async reapPools(keep?: string): Promise<string[]> {
    const cat = await this.catalogPool.connect();
    let orphaned: string[];
    try {
      orphaned = await this.pools.reapOwners(cat);
    } finally {
      cat.release();
    }
    const dropped: string[] = [];
    for (const template of orphaned) {
      if (template === keep) continue;
      await this.withLocked(template, async (locked) => {
        const before = await this.pools.memberDatabases(locked, template);
        if ((await this.pools.dropIfOwnerless(locked, template)) > 0) dropped.push(...before);
      });
    }
    return dropped;
  }

  async poolStatus(template?: string): Promise<PoolStatus[]> {
    await this.capabilities();
    const cat = await this.catalogPool.connect();
    try {
      return await this.pools.status(cat, template);
    } finally {
      cat.release();
    }
  }

  /**
   * Drop every pooled copy (the pools stay configured and refill on the next `pool` or handout),
   * and forget the pools of runs that died. Each pool is drained under its template's lock: a
   * fill another process has under way (`branch pool`, a run's refill) ends first, and what it
   * made goes too, instead of copies made after the drain staying on disk while the server is off.
   */
  async drainPools(): Promise<number> {
    await this.capabilities();
    let dropped = (await this.reapPools()).length;
    const cat = await this.catalogPool.connect();
    let templates: string[];
    try {
      templates = await this.pools.templates(cat);
    } finally {
      cat.release();
    }
    for (const template of templates)
      dropped += await this.withLocked(template, (locked) => this.pools.drain(locked, template));
    return dropped;
  }

  /** VACUUM (ANALYZE) a pool's template, on a connection closed before the copies start. */
  private async vacuumTemplate(database: string): Promise<void> {
    const client = newClient({
      connectionString: withDatabase(this.options.adminUrl, database),
      application_name: 'consort',
    });
    await client.connect();
    try {
      await client.query('VACUUM (ANALYZE)');
    } finally {
      await client.end(); // resolves once the server closed the session, after it flushed its statistics
    }
  }

  /** Resolves once background refills have finished (tests and benchmarks wait on it; `close` does too). */
  async settled(): Promise<void> {
    while (this.refills.size > 0 || this.asideDrops.size > 0)
      await Promise.all([...this.refills.values(), ...this.asideDrops]);
  }

  /**
   * Another namespace on the same server (its own empty main, branches, pools and roles), for work
   * that must not meet the project's branches: `consort demo` in a project whose main holds its own
   * migrations. `delete('main', { recursive: true })` removes it whole.
   */
  inNamespace(namespace: string): TemplateBranchProvider {
    const ns = sanitizeNamespace(namespace);
    const { mainDatabase: _main, known: _known, ...rest } = this.options;
    return new TemplateBranchProvider({
      ...rest,
      namespace: ns,
      databasePrefix: `${this.options.databasePrefix}${ns}_`,
    });
  }

  /** The settings another process needs to open this provider again (see `known`). */
  async snapshot(): Promise<ProviderSettingsSnapshot> {
    const known = await this.capabilities();
    const { provider, adminUrl, namespace, databasePrefix, catalogDatabase } = this.options;
    return { provider, adminUrl, namespace, databasePrefix, catalogDatabase, known };
  }

  /**
   * Keep this namespace's pools filled while other processes take from them: every handout is
   * announced (NOTIFY) and refilled here, in the background. Returns a function that stops watching
   * and waits for refills under way.
   */
  async watchPools(): Promise<() => Promise<void>> {
    await this.capabilities();
    const stop = await listenForHandouts(
      withDatabase(this.options.adminUrl, this.options.catalogDatabase),
      this.options.namespace,
      (template) => this.refillSoon(template),
    );
    return async () => {
      await stop();
      await this.settled();
    };
  }

  /** Refill the template's pool after a handout, in the background; a busy template is skipped. */
  private refillSoon(template: string): void {
    if (this.refills.has(template)) {
      this.refillAgain.add(template); // a handout during a refill: go round once more afterwards
      return;
    }
    const run = (async () => {
      const caps = await this.capabilities();
      await this.whenUnheld();
      await this.withLocked(template, async (cat) => {
        const row = await this.catalog.get(cat, template);
        if (row?.state !== 'ready') return;
        if ((await sessionsStaying(cat, row.database)).length > 0) return; // busy: the next handout copies instead
        await this.pools.fill(cat, template, row.database, caps.mode === 'clone', undefined, this.prepareMember);
      });
    })()
      .catch(() => undefined) // a refill is an optimisation: the next create copies instead
      .finally(() => {
        this.refills.delete(template);
        if (this.refillAgain.delete(template)) this.refillSoon(template);
      });
    this.refills.set(template, run);
  }

  async ensure(options: CreateBranchOptions): Promise<{ branch: BranchRecord; outcome: EnsureOutcome }> {
    const parent = options.parent ?? ROOT_BRANCH;
    const current = await this.get(options.name);
    if (current && current.parent === parent) return { branch: current, outcome: 'reused' };
    if (current) {
      await this.delete(options.name, { terminateConnections: options.terminateConnections ?? false });
    }
    try {
      const branch = await this.create(options);
      return { branch, outcome: current ? 'recreated' : 'created' };
    } catch (e) {
      const raced = isConsortError(e, 'branch-exists') ? await this.get(options.name) : undefined;
      if (raced && raced.parent === parent) return { branch: raced, outcome: 'reused' };
      throw e;
    }
  }

  async get(name: string): Promise<BranchRecord | undefined> {
    await this.capabilities();
    const cat = await this.catalogPool.connect();
    try {
      const row = await this.catalog.get(cat, name);
      return row?.state === 'ready' && row.present ? toRecord(row) : undefined;
    } finally {
      cat.release();
    }
  }

  async sizes(): Promise<Record<string, number>> {
    const branches = await this.list();
    const r = await this.admin.query<{ datname: string; bytes: string }>(
      'SELECT datname, pg_database_size(datname) AS bytes FROM pg_database WHERE datname = ANY($1::text[])',
      [branches.map((b) => b.database)],
    );
    const bytes = new Map(r.rows.map((row) => [row.datname, Number(row.bytes)]));
    return Object.fromEntries(
      branches.flatMap((b) => (bytes.has(b.database) ? [[b.name, bytes.get(b.database)!]] : [])),
    );
  }

  async list(): Promise<BranchRecord[]> {
    await this.capabilities();
    const cat = await this.catalogPool.connect();
    try {
      return (await this.catalog.all(cat)).filter((r) => r.state === 'ready' && r.present).map(toRecord);
    } finally {
      cat.release();
    }
  }

  /** Catalog rows whose database the server does not have (`branch list` shows them, `gc` repairs them). */
  async drift(): Promise<BranchDrift[]> {
    await this.capabilities();
    const cat = await this.catalogPool.connect();
    try {
      return (await this.catalog.all(cat))
        .filter((r) => r.state === 'ready' && !r.present)
        .map((r) => ({ name: r.name, problem: 'database-missing' as const, database: r.database }));
    } finally {
      cat.release();
    }
  }

  /** One run of the PR lane per key at a time, on the catalog server (see run-lock.ts). */
  async lockRun(key: string, options: RunLockOptions): Promise<RunLockResult> {
    await this.capabilities();
    return acquireRunLock(
      withDatabase(this.options.adminUrl, this.options.catalogDatabase),
      this.options.namespace,
      key,
      options,
    );
  }

  async delete(name: string, options: DeleteBranchOptions = {}): Promise<string[]> {
    await this.capabilities();
    if (name === ROOT_BRANCH) {
      if (options.recursive) return this.removeNamespace(options.terminateConnections === true);
      throw new ConsortError(
        'protected-branch',
        `The root branch "main" cannot be deleted on its own: namespace "${this.options.namespace}" is built on it.`,
        {
          hint: 'Reset a branch with `consort branch reset <name>`; `consort branch delete main --recursive` removes the whole namespace (every branch, and main itself).',
        },
      );
    }
    return this.withLocked(name, async (cat) => {
      const subtree = await this.catalog.subtree(cat, name);
      if (subtree.length === 0) throw notFound(name);
      const children = subtree.filter((r) => r.name !== name);
      if (children.length > 0 && !options.recursive) {
        throw new ConsortError(
          'branch-has-children',
          `Branch "${name}" has ${count(children.length, 'child branch', 'child branches')}: ${children
            .map((c) => c.name)
            .sort()
            .join(', ')}.`,
          {
            hint: `Delete them first, or pass --recursive to delete "${name}" and everything forked from it.`,
          },
        );
      }
      const deleted: string[] = [];
      for (const row of subtree) {
        await this.dropRow(cat, row, options.terminateConnections === true, options.onTerminated);
        deleted.push(row.name);
      }
      return deleted;
    });
  }

  /**
   * The whole namespace: every branch (leaves first), its pooled copies, roles and catalog rows,
   * and main with them. main's database is dropped when Consort created it; a database adopted
   * as main (`mainDatabase`) is the user's and is only forgotten. A later call starts afresh.
   */
  private async removeNamespace(terminate: boolean): Promise<string[]> {
    const deleted = await this.withLocked(ROOT_BRANCH, async (cat) => {
      await this.sweepAside();
      let rows = await this.catalog.all(cat);
      const done: string[] = [];
      while (rows.length > 0) {
        const leaves = rows.filter((r) => !rows.some((o) => o.parent === r.name && o.name !== r.name));
        for (const row of leaves.length > 0 ? leaves : rows) {
          if (row.name === ROOT_BRANCH && this.options.mainDatabase !== undefined) {
            await clearSessions(cat, row.database, row.name, 'drop', terminate);
            await this.pools.drain(cat, row.name, true);
            await this.catalog.remove(cat, row.name);
          } else {
            await this.dropRow(cat, row, terminate);
          }
          done.push(row.name);
        }
        rows = await this.catalog.all(cat);
      }
      return done;
    });
    this.ready = undefined;
    return deleted;
  }

  private async dropRow(
    cat: Client,
    row: CatalogRow,
    terminate: boolean,
    onTerminated?: (line: string) => void,
  ): Promise<void> {
    await clearSessions(cat, row.database, row.name, 'drop', terminate, onTerminated);
    await this.pools.drain(cat, row.name, true); // its pooled copies go with it
    await this.catalog.setState(cat, row.name, 'deleting');
    await dropDatabase(cat, row.database, terminate);
    this.keyOnly.delete(row.database);
    // An old database of the branch renamed aside by `reset` may still hold objects of its role.
    await this.sweepAside();
    await dropBranchRole(cat, row.database).catch(() => undefined);
    await this.catalog.remove(cat, row.name);
  }

  /** Set when `gc` removes the branch (a lease given back: expired now, dropped by the next sweep). */
  async expire(name: string, at: Date = new Date()): Promise<void> {
    await this.capabilities();
    const cat = await this.catalogPool.connect();
    try {
      if (!(await this.catalog.setExpiry(cat, name, at))) throw notFound(name);
    } finally {
      cat.release();
    }
  }

  async reset(name: string, options: ResetBranchOptions = {}): Promise<BranchRecord> {
    const caps = await this.capabilities();
    if (name === ROOT_BRANCH)
      throw rootHasNoParent(
        `To start it afresh, \`consort branch delete ${ROOT_BRANCH} --recursive\` removes every branch, and the next command makes ${ROOT_BRANCH} anew.`,
      );
    let refill: string | undefined;
    let old: string | undefined;
    const record = await this.withLocked(name, async (cat) => {
      const row = await this.catalog.get(cat, name);
      if (!row || row.state === 'creating' || row.state === 'deleting' || !row.present) throw notFound(name);
      if (row.state === 'resetting') await this.repairLocked(cat, row);
      const parent = await this.requireReady(cat, row.parent!);
      const scratch = scratchDatabaseName(this.options.databasePrefix, randomBytes(6).toString('hex'));
      const terminate = options.terminateConnections === true;
      await clearSessions(cat, row.database, name, 'reset', terminate, options.onTerminated);
      await clearSessions(cat, parent.database, parent.name, 'fork', terminate, options.onTerminated);
      // Copy first (or take a ready copy from the parent's warm pool): if this fails the branch is untouched.
      // A copy's role keeps its name for now: it takes the branch's role's name once the databases are swapped.
      const handout = await this.pools.take(cat, parent.name, parent.database, scratch, { roleAs: null });
      if (handout.kind !== 'member')
        await copyDatabase(cat, scratch, parent.database, parent.name, caps.mode === 'clone');
      if (handout.kind === 'member' || handout.reason === 'empty' || handout.reason === 'stale') refill = parent.name;
      // A new database is PUBLIC again: confine it before anyone can know its name.
      await confineDatabase(cat, scratch);
      await this.catalog.setState(cat, name, 'resetting', scratch);
      // The old database is renamed aside (instant) and dropped after the lock is released: a DROP
      // DATABASE waits for the server to unlink (and on PostgreSQL 15–17 to checkpoint), which is not
      // the caller's to wait for. A process killed before the drop leaves it for `gc` (sweepAside).
      const aside = asideDatabaseName(this.options.databasePrefix, randomBytes(6).toString('hex'));
      const renamed = await renameDatabase(cat, row.database, aside).then(
        () => true,
        () => false, // a session came back since it was cleared: drop it here, as before
      );
      if (!renamed) await dropDatabase(cat, row.database, terminate);
      else old = aside;
      await renameDatabase(cat, scratch, row.database);
      this.keyOnly.delete(row.database);
      if (
        handout.kind === 'member' &&
        handout.role !== null &&
        (await this.swapRoles(cat, row.database, handout.role, old))
      )
        this.keyOnly.add(row.database);
      await this.catalog.markReady(cat, name, undefined);
      return toRecord((await this.catalog.get(cat, name))!);
    });
    if (old !== undefined) this.dropAside(old);
    if (refill !== undefined && this.options.refillPools !== false) this.refillSoon(refill);
    return record;
  }

  /**
   * After a reset took a pool copy that came with its role: that role becomes the branch's (its
   * name), and the branch's old role — owner of the old database's objects — goes aside with that
   * database (NOLOGIN, without a password, named after it, dropped after it) or, when the old database
   * is already gone, now. False when that cannot be done: the copy's role then keeps its own name (it
   * has no login; the next sweep drops it once the branch is gone) and the first `confinedUri` makes
   * the branch's role the long way.
   */
  private async swapRoles(
    cat: Client,
    database: string,
    copyRole: string,
    aside: string | undefined,
  ): Promise<boolean> {
    const role = branchRoleName(database);
    try {
      await withTransaction(cat, async () => {
        const { rows } = await cat.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
        if (rows.length > 0) {
          if (aside === undefined) await cat.query(`DROP ROLE ${quoteIdent(role)}`);
          else {
            await cat.query(`ALTER ROLE ${quoteIdent(role)} NOLOGIN PASSWORD NULL`);
            await cat.query(`ALTER ROLE ${quoteIdent(role)} RENAME TO ${quoteIdent(branchRoleName(aside))}`);
          }
        }
        await cat.query(`ALTER ROLE ${quoteIdent(copyRole)} RENAME TO ${quoteIdent(role)}`);
      });
      return true;
    } catch {
      return false;
    }
  }

  /** Drops of databases renamed aside by `reset`, under way in the background; `settled` waits for them. */
  private readonly asideDrops = new Set<Promise<void>>();

  private holds = 0;
  private readonly unheld = new Set<() => void>();

  /**
   * While held, background refills and drops wait (at most HOLD_MAX_MS each): a check's own work
   * then does not share two CPUs and the disk with copies it does not wait for.
   */
  holdBackground(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.holds > 0) return;
      for (const go of [...this.unheld]) go();
    };
  }

  /** Resolves when no hold is left (or after HOLD_MAX_MS). */
  private whenUnheld(): Promise<void> {
    if (this.holds === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const go = () => {
        clearTimeout(timer);
        this.unheld.delete(go);
        resolve();
      };
      const timer = setTimeout(go, HOLD_MAX_MS);
      this.unheld.add(go);
    });
  }

  private dropAside(database: string): void {
    const drop = (async () => {
      await this.whenUnheld();
      const db = await this.admin.connect();
      try {
        await dropDatabase(db, database, true);
        await dropRolesOf(db, [database]); // the branch's old role, when a reset gave the branch a copy's
      } finally {
        db.release();
      }
    })()
      .catch(() => undefined) // left for the next gc (sweepAside)
      .finally(() => this.asideDrops.delete(drop));
    this.asideDrops.add(drop);
  }

  /**
   * Drop the databases `reset` renamed aside and no drop of this process is taking care of (a
   * process that died between the rename and the drop). Returns them.
   */
  private async sweepAside(): Promise<string[]> {
    await Promise.all(this.asideDrops);
    const { rows } = await this.admin.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY 1',
      [asidePattern(this.options.databasePrefix)],
    );
    const dropped: string[] = [];
    for (const { datname } of rows) {
      await dropDatabase(this.admin, datname, true);
      await dropRolesOf(this.admin, [datname]);
      dropped.push(datname);
    }
    return dropped;
  }

  /**
   * A connection string for untrusted code (a suite, an agent): the branch's own login role,
   * which reaches this branch database only (src/branches/branch-role.ts). Re-keyed on every call.
   */
  async confinedUri(name: string, options: ConfinedUriOptions = {}): Promise<string | null> {
    const branch = await this.get(name);
    if (!branch) throw notFound(name);
    const power = await this.rolePower();
    // A pool copy's role owns the copy's objects already: its first key is all it lacks.
    const keyOnly = this.keyOnly.delete(branch.database) || options.rekey === true;
    return power ? this.roleUrl(branch.database, power, keyOnly) : null;
  }

  /**
   * Branch databases handed out by a pool with their role (renamed to the branch's, owner of what
   * is in them, no key yet), until their first `confinedUri`.
   */
  private readonly keyOnly = new Set<string>();

  /**
   * Makes a pool copy's role as the copy is filled (pool.ts), where this server's admin is a
   * superuser. A CREATEROLE admin holds the roles it makes without their privileges (branch-role.ts),
   * so a copy whose objects were its role's would be out of its own reach: its copies get their
   * role at the first `confinedUri`, as before.
   */
  private readonly prepareMember = async (database: string): Promise<boolean> => {
    const power = await this.rolePower();
    if (!power?.superuser) return false;
    const role = await upsertBranchRole(this.admin, database, null, { power });
    await this.inside(database, (db) => grantBranchSchema(db, role, power));
    return true;
  };

  private power: Promise<RolePower | null> | undefined;

  /**
   * Making a role and handing it a branch's objects takes a superuser, or CREATEROLE on
   * PostgreSQL 15+ (the admin then grants itself membership in the role: branch-role.ts); with a
   * CREATEDB-only admin untrusted code gets the admin's URL, as docs/security.md says.
   */
  private rolePower(): Promise<RolePower | null> {
    this.power ??= (async () => {
      const db = await this.admin.connect();
      try {
        return await rolePower(db);
      } finally {
        db.release();
      }
    })();
    return this.power;
  }

  /**
   * (Re-)key the database's own role, make it the owner of what is in it, and give its URL;
   * `keyOnly`: it owns what is in it already (a new key is all it needs), unless it is not there.
   */
  private async roleUrl(database: string, power: RolePower, keyOnly = false): Promise<string> {
    const password = randomBytes(18).toString('base64url');
    const cat = await this.catalogPool.connect();
    let role: string;
    let rekeyed: string | null = null;
    try {
      if (keyOnly) rekeyed = await rekeyBranchRole(cat, database, password, { power });
      role = rekeyed ?? (await upsertBranchRole(cat, database, password, { power }));
    } finally {
      cat.release();
    }
    if (rekeyed === null) await this.inside(database, (db) => grantBranchSchema(db, role, power));
    const url = new URL(withDatabase(this.options.adminUrl, database));
    url.username = encodeURIComponent(role);
    url.password = encodeURIComponent(password);
    return url.toString();
  }

  private async inside<T>(database: string, fn: (db: pg.Client) => Promise<T>): Promise<T> {
    const db = newClient({ connectionString: withDatabase(this.options.adminUrl, database) });
    await db.connect();
    try {
      return await fn(db);
    } finally {
      await db.end();
    }
  }

  /**
   * `prepare` gets the admin URL for Consort's own work (migrations already on the base) and, on
   * request, a confined one for the project's code (the seed); that role is retired afterwards,
   * so the database (a baseline every fork inherits) keeps no role a seed could have passed on.
   */
  private async runPrepare(
    cat: Client,
    database: string,
    prepare: NonNullable<CreateBranchOptions['prepare']>,
  ): Promise<void> {
    let confined: RolePower | null = null;
    try {
      const admin = withDatabase(this.options.adminUrl, database);
      await prepare(admin, async () => {
        const power = await this.rolePower();
        if (!power) return admin;
        confined = power;
        return this.roleUrl(database, power);
      });
    } finally {
      const power = confined as RolePower | null;
      if (power) await this.inside(database, (db) => retireBranchRole(cat, db, database, power));
    }
  }

  async connectionUri(name: string): Promise<string> {
    const branch = await this.get(name);
    if (!branch) throw notFound(name);
    return withDatabase(this.options.adminUrl, branch.database);
  }

  async gc(now: Date = new Date()): Promise<GcResult> {
    await this.capabilities();
    const result: GcResult = { deleted: [], repaired: [], kept: [] };
    const cat = await this.catalogPool.connect();
    let rows: CatalogRow[];
    try {
      rows = await this.catalog.all(cat);
      for (const row of rows.filter((r) => r.state !== 'ready')) {
        const key = this.catalog.lockKey(row.name);
        const { rows: got } = await cat.query('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [key]);
        if (!got[0].ok) continue; // a live process is working on it
        try {
          await this.repairLocked(cat, row);
          result.repaired.push(row.name);
        } finally {
          await cat.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
        }
      }
      // Rows whose database is gone, deepest first (a child's repair re-parents nothing of its own).
      const drifted = (await this.catalog.all(cat)).filter(
        (r) => r.state === 'ready' && !r.present && r.parent !== null,
      );
      for (const row of drifted.reverse()) {
        await this.withLocked(row.name, async (locked) => {
          const again = await this.catalog.get(locked, row.name);
          if (again?.state === 'ready' && !again.present) {
            await this.repairDrift(locked, again);
            result.repaired.push(row.name);
          }
        });
      }
      result.repaired.push(...(await this.pools.sweep(cat)));
      result.repaired.push(...(await this.sweepAside()));
      result.repaired.push(...(await this.reapPools()));
      for (const pool of await this.pools.status(cat)) {
        const template = await this.catalog.get(cat, pool.template);
        if (template?.state === 'ready') await this.pools.dropStale(cat, pool.template, template.database);
      }
      rows = (await this.catalog.all(cat)).filter((r) => r.state === 'ready');
    } finally {
      cat.release();
    }
    const expired = new Set(rows.filter((r) => r.expiresAt && r.expiresAt <= now).map((r) => r.name));
    const childrenOf = (name: string) => rows.filter((r) => r.parent === name).map((r) => r.name);
    const allExpired = (name: string): boolean => expired.has(name) && childrenOf(name).every(allExpired);
    for (const name of expired) {
      if (result.deleted.includes(name)) continue;
      if (!allExpired(name)) {
        result.kept.push({ name, reason: 'it still has children that have not expired' });
        continue;
      }
      const parentRow = rows.find((r) => r.name === name);
      if (parentRow?.parent && expired.has(parentRow.parent) && allExpired(parentRow.parent)) continue; // deleted with its parent
      try {
        result.deleted.push(...(await this.delete(name, { recursive: true })));
      } catch (e) {
        result.kept.push({ name, reason: e instanceof Error ? e.message : String(e) });
      }
    }
    return result;
  }

  /** Finish or roll back an operation a dead process left half-done (caller holds the lock). */
  private async repairLocked(cat: Client, row: CatalogRow): Promise<void> {
    if (row.state === 'creating' || row.state === 'deleting') {
      await dropDatabase(cat, row.database, true);
      // The branch may have had its role already: a seed's login role (runPrepare), a pool copy's
      // renamed to the branch's, or one a delete had not dropped yet. It is server-wide: it outlives
      // the database unless dropped here.
      await dropBranchRole(cat, row.database).catch(() => undefined);
      await this.catalog.remove(cat, row.name);
    } else if (row.state === 'resetting') {
      const pending = row.pendingDatabase;
      if (pending && (await databaseExists(cat, pending))) {
        await dropDatabase(cat, row.database, true);
        await renameDatabase(cat, pending, row.database);
      }
      await this.catalog.markReady(cat, row.name, undefined);
    }
  }

  /**
   * Forget a branch whose database is gone (caller holds its lock). Its children keep their
   * databases and become children of its parent, so nothing that still exists is lost; a lane that
   * needs the branch makes it anew.
   */
  private async repairDrift(cat: Client, row: CatalogRow): Promise<void> {
    await this.pools.drain(cat, row.name, true);
    await this.catalog.reparent(cat, row.name, row.parent);
    await dropBranchRole(cat, row.database).catch(() => undefined);
    await this.catalog.remove(cat, row.name);
  }

  private async requireReady(cat: Client, name: string): Promise<CatalogRow> {
    const row = await this.catalog.get(cat, name);
    if (!row || row.state !== 'ready' || !row.present) throw notFound(name);
    return row;
  }

  async close(): Promise<void> {
    await this.settled();
    // Pools this process still owns are released with the lock: the next sweep drops them.
    const owner = await this.owner?.catch(() => undefined);
    this.owner = undefined;
    await Promise.all([this.admin.end(), this.catalogPool.end(), owner?.client.end().catch(() => undefined)]);
  }
}

function notFound(name: string): ConsortError {
  return new ConsortError('branch-not-found', `Branch "${name}" does not exist.`, {
    hint: 'List branches with `consort branch list`.',
  });
}

/**
 * The server did not let us in (refused, unknown host, timed out, wrong password, no such role):
 * say where we tried and what to fix, instead of a bare driver error. The URL's password is not
 * part of the message; the CLI redacts the whole URL from any text anyway.
 */
function cannotConnect(provider: ProviderName, adminUrl: string, e: unknown): ConsortError {
  const reason = e instanceof Error ? e.message : String(e);
  const where = serverAddress(adminUrl);
  const code = pgErrorCode(e);
  const auth = code === '28P01' || code === '28000';
  const hint =
    provider === 'postgres'
      ? auth
        ? 'Fix the user or password in CONSORT_POSTGRES_URL (a role that may CREATEDB).'
        : 'Start the server, or point CONSORT_POSTGRES_URL at one that runs (postgresql://user:****@host:5432/postgres).'
      : 'See `consort db status`; `consort db stop` and then the same command starts it again.';
  return new ConsortError(
    auth ? 'auth' : 'server-unavailable',
    `Cannot connect to PostgreSQL${where} (${provider} provider): ${reason}.`,
    {
      hint,
      cause: e,
    },
  );
}

/** ` at host:port` of a connection URL, or nothing when the URL names no host (a Unix socket). */
function serverAddress(url: string): string {
  try {
    const { hostname, port } = new URL(url);
    return hostname ? ` at ${hostname}:${port || '5432'}` : '';
  } catch {
    return '';
  }
}
