/**
 * Database branches for the TDD lane. A baseline (the parent with the migrations the feature
 * started from, and the seed) is built once and reused, keyed by content as in the check lane;
 * every turn and every proof then gets a fresh fork of it with the workspace's current
 * migrations applied, and the fork is deleted afterwards.
 */
import { accessSync } from 'node:fs';
import { access, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { migrationEnv } from '../../core/child-env.js';
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { newClient } from '../../db/sql.js';
import type { ConsortConfig } from '../../config/schema.js';
import type { SchemaSummary } from '../../conductor/context-pack.js';
import { ConsortError } from '../../core/errors.js';
import type { MigrationEngine } from '../../migrations/engine.js';
import { dotenvHash } from '../../migrations/dotenv.js';
import { migrationSetFromEntries, readMigrationSet, type MigrationFile } from '../../migrations/files.js';
import { migrationsPackage, workspacePackages } from '../../migrations/project-packages.js';
import { bookkeepingTables, migrationPlacement, type MigrationPlacement } from '../../migrations/placement.js';
import { describeUsed, runEngine } from '../../migrations/run-engine.js';
import type { ProcessRunner } from '../../ports/process.js';
import type { BranchProvider } from '../../ports/branch-provider.js';
import type { GitRepo } from '../../ports/git.js';
import type { ApplyResult, MigrationRunner } from '../../ports/migration-runner.js';
import type { SchemaReader } from '../../ports/schema-reader.js';
import type { Workspace } from '../../ports/workspace.js';
import { qualifiedName } from '../../schema/snapshot.js';
import { ensureBaseline, type LimitSource } from '../check/baseline.js';
import { applyBounded } from '../check/time-limit.js';
import { createWorkdir } from '../check/workdir.js';
import { importedFiles, treeReader } from '../../migrations/imported-code.js';

const BRANCH_TTL_MS = 3_600_000;

export interface BranchKit {
  provider: BranchProvider;
  config: ConsortConfig;
  /** The main workspace (experiments' worktrees are passed where they are used). */
  ws: Workspace;
  /** Reads the base commit's migrations. */
  git: GitRepo;
  env: NodeJS.ProcessEnv;
  /** Starts the baseline's seed command. */
  processes: ProcessRunner;
  /**
   * Applies the migrations (the baseline's, and each branch's) with the node-pg-migrate the project
   * deploys with, resolved once for the run (src/migrations/run-engine.ts), as the check lane does.
   */
  migrations: Pick<MigrationRunner, 'apply' | 'resolveEngine'> & Partial<Pick<MigrationRunner, 'open'>>;
  /**
   * migrations.timeout on building the baseline (base's migrations, then the seed, each under it)
   * and on every request of migrations applied to a sandbox or a proof's branch, from configuration
   * no agent controls: the run's (its file is locked), or on a pull request the base branch's. Past
   * it the baseline is rolled back and the run fails naming the migration, the limit and the key; a
   * branch's request fails so (time-limit.ts), and the branch is forked afresh before it is used again.
   * Default: the run's configuration.
   */
  migrationsLimit?: { timeout: string } & LimitSource;
  /**
   * The run's cancel: it ends the baseline's build (its migrations' requests and child, the seed's
   * process group), rolled back, and a branch's migrations (the branch is forked afresh before it
   * is used again); the call that waited for them throws.
   */
  signal?: AbortSignal;
  /** The run's pristine node_modules (clean-tree.ts): the project's engine is loaded from it, out of the agents' reach. */
  modules?: string;
  /** Told which node-pg-migrate applies the run's migrations, once resolved. */
  log?: (line: string) => void;
  /** Reads a branch's schema for the context pack. */
  schemas: SchemaReader;
  /** The commit the feature started from. */
  baseCommit: string;
  time?: <T>(label: string, fn: () => Promise<T>) => Promise<T>;
}

export interface FreshBranch {
  url: string;
  migrations: ApplyResult;
}

type Shas = Map<string, string>;

/** A branch forked (and migrated) ahead of use; `shas` are the migrations it holds, null when unknown. */
interface Prepared {
  ok: boolean;
  shas: Shas | null;
  /** Why the branch was not migrated ahead (a line for the proof's migration log). */
  note?: string;
}

const NOTHING_TO_APPLY: ApplyResult = { ok: true, applied: [], log: [] };

/** Every migration the branch holds is still the same file, so only additions can be pending. */
function holds(branch: Shas, current: Shas): boolean {
  return [...branch].every(([name, sha]) => current.get(name) === sha);
}

/**
 * Each migration's hash of its exact text: a branch is kept only where every migration it holds is
 * byte for byte the file the proof's tree has. Not `sha256` (CRLF folded to LF, the check's rule for a
 * checkout's line ends): node-pg-migrate sends a SQL migration's text as it is, and a line break in a
 * string literal or a function's body is part of the value, so a migration read ahead with LF ends
 * and committed with CRLF ones would have kept a branch the committed file does not make.
 */
const shasOf = (files: readonly MigrationFile[]): Shas =>
  new Map(files.map((m) => [m.name, createHash('sha256').update(m.content).digest('hex')]));

function same(a: Shas, b: Shas): boolean {
  return a.size === b.size && holds(a, b);
}

/** A stamp of a path that is gone, or is not the real folder or file written there. */
const UNFIT = 'unfit';

/**
 * Each folder from `copy` down to `dir` and each file written there: inode and change time (and a
 * file's size). Adding, removing or renaming an entry changes its folder's change time, writing a
 * file (or putting its bytes back) its own, and no process can set a change time back.
 */
async function copyStamps(copy: string, dir: string, files: readonly MigrationFile[]): Promise<string[]> {
  const folders = [copy];
  for (const part of path.relative(copy, dir).split(path.sep).filter(Boolean))
    folders.push(path.join(folders.at(-1)!, part));
  const entries = [
    ...folders.map((p) => ({ p, folder: true })),
    ...files.map((f) => ({ p: path.join(dir, path.posix.basename(f.file)), folder: false })),
  ];
  return Promise.all(
    entries.map(async ({ p, folder }) => {
      const st = await lstat(p, { bigint: true }).catch(() => null);
      // A link in place of a folder or file would stamp the link, not what the runner reads through it.
      if (st === null || (folder ? !st.isDirectory() : !st.isFile())) return `${p} ${UNFIT}`;
      return `${p} ${st.ino}:${st.ctimeNs}:${st.size}:${st.mode}`;
    }),
  );
}

/** The copy holds exactly `files`, byte for byte, and nothing in it changed since `written` was taken. */
async function copyIntact(
  copy: string,
  dir: string,
  files: readonly MigrationFile[],
  written: readonly string[],
): Promise<boolean> {
  const names = new Set(files.map((f) => path.posix.basename(f.file)));
  const listed = await readdir(dir).catch(() => null);
  if (listed === null || listed.length !== names.size || listed.some((n) => !names.has(n))) return false;
  for (const f of files) {
    const text = await readFile(path.join(dir, path.posix.basename(f.file)), 'utf8').catch(() => null);
    if (text !== f.content) return false;
  }
  const now = await copyStamps(copy, dir, files);
  return now.length === written.length && now.every((s, i) => s === written[i] && !s.endsWith(UNFIT));
}

/**
 * Branches cost most of the conductor's time (a fork is a file copy outside clone mode), so the
 * kit keeps them off the critical path where correctness allows. The branch a proof will need is
 * forked from the baseline and migrated while the turn before it runs; at proof time it is used
 * only if every migration it holds is still the same file (else it is forked again), and only
 * additions are applied. A cycle's sandbox is reused by the cycle's turns under the same rule.
 * Deletions run in the background; `settle()` waits for them at the end of the run.
 *
 * Where the provider keeps warm pools (local, postgres), the baseline gets one of `build.branchPool`
 * ready copies for the run, filled in the background: a fork is then a rename instead of a copy,
 * whether it was started ahead or in the foreground (a migration changed under a prepared branch).
 * `settle()` drops the pool, so the run leaves only the baseline behind, as without one. The pool is
 * owned by this process (a session lock on the catalog server): a run killed outright leaves its
 * copies only until the next run's pool, `branch gc` or `db stop` finds the owner gone. Two runs on
 * one baseline share its pool; the last one to finish drops it.
 */
export function createBranches(kit: BranchKit) {
  const time = kit.time ?? (<T>(_label: string, fn: () => Promise<T>) => fn());
  let baseline: Promise<string> | undefined;
  /** The migrations the baseline holds (the base commit's), once it is built. */
  let baseShas: Shas | null = null;
  /** The baseline whose pool this run set up (settle drops it). */
  let pooled: string | undefined;
  const poolSize = kit.provider.pool ? kit.config.build.branchPool : 0;
  /** Forks made so far, and how many of them were handed out by the pool. */
  const forks = { made: 0, pooled: 0 };
  const warm = new Map<string, Promise<Prepared>>();
  /** Sandboxes this process holds, with the migrations they hold (null: unknown, after a failed migration). */
  const sandboxes = new Map<string, Shas | null>();
  /** Invalidated sandboxes being forked afresh in the background (the next turn takes the fork). */
  const refreshing = new Map<string, Promise<Prepared>>();
  const drops: Promise<void>[] = [];
  /**
   * Proof branches live under names that say nothing (`f001-<10 hex>`), drawn when first used: a
   * suite reads its database's name (DATABASE_URL, current_database()), and one that said `green`,
   * or which of GREEN's proof and RED's tree proven beside it a run is, would let a test pass at
   * GREEN whatever the code. The lane's records and logs keep the lane's own names.
   */
  const proofNames = new Set<string>();
  const aliases = new Map<string, string>();
  const real = (name: string): string => {
    if (!proofNames.has(name)) return name;
    let alias = aliases.get(name);
    if (alias === undefined) {
      alias = `${name.split('-')[0]}-${randomBytes(5).toString('hex')}`;
      aliases.set(name, alias);
    }
    return alias;
  };
  const schemas = new Map<string, { fingerprint: string; summary: SchemaSummary }>();
  /** One idle connection per sandbox for the schema fingerprint (a connection costs more than the query). */
  const clients = new Map<string, Promise<pg.Client>>();
  /**
   * The URL of each branch's own role, kept until it is handed to untrusted code: the migrations
   * run as the role (often while a turn runs, on a branch forked ahead), and the agent or suite that
   * follows gets that same URL instead of a second re-keying. Every handout gets a key no earlier
   * handout saw, as the provider gives on each call; a new fork of the name starts over.
   */
  const roles = new Map<string, { url: Promise<string | null>; handedOut: boolean }>();
  /** The migrations of a workspace: the main one, or an experiment's worktree. */
  const migrationsIn = (workspace: string) => path.join(workspace, kit.config.migrations.dir);
  /** One node-pg-migrate for the run's every apply: the project's, as its deploy and the check lane apply with. */
  const engines = runEngine(kit.migrations, kit.ws.dir, {
    migrationsDir: kit.config.migrations.dir,
    env: kit.env,
    ...(kit.log ? { log: kit.log } : {}),
    ...(kit.modules ? { pristineModules: kit.modules } : {}),
  });

  /** migrations.timeout for the baseline and every branch: read once, before any agent worked. */
  const limit = kit.migrationsLimit ?? {
    timeout: kit.config.migrations.timeout,
    configuration: 'the Consort configuration',
    why: "The limit is the run's configuration's, read before any agent worked (no agent may change its file).",
  };

  async function buildBaseline(): Promise<string> {
    const { config } = kit;
    const entries = await kit.git.filesAt(kit.ws.dir, kit.baseCommit, config.migrations.dir);
    const base = migrationSetFromEntries(entries, config.migrations.ignorePattern);
    baseShas = shasOf(base);
    // What base's JS/TS migrations import from the project decides the baseline too (as in the check).
    const readBase = treeReader({ kind: 'commit', repo: kit.ws.dir, sha: kit.baseCommit }, kit.git);
    const owner = await migrationsPackage(kit.ws.dir, config.migrations.dir);
    // The workspace's own packages (`@acme/shared`) too, as the check and the test template follow them.
    const workspace = await workspacePackages(owner).catch(() => new Map<string, string>());
    const imports = readBase ? await importedFiles(base, readBase, undefined, workspace).catch(() => []) : [];
    // And what base's .env gives them, where they run in base's whole tree (SQL ones read no environment).
    const dotenv =
      readBase && base.some((m) => m.kind !== 'sql')
        ? await dotenvHash(kit.ws.dir, config.migrations.dir, readBase).catch(() => undefined)
        : undefined;
    // Run as the admin, and kept under a name that hashes no installed package: their imports
    // resolve from the run's pristine install only, never the work tree's node_modules (or its
    // `.cache`, above the check's scratch folder), which an earlier run's agent may have rewritten.
    const workdir = await createWorkdir(owner, kit.git, { modules: kit.modules });
    try {
      // JS/TS migrations may import the project's own files (`require('../src/kinds')`): they run in
      // the base commit's whole tree, as the check's do; SQL ones need only themselves.
      let baseDir: { dir: string; relativeTo: string };
      if (base.some((m) => m.kind !== 'sql')) {
        const { leftOut, ...at } = await workdir.extract(
          'base',
          config.migrations.dir,
          kit.ws.dir,
          kit.baseCommit,
          entries,
        );
        for (const l of leftOut) kit.log?.(`Not written for the baseline: ${l}.`);
        baseDir = at;
      } else baseDir = await workdir.write('base', config.migrations.dir, base);
      const outcome = await ensureBaseline({
        provider: kit.provider,
        config,
        workspace: kit.ws.dir,
        base,
        imports,
        ...(dotenv ? { dotenv } : {}),
        baseDir,
        rebuild: false,
        env: kit.env,
        processes: kit.processes,
        migrations: kit.migrations,
        engine: await engines.forFiles(base.map((m) => m.file)),
        timeout: limit.timeout,
        timeoutSource: limit,
        ...(kit.signal ? { signal: kit.signal } : {}),
      });
      if (outcome.ok) {
        if (poolSize > 0) await time('branch:pool', () => startPool(outcome.name));
        return outcome.name;
      }
      if (kit.signal?.aborted)
        throw new ConsortError(
          'invalid-input',
          "The TDD lane's baseline database was not built: the run was cancelled.",
        );
      const why =
        outcome.kind === 'parent-ahead'
          ? `the parent branch "${config.database.parent}" has migrations the feature's base commit does not know (${outcome.ahead.slice(0, 3).join(', ')})`
          : outcome.message.replace(/\.$/, '');
      throw new ConsortError(
        'invalid-input',
        `Cannot build the TDD lane's baseline database: ${why}.`,
        outcome.kind === 'failed' && outcome.pastLimit
          ? // The message says where to raise the limit; the half-built baseline was rolled back.
            {}
          : {
              hint: "Bring the parent branch and the feature's base commit into line (consort branch reset, or start the feature from a newer commit).",
            },
      );
    } finally {
      await workdir.dispose();
    }
  }

  /**
   * Set up the baseline's pool; the copies are made in the background. A pool is an optimisation:
   * when it cannot be had (someone is connected to the baseline), every fork copies.
   */
  async function startPool(name: string): Promise<void> {
    try {
      await kit.provider.pool!(name, poolSize, { fill: 'background', owned: true });
      pooled = name;
    } catch {
      pooled = undefined;
    }
  }

  const getBaseline = (): Promise<string> => {
    baseline ??= buildBaseline();
    return baseline;
  };

  /** The branch role's URL (null where the provider makes none); `handout`: for untrusted code. */
  function confined(name: string, handout: boolean): Promise<string | null> {
    if (!kit.provider.confinedUri) return Promise.resolve(null);
    let role = roles.get(name);
    if (role === undefined || role.handedOut) {
      // A role handed out before owns everything in its fork (the migrations and the agents ran as
      // it; the admin only reads there): a new key is all it needs.
      const rekey = role !== undefined;
      const made = {
        url: time('branch:role', () => kit.provider.confinedUri!(real(name), rekey ? { rekey } : undefined)),
        handedOut: false,
      };
      made.url.catch(() => {
        if (roles.get(name) === made) roles.delete(name);
      });
      roles.set(name, made);
      role = made;
    }
    if (handout) role.handedOut = true;
    return role.url;
  }

  async function fork(name: string): Promise<string> {
    const making = roles.get(name)?.url.catch(() => undefined);
    roles.delete(name);
    await making; // the old branch's role, if being made, before that branch goes
    const parent = await getBaseline();
    const existing = await kit.provider.get(real(name));
    // A fork of the baseline made before (a sandbox forked again, a proof's branch that cannot be
    // used): where the provider keeps pools, a reset swaps in a ready copy and drops the old
    // database in the background, where a delete would wait for DROP DATABASE first.
    if (existing?.parent === parent && kit.provider.pool) {
      await kit.provider.reset(real(name), { terminateConnections: true });
      forks.made += 1;
      return kit.provider.connectionUri(real(name));
    }
    if (existing) await kit.provider.delete(real(name), { recursive: true, terminateConnections: true });
    const made = await kit.provider.create({ name: real(name), parent, ttlMs: BRANCH_TTL_MS });
    forks.made += 1;
    if (made.pooled) forks.pooled += 1;
    return kit.provider.connectionUri(real(name));
  }

  /**
   * The feature's migrations are agents' work: they run as the branch's own role where the provider
   * makes one (it owns the branch's schemas and tables, and is no superuser), not as the admin.
   */
  async function migrate(name: string, url: string, workspace = kit.ws.dir): Promise<ApplyResult> {
    const dir = migrationsIn(workspace);
    if (
      !(await access(dir).then(
        () => true,
        () => false,
      ))
    )
      return NOTHING_TO_APPLY;
    const [as, engine, files] = await Promise.all([
      confined(name, false),
      engines.forDir(dir),
      migrationFiles(workspace),
    ]);
    const result = await applyBounded(
      kit.migrations,
      {
        databaseUrl: as ?? url,
        dir,
        direction: 'up',
        ...migrationPlacement(kit.config.migrations),
        relativeTo: workspace,
        engine,
        // What the proofs' suites get besides the basics (suite.passEnv), for the settings a migration's imports read.
        env: migrationEnv(kit.env, [kit.config.suite.env], kit.config.suite.passEnv, true),
      },
      files,
      {
        timeout: limit.timeout,
        configuration: limit.configuration,
        ...(kit.signal ? { signal: kit.signal } : {}),
        cancelled: 'the run was cancelled before the migrations started',
      },
    );
    // Whatever the cancel left of the request, the branch holding it is forked afresh before any use.
    if (kit.signal?.aborted && !result.ok)
      throw new ConsortError('internal', `The run was cancelled while the migrations ran on the branch ${name}.`, {
        hint: 'Run `consort run` again to resume.',
      });
    return result;
  }

  async function migrationFiles(workspace = kit.ws.dir): Promise<MigrationFile[]> {
    const dir = migrationsIn(workspace);
    // Asked synchronously (before every turn: a trip through the thread pool waited behind the
    // turn's other preparations); a workspace without the folder has no migrations.
    try {
      accessSync(dir);
    } catch {
      return [];
    }
    return readMigrationSet(dir, { relativeTo: workspace, ignorePattern: kit.config.migrations.ignorePattern });
  }

  const migrationShas = async (workspace = kit.ws.dir): Promise<Shas> => shasOf(await migrationFiles(workspace));

  /**
   * Fork and migrate (and read a sandbox's schema); the files may change meanwhile (an agent at
   * work), so what was applied is known only if they did not — or if they only grew (the agent
   * added a migration, as GREEN does) and every migration applied was one of those read before:
   * the branch then holds those, and the proof applies the new ones on top.
   */
  async function prepare(name: string, use: 'proof' | 'sandbox'): Promise<Prepared> {
    const url = await fork(name);
    if (use === 'proof') return prepareProof(name, url);
    const before = await migrationShas();
    const result = await migrate(name, url);
    const after = await migrationShas();
    const known =
      result.ok && (same(before, after) || (holds(before, after) && result.applied.every((m) => before.has(m.name))));
    if (known && use === 'sandbox') await readSchema(name, url);
    return { ok: true, shas: known ? before : null };
  }

  /**
   * A proof's branch, forked ahead from the agent's working tree; what it holds is reused at proof
   * time where the committed tree's migrations are the same files, so it must hold exactly what
   * those files produce. A migration's sha256 covers its own bytes only: a JS/TS migration runs what
   * it imports (node-pg-migrate loads every one, applied or not), which the agent may change after
   * the fork is migrated. With any such migration the branch is only forked ahead: it holds the
   * baseline's migrations, and the proof applies the rest from the committed tree. SQL migrations
   * are applied from a private copy of the files that were hashed, so a file the agent swaps while
   * the runner reads it changes nothing the branch holds.
   */
  async function prepareProof(name: string, url: string): Promise<Prepared> {
    const files = await migrationFiles();
    const code = files.filter((m) => m.kind !== 'sql');
    if (code.length > 0) {
      const named = code
        .slice(0, 3)
        .map((m) => m.file)
        .join(', ');
      return {
        ok: true,
        shas: baseShas,
        note: `consort: the proof's branch was forked ahead but not migrated ahead: ${named}${code.length > 3 ? ', …' : ''} ${code.length === 1 ? 'is' : 'are'} not plain SQL (what a JS/TS migration imports is not covered by its hash), so the committed tree's migrations are applied here.`,
      };
    }
    const copy = await mkdtemp(path.join(os.tmpdir(), 'consort-ahead-'));
    try {
      const dir = migrationsIn(copy);
      await mkdir(dir, { recursive: true });
      for (const f of files) await writeFile(path.join(dir, path.posix.basename(f.file)), f.content);
      const written = await copyStamps(copy, dir, files);
      const result = await migrate(name, url, copy);
      if (!result.ok) return { ok: true, shas: null };
      // The copy lies in the shared temporary directory, which the agent at work can write (the same
      // user, and `/tmp` is shared under bubblewrap too): a file it added or rewrote there before the
      // runner read it ran on the branch. Kept only where the copy is still, untouched, the files hashed.
      const shas = shasOf(files);
      const kept = result.applied.every((m) => shas.has(m.name)) && (await copyIntact(copy, dir, files, written));
      return kept
        ? { ok: true, shas }
        : {
            ok: true,
            shas: null,
            note: "consort: the copy of the migrations the proof's branch was migrated ahead from was changed while they were applied, so the committed tree's migrations are applied to a fresh fork here.",
          };
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  }

  async function readSchema(name: string, url: string): Promise<SchemaSummary> {
    const print = await fingerprint(name, url);
    const cached = schemas.get(name);
    if (cached !== undefined && cached.fingerprint === print) return cached.summary;
    const summary = await schemaSummary(kit.schemas, url, migrationPlacement(kit.config.migrations));
    schemas.set(name, { fingerprint: print, summary });
    return summary;
  }

  /** Bring a branch holding `shas` up to a workspace's migrations, or fork it again when one changed. */
  async function settleMigrations(
    name: string,
    shas: Shas | null,
    workspace = kit.ws.dir,
  ): Promise<{ url: string; migrations: ApplyResult; shas: Shas }> {
    const current = await migrationShas(workspace);
    // Kept only when what it lacks runs after all it holds (the runner's order): a migration named to
    // run before one applied would run after it here, not as on a fresh fork (or in a deploy).
    const names = [...current.keys()];
    const lacking = names.findIndex((m) => !shas?.has(m));
    const inOrder = lacking < 0 || names.slice(lacking).every((m) => !shas?.has(m));
    if (shas !== null && holds(shas, current) && inOrder) {
      const url = await kit.provider.connectionUri(real(name));
      const migrations =
        lacking >= 0 ? await time('branch:migrate', () => migrate(name, url, workspace)) : NOTHING_TO_APPLY;
      return { url, migrations, shas: current };
    }
    await disconnect(name);
    schemas.delete(name);
    const url = await time('branch:fork-in-foreground', () => fork(name));
    return { url, migrations: await time('branch:migrate', () => migrate(name, url, workspace)), shas: current };
  }

  async function takeWarm(name: string): Promise<Shas | null> {
    return (await takeWarmWithNote(name)).shas;
  }

  async function takeWarmWithNote(name: string): Promise<{ shas: Shas | null; note?: string }> {
    const early = warm.get(name);
    warm.delete(name);
    const prepared = early ? await time('branch:wait-for-early-fork', () => early) : undefined;
    if (!prepared?.ok) return { shas: null };
    return prepared.note === undefined ? { shas: prepared.shas } : { shas: prepared.shas, note: prepared.note };
  }

  async function disconnect(name: string): Promise<void> {
    const client = clients.get(name);
    clients.delete(name);
    if (client)
      await client
        .then(
          (c) => c.end(),
          () => undefined,
        )
        .catch(() => undefined);
  }

  const drop = (name: string): void => {
    // A role still being made (rekeyAhead) and a fork under way (invalidate) finish first: made
    // after the deletion, they would outlive it.
    const making = Promise.all([roles.get(name)?.url.catch(() => undefined), refreshing.get(name)]);
    refreshing.delete(name);
    sandboxes.delete(name);
    roles.delete(name);
    schemas.delete(name);
    const branch = real(name);
    proofNames.delete(name);
    aliases.delete(name);
    drops.push(
      disconnect(name)
        .then(() => making)
        .then(() => kit.provider.delete(branch, { recursive: true, terminateConnections: true }))
        .then(
          () => undefined,
          () => undefined,
        ),
    );
  };

  async function fingerprint(name: string, url: string): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      let client = clients.get(name);
      if (client === undefined) {
        const c = newClient({ connectionString: url, application_name: 'consort-conductor' });
        client = c.connect().then(() => c);
        clients.set(name, client);
      }
      try {
        return await catalogFingerprint(await client);
      } catch (e) {
        await disconnect(name);
        if (attempt > 0) throw e;
      }
    }
  }

  return {
    baseline: getBaseline,

    /** The provider's name of a lane branch (a proof's says nothing of its purpose: see `real`). */
    providerName: real,

    /** Start forking (and migrating) a branch for later use: the proof after the running turn, the next sandbox. */
    prefork(name: string, use: 'proof' | 'sandbox'): void {
      if (warm.has(name) || sandboxes.has(name)) return;
      if (use === 'proof') proofNames.add(name);
      warm.set(
        name,
        prepare(name, use).catch((): Prepared => ({ ok: false, shas: null })),
      );
    },

    /**
     * An unused fork of the baseline with a workspace's migrations applied (the main workspace's,
     * or an experiment worktree's); a leftover of the same name is replaced.
     */
    async fresh(name: string, workspace = kit.ws.dir): Promise<FreshBranch> {
      proofNames.add(name);
      const early = await takeWarmWithNote(name);
      const { url, migrations } = await settleMigrations(name, early.shas, workspace);
      const used = engines.used();
      const notes = [
        ...(early.note === undefined ? [] : [early.note]),
        ...(used ? [`consort: migrations applied with ${describeUsed(used)}`] : []),
      ];
      return { url, migrations: notes.length ? { ...migrations, log: [...notes, ...migrations.log] } : migrations };
    },

    /** The cycle's sandbox for agents' turns, kept migrated; other (earlier cycles') sandboxes are dropped. */
    async sandbox(name: string): Promise<FreshBranch> {
      for (const other of [...sandboxes.keys()]) if (other !== name) drop(other);
      let held = sandboxes.has(name) ? (sandboxes.get(name) ?? null) : await takeWarm(name);
      const refresh = refreshing.get(name);
      if (refresh) {
        refreshing.delete(name);
        const fresh = await time('branch:wait-for-early-fork', () => refresh);
        held = fresh.ok ? fresh.shas : null;
      }
      // Unknown until settled (a request cut short by a cancel leaves what it applied), and held:
      // settle() drops it whatever happens here.
      sandboxes.set(name, null);
      const { url, migrations, shas } = await settleMigrations(name, held);
      // A failed request (past migrations.timeout among them) leaves the branch for this turn only,
      // as its records say (each migration commits on its own); the next turn forks it afresh.
      sandboxes.set(name, migrations.ok ? shas : null);
      return { url, migrations };
    },

    /**
     * The sandbox's database may no longer match what was recorded of it (an agent applied a
     * migration it wrote, which may since have been reverted): it is forked afresh now, in the
     * background (the turn is over; the proof runs on a branch of its own), and the next turn takes
     * that fork — or forks again if the migrations change meanwhile (a refused turn's revert).
     */
    invalidate(name: string): void {
      if (!sandboxes.has(name)) return;
      sandboxes.set(name, null);
      schemas.delete(name);
      const before = refreshing.get(name) ?? Promise.resolve();
      refreshing.set(
        name,
        before
          .then(() => disconnect(name))
          .then(() => prepare(name, 'sandbox'))
          .catch((): Prepared => ({ ok: false, shas: null })),
      );
    },

    /**
     * The turn that was handed `name`'s role has ended: its next key is made now, in the background,
     * so the next turn's hand-out does not wait for it (and the ended turn's password stops working
     * sooner). Only for a kept sandbox: an invalidated one is forked afresh, with a role of its own.
     */
    rekeyAhead(name: string): void {
      if (sandboxes.get(name) == null || roles.get(name)?.handedOut !== true) return;
      confined(name, false).catch(() => undefined); // a failure is made again, in the foreground, at hand-out
    },

    /**
     * The URL untrusted code (an agent, the suite) gets for a branch: the branch's own role where
     * the provider can make one (it reaches that branch only), else the provider's URL.
     */
    async untrusted(name: string, url: string): Promise<string> {
      return (await confined(name, true)) ?? url;
    },

    /** The schema of a branch, re-read only when its catalog changed. */
    schema: readSchema,

    /** Delete in the background; `settle()` waits. */
    drop,

    /** The engine (and TypeScript loader) the run applies the migrations in `dir` with: for an agent that applies them itself. */
    migrationEngine: (dir: string): Promise<MigrationEngine> => engines.forDir(dir),

    /** The node-pg-migrate the run's migrations are applied with, once resolved ("node-pg-migrate 7.9.1 (the project's)"). */
    engine: (): string | null => {
      const used = engines.used();
      return used ? describeUsed(used) : null;
    },

    /** Forks made so far, and how many came ready-made from the baseline's pool. */
    forks: (): { made: number; pooled: number } => ({ ...forks }),

    /** End of a run: drop sandboxes and unused forks and the baseline's pool, wait for every deletion. */
    async settle(): Promise<void> {
      for (const name of [...sandboxes.keys()]) drop(name);
      for (const [name, early] of [...warm]) {
        warm.delete(name);
        // Dropped however it ended: a fork whose migrations failed or were cut short (a cancelled
        // run) is still a branch, and under a proof's alias no later run would know it as ours.
        await early;
        drop(name);
      }
      await baseline?.catch(() => undefined); // a pool set up meanwhile is dropped too
      const template = pooled;
      pooled = undefined;
      // After a refill under way (it holds the baseline's lock), so no copy outlives the run.
      if (template !== undefined) {
        const release = kit.provider.releasePool ? kit.provider.releasePool(template) : kit.provider.pool!(template, 0);
        drops.push(release.then(() => undefined));
      }
      const results = await Promise.allSettled(drops);
      drops.length = 0;
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

export type Branches = ReturnType<typeof createBranches>;

/**
 * Changes whenever a user table, column, constraint, type or enum label is created, altered or
 * dropped: a digest of what a context pack's schema summary is made of (and a little more), by
 * content. Not by row version: re-keying a branch's role (GRANT … TO it, on every handout) rewrites
 * every table's catalog row without changing the schema, and would make each turn read it again.
 */
async function catalogFingerprint(db: pg.Client): Promise<string> {
  const { rows } = await db.query<{ f: string }>(
    `SELECT md5(concat_ws('|',
      (SELECT string_agg(concat_ws(':', c.oid, n.nspname, c.relname, c.relkind), ',' ORDER BY c.oid)
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.oid >= 16384),
      (SELECT string_agg(concat_ws(':', a.attrelid, a.attnum, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
                a.attnotnull, a.attidentity, a.attgenerated, a.attcollation, pg_catalog.pg_get_expr(d.adbin, d.adrelid)),
              ',' ORDER BY a.attrelid, a.attnum)
         FROM pg_catalog.pg_attribute a
         LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid >= 16384 AND a.attnum > 0 AND NOT a.attisdropped),
      (SELECT string_agg(concat_ws(':', k.oid, k.conrelid, k.contypid, k.conname, pg_catalog.pg_get_constraintdef(k.oid)),
              ',' ORDER BY k.oid)
         FROM pg_catalog.pg_constraint k WHERE k.oid >= 16384),
      (SELECT string_agg(concat_ws(':', t.oid, t.typnamespace, t.typname, t.typtype), ',' ORDER BY t.oid)
         FROM pg_catalog.pg_type t WHERE t.oid >= 16384),
      (SELECT string_agg(concat_ws(':', e.enumtypid, e.enumsortorder, e.enumlabel), ',' ORDER BY e.enumtypid, e.enumsortorder)
         FROM pg_catalog.pg_enum e)
    )) AS f`,
  );
  return rows[0]?.f ?? '';
}

/** Tables, columns, constraints and enums of a branch, for a context pack. */
export async function schemaSummary(
  schemas: SchemaReader,
  url: string,
  placement: MigrationPlacement,
): Promise<SchemaSummary> {
  const snap = await schemas.snapshot(url, { ignoreTables: bookkeepingTables(placement) });
  return {
    tables: snap.tables.map((t) => ({
      name: qualifiedName(t.schema, t.name),
      columns: t.columns.map((c) => ({ name: c.name, type: c.type, notNull: c.notNull, default: c.default })),
      constraints: snap.constraints
        .filter((c) => c.schema === t.schema && c.table === t.name)
        .map((c) => `${c.name}: ${c.definition}`),
    })),
    enums: snap.enums.map((e) => ({ name: qualifiedName(e.schema, e.name), labels: e.labels })),
  };
}
