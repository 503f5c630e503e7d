/**
 * The PR lane: plan (plan.ts) → run(plan): baseline → PR branch → apply → lint, reversibility,
 * suite → schema diff → CheckReport; the shells publish it. A run talks to the world only through
 * the ports it is given (CheckPorts: built once by each shell), so the CLI, the Action and the App
 * run exactly this. A bad migration or a red suite is a failing report,
 * never a throw; temporary branches are removed on every path. Runs on one PR branch take turns
 * (the provider's run lock: the newest run of a pull request wins, the older concludes
 * `cancelled`), and a run first removes what a killed earlier run left.
 */
import path from 'node:path';
import { migrationEnv } from '../../core/child-env.js';
import { parseDuration } from '../../core/duration.js';
import { ConsortError, isConsortError } from '../../core/errors.js';
import { count } from '../../core/plural.js';
import { withClient } from '../../db/sql.js';
import type { MigrationFile } from '../../migrations/files.js';
import { describeEngine } from '../../migrations/engine.js';
import { pathAlias } from '../../migrations/path-alias.js';
import { migrationsPackage } from '../../migrations/project-packages.js';
import { bookkeepingTables, migrationPlacement } from '../../migrations/placement.js';
import { describeLoader, describePathAliases } from '../../migrations/ts-loader.js';
import type { BranchProvider } from '../../ports/branch-provider.js';
import type { Clock } from '../../ports/clock.js';
import type { GitRepo } from '../../ports/git.js';
import type { Linter } from '../../ports/linter.js';
import type { BaseRelations } from '../../lint/context.js';
import type { Log } from '../../ports/log.js';
import type {
  AppliedMigration,
  ApplyOptions,
  ApplyResult,
  MigrationRunner,
  MigrationSession,
} from '../../ports/migration-runner.js';
import type { ProcessRunner } from '../../ports/process.js';
import type { SchemaReader } from '../../ports/schema-reader.js';
import { CHECK_REPORT_VERSION, concludeStages, type CheckReport, type Stages } from '../../report/check-report.js';
import { planWarningsNote } from '../../report/content.js';
import { diffCounts, diffSchemas } from '../../schema/diff.js';
import { renderSchemaDiffText } from '../../schema/render.js';
import type { SchemaSnapshot } from '../../schema/snapshot.js';
import {
  ensureBaseline,
  missingExtensionNote,
  missingRoleNote,
  missingSchemaNote,
  pathAliasNote,
  warmBaselinePool,
} from './baseline.js';
import { CONFINED_NOTE, INSUFFICIENT_PRIVILEGE, migrationsRunAs } from './migrations-role.js';
import { transactionBlockNote } from './transaction-note.js';
import { unsetSettingNote } from './unset-setting-note.js';
import { abortReason, CheckCancelled, throwIfCancelled } from './cancel.js';
import { removeLeftovers } from './cleanup.js';
import { lintStage } from './lint-stage.js';
import { planCheck, type CheckPlan, type CheckRequest, type CheckSide } from './plan.js';
import {
  applyOneByOne,
  provableOnBranch,
  reversibilityOnBranch,
  reversibilityStage,
  type ProofSetting,
  type ReversibilityOutcome,
} from './reversibility-stage.js';
import { confined, unconfinedNote } from './confined.js';
import { initialStages, runStage, skip } from './stages.js';
import { suiteStage } from './suite-stage.js';
import { endRequests, timeLimited } from './time-limit.js';
import { createWorkdir, type Workdir } from './workdir.js';

/** The world a run touches, built once by each shell's composition root. */
export interface CheckPorts {
  provider: BranchProvider;
  /** Starts the suite and the seed command. */
  processes: ProcessRunner;
  /** Extracts the commits a side names (`tree: { kind: 'commit' }`). */
  git: Pick<GitRepo, 'extractCommit' | 'filesAt'>;
  clock: Clock;
  log: Log;
  /** Lints the new migrations (the lint stage). */
  linter: Linter;
  /** Reads the branches' catalogs (the schema diff, reversibility, lint's live tables). */
  schemas: SchemaReader;
  /** Applies migrations and resolves the project's node-pg-migrate (the plan's engine). */
  migrations: MigrationRunner;
}

export interface CheckRunOptions {
  onSuiteOutput?: (chunk: string) => void;
  signal?: AbortSignal;
}

/** A whole check as a shell hands it over: the request, the ports, the run's options (see `check`). */
export type CheckInput = CheckRequest & CheckPorts & CheckRunOptions;

const TEMP_TTL_MS = 3_600_000;
/** A PR branch that takes longer than this to make is said to be in the making, and its time named. */
export const SLOW_FORK_MS = 1_500;

/** Plan, then run that plan: what the CLI (without --dry-run), the Action and the App do. */
export async function check(input: CheckInput): Promise<CheckReport> {
  const { provider, processes, git, clock, log, linter, schemas, migrations, onSuiteOutput, signal, ...request } =
    input;
  const plan = await planCheck(request, { migrations, log, git });
  return runCheck(
    plan,
    { provider, processes, git, clock, log, linter, schemas, migrations },
    { ...(onSuiteOutput ? { onSuiteOutput } : {}), ...(signal ? { signal } : {}) },
  );
}

/** Execute a plan (planCheck): baseline → PR branch → apply → lint, reversibility, suite → schema diff. */
export async function runCheck(
  plan: CheckPlan,
  ports: CheckPorts,
  options: CheckRunOptions = {},
): Promise<CheckReport> {
  const input = { ...plan.request, ...options };
  const { log, clock, provider, processes } = ports;
  const say = (line: string) => log.info(line);
  const { config } = input;
  const startedAt = clock.now();
  const t0 = clock.monotonicMs();
  const stages = initialStages(config);
  const names = plan.branches;
  const branch = names.branch;
  const temporary: string[] = [];
  let error: CheckReport['error'];
  let cancelled: CheckReport['cancelled'];
  let mode: string | null = null;
  let branchCreated = false;
  // Aborted by the caller (a signal, the App's newer run) or by a newer run claiming the lock.
  const controller = new AbortController();
  const signal = controller.signal;
  const forward = () => controller.abort(input.signal!.reason);
  if (input.signal?.aborted) forward();
  else input.signal?.addEventListener('abort', forward, { once: true });
  const cancelPoint = () => throwIfCancelled(signal);
  // Sessions on the lane's own branches are ended, and named in the log (never silently).
  const ours = { recursive: true, terminateConnections: true, onTerminated: say } as const;
  // Stored on cloud branches where the service allows, so sweeps can tell which run made them.
  const annotations = {
    ...(input.pr !== null ? { pr: String(input.pr) } : {}),
    ...(input.head.sha ? { sha: input.head.sha } : {}),
  };
  let release: (() => Promise<void>) | undefined;
  let unhold: (() => void) | undefined;
  let workdir: Workdir | undefined;
  // The sides' migrations on disk for node-pg-migrate (a commit's tree extracted with git): started
  // beside the run lock, awaited by the baseline stage (and before the scratch directory goes).
  let sidesOnDisk: Promise<SidesOnDisk> | undefined;
  // One node-pg-migrate process for the head's migrations, kept for the run (PR branch, reversibility).
  let headRunner: MigrationSession | undefined;
  // Reversibility's work (beside the migrations, or on the PR branch after them): awaited before its branch is removed.
  let reversibilityWork: Promise<ReversibilityOutcome> | undefined;
  // The PR branch's schema after its migrations, read beside the suite (the diff's "after").
  let afterRead: Promise<SchemaSnapshot> | undefined;
  // The suite's branch, made beside the PR branch: awaited before its branch is removed.
  let suiteWork: Promise<unknown> | undefined;
  // Lets the suite's branch go on (true) or stop (false) once the PR branch's migrations are done.
  let settlePr: ((ok: boolean) => void) | undefined;
  // The PR branch's kept catalog connection: released before the run ends.
  let prReads: { release(): Promise<void> } | undefined;
  // The URL the PR branch's migrations ran with, where its connection is kept for the proof on it.
  let prRunAs: string | undefined;
  // Ends the migration requests in flight (set once the run has its runner).
  let stopMigrations: (() => void) | undefined;
  // Reversibility's proof on the PR branch, once started: it runs to its end, a cancel or not.
  let proofOnBranch: Promise<unknown> | undefined;
  try {
    // Node, node-pg-migrate and a TypeScript loader take a while to load in the migrations' child
    // (the longest wait of a warm check on a JS/TS history): started first when the plan will need them.
    if (plan.engine && !plan.blocked && plan.migrations.ok) {
      headRunner = ports.migrations.open({
        env: migrationEnv(input.env, [config.suite.env], config.suite.passEnv),
      });
      headRunner.warm(plan.engine.engine, plan.sets.head);
    }
    // Nothing in the scratch directory depends on the lock (each run has its own), so the sides are
    // written or extracted while it is taken: handled where it is awaited (the baseline stage).
    if (plan.migrations.ok) sidesOnDisk = writeSides(plan, input, ports.git, (w) => (workdir = w), say);
    // One run per PR branch at a time: the newest run of a pull request wins; runs of one commit take turns.
    if (provider.lockRun) {
      const lock = await provider.lockRun(branch, {
        supersede: input.pr !== null,
        signal,
        onSuperseded: () => controller.abort(new CheckCancelled(`superseded by a newer run of ${branch}`)),
      });
      if (!lock.ok)
        throw new CheckCancelled(
          lock.reason === 'superseded' ? `superseded by a newer run of ${branch}` : abortReason(signal),
        );
      release = lock.release;
    }
    // The provider's background work (refilling the baseline's pool, dropping the PR branch's old
    // database) waits until this run has its report: it is not this run's to wait for.
    unhold = provider.holdBackground?.();
    cancelPoint();
    await removeLeftovers(provider, branch, say);
    const { base, head } = plan.sets;
    const staged = { log, clock };
    const planned = await runStage(stages, 'plan', staged, async () => {
      const p = plan.migrations;
      const newMigrations = [...plan.newMigrations]; // the report's own: a plan may be run again
      const warned =
        p.warnings.length > 0
          ? {
              warnings: p.warnings,
              note: planWarningsNote(p.warnings),
            }
          : { note: '' };
      const { note, ...warnings } = warned;
      const ignored = plan.ignoredSettings ? { ignoredSettings: plan.ignoredSettings } : {};
      if (!p.ok)
        return {
          status: 'failed',
          summary: `${count(p.problems.length, 'problem')} with the migration history${note}`,
          newMigrations,
          problems: [...p.problems],
          ...warnings,
          ...ignored,
        };
      return {
        status: 'passed',
        summary: `${count(newMigrations.length, 'new migration')}, ${p.unchanged} unchanged${note}`,
        newMigrations,
        ...warnings,
        ...ignored,
      };
    });
    if (planned.status !== 'passed') {
      skip(
        stages,
        ['baseline', 'migrations', 'lint', 'reversibility', 'schemaDiff', 'suite'],
        'not run: fix the migration plan first',
      );
      return finish();
    }
    cancelPoint();
    const newMigrations = head.filter((m) => planned.newMigrations.includes(m.name));
    const reversibilityRuns = config.reversibility.enabled && newMigrations.length > 0;
    // Proven on the PR branch once its migrations applied (no copy, role or first pass of its own:
    // half the work on a two-core box) where every new migration has a down; else on a copy.
    // Not where the deploy applies them in one transaction (node-pg-migrate's CLI): the PR branch
    // applies them so too (applyHeadUp), which one at a time with a read after each cannot.
    const oneTransaction = plan.transaction?.single === true && newMigrations.length > 1;
    const onBranch = reversibilityRuns && !oneTransaction && provableOnBranch(newMigrations);
    let serverVersion = '';
    let headDir: { dir: string; relativeTo: string } | undefined;
    // Branches where the pull request's code ran with the provider's own credentials (no confined role).
    const unconfined = new Set<string>();
    const note = (name: string) => (unconfined.has(name) ? unconfinedNote(provider.name) : '');

    const baseline = await runStage(stages, 'baseline', staged, async () => {
      const caps = await provider.capabilities();
      mode = caps.mode;
      serverVersion = caps.serverVersion;
      // What planning could not read fails here, as reading it here would have.
      if (!plan.engine) throw plan.blocked!.error;
      // Started now if not at the beginning, so Node, node-pg-migrate and the TypeScript loader load meanwhile.
      if (!headRunner) {
        headRunner = ports.migrations.open({
          env: migrationEnv(input.env, [config.suite.env], config.suite.passEnv),
        });
        headRunner.warm(plan.engine.engine, head);
      }
      const { base: baseDir, head: headSide } = await sidesOnDisk!;
      headDir = headSide;
      if (plan.blocked) throw plan.blocked.error;
      const b = await ensureBaseline({
        provider,
        config,
        workspace: input.workspace,
        base,
        baseDir,
        rebuild: input.rebuildBaseline === true,
        env: input.env,
        processes,
        migrations: ports.migrations,
        baseSeed: plan.baseSeed,
        // The base's seed command runs the base's code (its tree, extracted for the run or the App's checkout).
        ...(input.base.tree ? { seedDir: baseDir.relativeTo } : {}),
        engine: plan.engine.engine,
        // The base's own limit on its migrations (the file as given where it lies outside the repository).
        timeout: input.base.settings?.migrationsTimeout ?? config.migrations.timeout,
        ...(plan.baseline ? { name: plan.baseline } : {}),
        signal,
      });
      // A base migration the cancel ended is a cancelled run, not a base that does not apply.
      if (!b.ok) cancelPoint();
      if (b.ok) {
        // The head's migrations are compiled in the child while the branches are made, not in the
        // first migration request on each of them (a TypeScript history: ~0.2 s for 31 files). Only
        // now: loading them runs the pull request's code, as the same system user, and while the
        // admin still applied the base's tree written beside the head's, that code rewrote a module
        // a base migration imports (test/security/check-head-preload.test.ts). Nothing of the pull
        // request runs before the baseline is built and seeded.
        void headRunner.preload?.(headSide.dir, headSide.relativeTo);
        // Ready copies of the baseline, so the PR branch and reversibility's copies are renames.
        await warmBaselinePool(provider, b.name, log);
        const how = b.reused
          ? 'reused'
          : `built from ${config.database.parent}: ${count(b.applied.length, 'base migration')} applied${b.seeded ? ', seeded' : ''}`;
        return {
          status: 'passed',
          summary: `${b.name} (${how})${b.seededUnconfined ? unconfinedNote(provider.name).replace('; ran', '; the seed ran') : ''}`,
          name: b.name,
          reused: b.reused,
          applied: b.applied,
          seeded: b.seeded,
        };
      }
      if (b.kind === 'parent-ahead') {
        stages.plan.problems.push({ kind: 'parent-ahead', migrations: b.ahead });
        return {
          status: 'failed',
          summary: `the parent branch "${config.database.parent}" has ${count(b.ahead.length, 'migration')} that base does not know (${b.ahead.slice(0, 3).join(', ')}): merge base into this PR if base has them, else see "Parent ahead" under the migration plan`,
        };
      }
      if (b.failure) log.debug(`  base's migration failure in full: ${b.failure.message}`);
      return { status: 'failed', summary: b.message, ...(b.failure ? { failure: b.failure } : {}) };
    });
    if (baseline.status !== 'passed' || !baseline.name) {
      skip(stages, ['migrations', 'lint', 'reversibility', 'schemaDiff', 'suite'], 'not run: no baseline');
      return finish();
    }
    cancelPoint();
    const baselineName = baseline.name;
    const engineUsed = plan.engine!.engine;
    const loader = plan.engine!.loader;
    const aliases = plan.engine!.paths;
    const ranWith = `${describeEngine(engineUsed)}${loader ? `, ${describeLoader(loader)}` : ''}${aliases ? `, ${describePathAliases(aliases)}` : ''}`;
    const headFiles = headDir!;
    // migrations.timeout on every request of the PR's migrations, the proof on the PR branch's too.
    const proofRunner = timeLimited(
      headRunner!,
      { ms: parseDuration(config.migrations.timeout), text: config.migrations.timeout },
      head,
    );
    // The requests in flight, by the URL each runs with: a cancel ends their statements, as the role
    // that runs them (a migration that sleeps or waits on a lock held the run, and its run lock, to
    // its end), and ends the migrations' child where they have not come back after that (a
    // JavaScript migration running no statement: a promise that never settles, a loop), as
    // migrations.timeout does. No request starts after the cancel, and one the cancel ended is a
    // cancelled run, not a failed migration. Not the proof on the PR branch (proofRunner): once
    // started, it runs to its end, so the child is ended only after it.
    const inFlight = new Map<string, number>();
    const runner: MigrationSession = Object.assign(Object.create(proofRunner) as MigrationSession, {
      apply: async (options: ApplyOptions, how?: { keep?: boolean; first?: boolean }) => {
        cancelPoint();
        const url = options.databaseUrl;
        inFlight.set(url, (inFlight.get(url) ?? 0) + 1);
        try {
          return await proofRunner.apply(options, how);
        } catch (e) {
          cancelPoint();
          throw e;
        } finally {
          const left = inFlight.get(url)! - 1;
          if (left > 0) inFlight.set(url, left);
          else inFlight.delete(url);
        }
      },
    });
    stopMigrations = () => {
      endRequests([...inFlight.keys()], () => {
        void (proofOnBranch ?? Promise.resolve())
          .catch(() => undefined)
          .then(() => {
            if (inFlight.size > 0) headRunner!.stop?.();
          });
      });
    };
    if (signal.aborted) stopMigrations();
    else signal.addEventListener('abort', stopMigrations, { once: true });
    // The PR branch's catalog reads (before, after) share one kept connection where the reader keeps
    // them; released before anything forks the branch, and at the end.
    const prSchemas = ports.schemas.open?.();
    prReads = prSchemas;
    // What the run keeps on the PR branch (reads, the migrations' connection): ended before a reset or fork.
    const releasePrBranch = async (): Promise<void> => {
      await prSchemas?.release();
      if (prRunAs !== undefined) await runner.release?.(prRunAs);
    };
    // Where node-pg-migrate runs and records the migrations (migrations.schema, migrationsSchema, …).
    const placement = migrationPlacement(config.migrations);
    const snapshotOf = (at: string) =>
      (prSchemas ?? ports.schemas).snapshot(at, { ignoreTables: bookkeepingTables(placement) });
    // The PR's migrations up, as the PR branch and the suite's branch each get them.
    const headOptions = (databaseUrl: string) => ({
      databaseUrl,
      dir: headFiles.dir,
      relativeTo: headFiles.relativeTo,
      ...placement,
      checkOrder: config.migrations.checkOrder,
      ignorePattern: config.migrations.ignorePattern,
      engine: engineUsed,
    });
    // Up in one transaction where the project's scripts deploy so (node-pg-migrate's CLI default): a
    // migration using what an earlier one made uncommitted fails here as in the deploy.
    const applyHeadUp = (databaseUrl: string) =>
      runner.apply({
        ...headOptions(databaseUrl),
        direction: 'up',
        ...(plan.transaction?.single ? { singleTransaction: true } : {}),
      });
    // Who applies the PR's migrations: the branch's role, or the admin where the base opts out.
    const migrationsRole = migrationsRunAs(input.base, config);
    migrationsRole.log.forEach((line) => log.info(line));
    const asAdmin = migrationsRole.role === 'admin';
    const elevated = migrationsRole.reason;

    // Where a new migration cannot go down, reversibility works on a copy of the baseline: it starts
    // now, beside the migrations, and is recorded only once they have applied. It shares the run's
    // node-pg-migrate process, which runs requests on different databases side by side (its steps
    // go first when requests wait): the branches, roles, catalog reads and migrations all overlap.
    let reversibilityStartedAt = clock.monotonicMs();
    // What reversibility needs wherever it is proven (on a copy, or on the PR branch below).
    const proofSetting: ProofSetting = {
      provider,
      migrations: newMigrations,
      headDir: headFiles,
      placement,
      checkOrder: config.migrations.checkOrder,
      ignorePattern: config.migrations.ignorePattern,
      engine: engineUsed,
      asAdmin,
      requireDown: config.reversibility.requireDown,
      runner,
      unconfined,
      cancelPoint,
      onTerminated: say,
    };
    // Settled once the PR branch's migrations are done (true: they applied), or when the run stops first.
    let prApplied: (ok: boolean) => void = () => undefined;
    const prDone = new Promise<boolean>((resolve) => (prApplied = resolve));
    settlePr = prApplied;
    if (reversibilityRuns && !onBranch) {
      temporary.push(names.reversibility);
      const prove = () =>
        reversibilityStage({
          ...proofSetting,
          branch: names.reversibility,
          baseline: baselineName,
          ttlMs: TEMP_TTL_MS,
          annotations,
          schemas: ports.schemas,
        });
      // As the admin a migration can change what every database of a server shares (a role made
      // behind an IF NOT EXISTS): the copy's ups, beside the PR branch's, could win a race the PR
      // branch's then loses. There the copy starts once the PR branch's migrations have applied.
      reversibilityWork = asAdmin
        ? prDone.then((ok) => {
            if (!ok) throw new Error('not run: the migrations did not apply');
            return prove();
          })
        : prove();
      // Handled where it is awaited: the stage, or below when the migrations fail or the run stops.
      reversibilityWork.catch(() => undefined);
    }

    // The suite's branch is made the way the PR branch is — a copy of the baseline, its own role,
    // the pull request's migrations applied as that role — instead of a copy of the PR branch made
    // once it is migrated (a full copy in copy mode: the longest wait of a warm check). The copy and
    // its role are made now, while the migrations' child starts (the run waits for it there anyway),
    // not beside reversibility's steps on the PR branch; its migrations go beside the PR branch's (below).
    // Undefined: it could not be made so (the suite stage then forks the PR branch, as before).
    const prepareSuiteBranch = async (): Promise<string | undefined> => {
      await provider.create({ name: names.suite, parent: baselineName, ttlMs: TEMP_TTL_MS, annotations });
      cancelPoint();
      const adminUrl = await provider.connectionUri(names.suite);
      if (provider.verifyUrl) await provider.verifyUrl(names.suite, adminUrl);
      else await verifyBranchUrl(adminUrl, (await provider.get(names.suite))!.database, names.suite);
      const role = confined(provider, names.suite, adminUrl, unconfined);
      role.catch(() => undefined); // awaited below, on every path
      // Applied beside the PR branch's migrations (the child runs requests on different databases
      // side by side): after them, this was the longest wait between the child being ready and the
      // suite starting. Used only once the PR branch's migrations have applied; where they fail,
      // this copy's outcome is never read (the stage reports the PR branch's) and the copy goes.
      // Only as the branch's own role, though: as the admin (or where no role could be made) a
      // migration can change what every database of a server shares — a role made behind an IF NOT
      // EXISTS — and this copy could win a race the PR branch's then loses; there it waits for them.
      const applying = role.then(async (as) => {
        if ((asAdmin || unconfined.has(names.suite)) && !(await prDone)) return undefined;
        cancelPoint();
        return applyHeadUp(asAdmin ? adminUrl : as);
      });
      applying.catch(() => undefined); // awaited below, on every path
      if (!(await prDone)) {
        await applying.catch(() => undefined);
        return undefined;
      }
      cancelPoint();
      const suiteUrl = await role;
      const r = await applying;
      return r?.ok ? suiteUrl : undefined;
    };
    temporary.push(names.suite);
    const suitePrepared = prepareSuiteBranch();
    suitePrepared.catch(() => undefined); // awaited by the suite stage, or before the branches go
    suiteWork = suitePrepared;

    // The PR branch: always a fresh copy of the baseline, verified before anything writes to it.
    let url = '';
    let baseRelations: BaseRelations | undefined;
    // The baseline's schema, read once: on the fresh PR branch (a copy of it) before anything is applied.
    let before: SchemaSnapshot | undefined;
    // Reversibility on the PR branch: the schema before the migrations and after each, the URL they ran with.
    let firstPass: SchemaSnapshot[] | undefined;
    let prConfined = '';
    let applied: AppliedMigration[] = [];
    /** The PR branch, reset to the baseline or made anew. */
    const makePrBranch = async (): Promise<void> => {
      const existing = await provider.get(branch);
      // With database.ttl the branch is made afresh, so its expiry counts from this check (a reset
      // keeps the old one: a branch past it would be reset, then removed by the next gc).
      if (existing && existing.parent === baselineName && config.database.ttl === undefined)
        await provider.reset(branch, { terminateConnections: true, onTerminated: say });
      else {
        if (existing) await provider.delete(branch, ours);
        const gitBranch = input.head.gitBranch === undefined ? input.head.ref : input.head.gitBranch;
        await provider.create({
          name: branch,
          parent: baselineName,
          annotations,
          ...(input.pr !== null
            ? {
                ...(gitBranch ? { gitBranch } : {}),
                // database.ttl: `branch gc` removes a PR's branch this long after it was made, closed or not.
                ...(config.database.ttl !== undefined ? { ttlMs: parseDuration(config.database.ttl) } : {}),
              }
            : { ttlMs: TEMP_TTL_MS * 24 }),
        });
      }
      branchCreated = true;
    };
    const migrations = await runStage(stages, 'migrations', staged, async () => {
      // A fork that takes a while (a full copy of a large baseline whose pool had no copy ready) says
      // so as it starts, and in the stage's summary: it is the branch's time, not the migrations'.
      const forkStarted = performance.now();
      const slowFork = setTimeout(
        () => say(`  making the PR branch ${branch} from ${baselineName}${mode ? ` (${mode} mode)` : ''}…`),
        SLOW_FORK_MS,
      );
      try {
        await makePrBranch();
      } finally {
        clearTimeout(slowFork);
      }
      const forkMs = performance.now() - forkStarted;
      const forkNote =
        forkMs >= SLOW_FORK_MS
          ? `; making ${branch} from the baseline took ${(forkMs / 1000).toFixed(1)} s${mode ? ` (${mode} mode)` : ''}`
          : '';
      url = await provider.connectionUri(branch);
      if (provider.verifyUrl) await provider.verifyUrl(branch, url);
      else await verifyBranchUrl(url, (await provider.get(branch))!.database, branch);
      // The pull request's migrations are its code: they run as the branch's own role where the
      // provider makes one (owner of the branch's objects, no superuser, no other database), unless
      // the base's configuration says admin. The role is made either way, so "before" is the same.
      const confinedUrl = await confined(provider, branch, url, unconfined);
      const runAs = asAdmin ? url : confinedUrl;
      // The fresh PR branch is the base: what lint needs to tell a live table from one this PR
      // creates, and the schema diff's "before" (read after the role took the branch's objects,
      // so only what the migrations did differs).
      [baseRelations, before] = await Promise.all([(prSchemas ?? ports.schemas).relations(url), snapshotOf(url)]);
      cancelPoint();
      let r: ApplyResult;
      if (onBranch) {
        // One at a time, read after each: the first pass of the proof that follows on this branch.
        prRunAs = runAs;
        prConfined = confinedUrl;
        const stepped = await applyOneByOne({
          runner,
          options: headOptions(runAs),
          count: newMigrations.length,
          before,
          snapshot: () => snapshotOf(url),
        });
        r = stepped.result;
        if (r.ok) firstPass = stepped.schemas;
      } else r = await applyHeadUp(runAs);
      if (!r.ok) cancelPoint(); // a statement the cancel ended is a cancelled run, not a failed migration
      applied = r.applied;
      // A JS/TS migration is linted on the SQL it sent: those a failure rolled back (one transaction for
      // the lot) too; before, lint named them "not linted (it sent no SQL)" though they had run.
      if (!r.ok && r.rolledBack) applied = [...applied, ...r.rolledBack];
      // The failing one's too, up to the statement that failed.
      if (!r.ok && r.failed.kind === 'statement' && r.failed.sent && r.failed.sent.sql.length > 0)
        applied = [
          ...applied,
          {
            name: r.failed.name,
            file: r.failed.file,
            sql: r.failed.sent.sql,
            durationMs: 0,
            transactional: r.failed.sent.transactional,
          },
        ];
      // 'admin': the provider's own URL (the opt-out, or a provider that makes no branch roles).
      const ranAs = runAs === url ? ('admin' as const) : ('branch' as const);
      const list = r.applied.map((m) => ({
        name: m.name,
        file: m.file,
        durationMs: Math.round(m.durationMs),
        statements: m.sql.length,
      }));
      const nodePgMigrate = {
        version: engineUsed.version,
        source: engineUsed.source,
        ...(loader ? { typescript: loader } : {}),
        ...(aliases ? { pathAliases: aliases } : {}),
      };
      if (r.ok)
        return {
          status: 'passed',
          // "as the admin" early: the PR comment's table shortens long summaries from the end.
          summary: `${count(list.length, 'migration')} applied to ${branch}${elevated ? ` as the admin (${elevated})` : ''} with ${ranWith}${elevated ? '' : note(branch)}${forkNote}`,
          applied: list,
          nodePgMigrate,
          ranAs,
        };
      const f = r.failed;
      const denied = runAs !== url && f.error.code === INSUFFICIENT_PRIVILEGE;
      const alias =
        f.kind === 'load' && !engineUsed.tsconfigPaths
          ? await pathAliasNote(f.error.message, f.file, (specifier) =>
              pathAlias(headFiles.relativeTo, path.relative(headFiles.relativeTo, headFiles.dir), specifier),
            )
          : undefined;
      const extension =
        alias ??
        missingExtensionNote(f.error.code, f.error.message) ??
        transactionBlockNote(
          f.error.code,
          newMigrations.find((m) => m.name === f.name),
          plan.transaction,
        ) ??
        unsetSettingNote(
          'statement' in f ? f.statement : '',
          newMigrations.find((m) => m.name === f.name),
          input.env,
          config.suite.passEnv,
        ) ??
        missingRoleNote(f.error.code, f.error.message) ??
        missingSchemaNote(f.error.code, f.error.message);
      return {
        status: 'failed',
        summary: `${f.file ?? f.name ?? 'a migration'} failed: ${f.error.message}${extension ? ` (${extension})` : ''}${denied ? CONFINED_NOTE : elevated ? ` (ran as the admin: ${elevated})` : note(branch)}${forkNote}`,
        applied: list,
        nodePgMigrate,
        ranAs,
        failure: {
          name: f.name ?? '',
          file: f.file ?? '',
          statement: 'statement' in f ? f.statement : '',
          message: f.error.message,
          ...(f.error.code ? { code: f.error.code } : {}),
          ...(f.error.detail ? { detail: f.error.detail } : {}),
          ...(f.error.hint ? { hint: f.error.hint } : {}),
          ...(f.error.line ? { line: f.error.line } : {}),
          ...(extension ? { note: extension } : {}),
        },
      };
    });

    // Not started by a run cancelled while its migrations applied: the proof takes them down and up
    // again on the PR branch (as long again as they took), and runs to its end once started.
    if (firstPass && migrations.status === 'passed' && !signal.aborted) {
      reversibilityStartedAt = clock.monotonicMs();
      reversibilityWork = reversibilityOnBranch({
        ...proofSetting,
        runner: proofRunner,
        branch,
        url,
        confinedUrl: prConfined,
        applied: firstPass,
        schemas: prSchemas ?? ports.schemas,
        releaseReads: releasePrBranch,
      });
      proofOnBranch = reversibilityWork;
      reversibilityWork.catch(() => undefined); // awaited by its stage, or before the branches go
    }
    // As the admin, reversibility's copy starts now (it waited for this): its time counts from here.
    if (asAdmin && reversibilityRuns && !onBranch) reversibilityStartedAt = clock.monotonicMs();
    prApplied(migrations.status === 'passed');
    cancelPoint();
    const lint = runStage(stages, 'lint', staged, () =>
      lintStage(ports.linter, config, newMigrations, applied, serverVersion, baseRelations!),
    );
    if (migrations.status !== 'passed') {
      await lint;
      // What reversibility found on its copy is not reported: the migrations did not apply.
      await reversibilityWork?.catch(() => undefined);
      skip(stages, ['reversibility', 'schemaDiff', 'suite'], 'not run: the migrations did not apply');
      return finish();
    }

    // Lint, reversibility (on the PR branch, or a child of the baseline) and the suite (on a branch of
    // its own) run side by side; the schema diff compares the PR branch's before and after.
    const reversibility = async () => {
      if (!config.reversibility.enabled)
        return skip(stages, ['reversibility'], 'disabled (reversibility.enabled: false)');
      if (newMigrations.length === 0) {
        stages.reversibility = { ...stages.reversibility, status: 'passed', summary: 'no new migrations' };
        return;
      }
      await runStage(stages, 'reversibility', staged, () => reversibilityWork!, reversibilityStartedAt);
    };
    const suite = runStage(stages, 'suite', staged, async () => {
      // The pull request's suite is untrusted: it gets the branch's own role where the provider can make one.
      let suiteUrl = await suitePrepared.catch(() => undefined);
      cancelPoint();
      if (suiteUrl === undefined) {
        // Not made beside the PR branch (its migrations failed there, or the branch could not be
        // made): a fresh child of the PR branch, as the PR branch is now (once the proof on it is done).
        if (await provider.get(names.suite)) await provider.delete(names.suite, ours);
        if (firstPass) await reversibilityWork?.catch(() => undefined);
        await releasePrBranch();
        await provider.create({ name: names.suite, parent: branch, ttlMs: TEMP_TTL_MS, annotations });
      }
      // Nothing writes to the PR branch any more and nothing copies it: read "after" now, beside the
      // suite (read already as the migrations applied, when reversibility is proven there).
      if (!firstPass) {
        afterRead = snapshotOf(url);
        afterRead.catch(() => undefined); // awaited by the schema diff, or before the branches go
      }
      cancelPoint();
      suiteUrl ??= await confined(provider, names.suite, await provider.connectionUri(names.suite), unconfined);
      const result = await suiteStage(
        config,
        input.workspace,
        suiteUrl,
        input.env,
        processes,
        clock,
        signal,
        input.onSuiteOutput,
      );
      cancelPoint(); // an aborted suite is a cancelled run, not a failed suite
      return { ...result, summary: `${result.summary}${note(names.suite)}` };
    });
    // allSettled: never leave a stage running while `finally` removes its branch; each stage has
    // recorded its own outcome, so the first failure is rethrown only to stop the run.
    const settled = await Promise.allSettled([lint, reversibility(), suite]);
    const rejected = settled
      .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      .map((r) => r.reason as unknown);
    if (rejected.length > 0) throw rejected.find((e) => !(e instanceof CheckCancelled)) ?? rejected[0];
    cancelPoint();

    await runStage(stages, 'schemaDiff', staged, async () => {
      const after = firstPass ? firstPass[firstPass.length - 1]! : await (afterRead ?? snapshotOf(url));
      // `after` is the head branch, a fork of the base `before` was read on: its OIDs tell renames.
      const diff = diffSchemas(before!, after, { renames: true });
      const counts = diffCounts(diff).filter((c) => c.added + c.removed + c.changed > 0);
      const total = counts.reduce((n, c) => n + c.added + c.removed + c.changed, 0);
      return {
        status: 'passed',
        summary: total === 0 ? 'no schema changes' : `${count(total, 'schema change')}`,
        text: renderSchemaDiffText(diff),
        counts,
      };
    });
    return finish();
  } catch (e) {
    if (e instanceof CheckCancelled || signal.aborted) {
      cancelled = { reason: e instanceof CheckCancelled ? e.reason : abortReason(signal) };
      log.info(`Cancelled: ${cancelled.reason}.`);
      skip(
        stages,
        (Object.keys(stages) as (keyof Stages)[]).filter((k) => stages[k].summary !== 'cancelled'),
        'not run: the check was cancelled',
      );
      return finish();
    }
    // The stage that threw has recorded itself (runStage); the rest did not run.
    error = isConsortError(e)
      ? { message: e.message, ...(e.hint ? { hint: e.hint } : {}) }
      : { message: e instanceof Error ? e.message : String(e) };
    // A busy parent or baseline is someone else's session: the lane never ends those, and `check`
    // has no flag that would (the provider's hint names `--terminate-connections`).
    if (isConsortError(e, 'branch-busy')) {
      error.hint = `Close those connections and re-run the check: the check ends sessions only on branches it made (${branch}, its temporary children, a baseline it resets them from), never on "${config.database.parent}".`;
    }
    skip(stages, Object.keys(stages) as (keyof Stages)[], 'not run: the check stopped on an error');
    return finish();
  } finally {
    unhold?.();
    input.signal?.removeEventListener('abort', forward);
    if (stopMigrations) signal.removeEventListener('abort', stopMigrations);
    settlePr?.(false); // a run that stopped before the migrations concluded (before awaiting what waits for them)
    // Never remove reversibility's branch under it (a stop elsewhere leaves it running to its next cancel point).
    await reversibilityWork?.catch(() => undefined);
    await suiteWork?.catch(() => undefined);
    await afterRead?.catch(() => undefined); // its session on the PR branch is ours, never one to end
    await prReads?.release().catch(() => undefined);
    if (prRunAs !== undefined) await headRunner?.release?.(prRunAs).catch(() => undefined);
    // The temporary branches a stage made (one that stopped early never made its own). Removing them
    // is routine, so said only when debugging (CONSORT_DEBUG=1, the Action's step debug logging); a
    // branch left behind is a warning. --keep-branches keeps them to look into; either way the next
    // check of the branch removes what is left first.
    const present = await existing(temporary);
    const removed: string[] = [];
    if (input.keepBranches === true && present.length > 0)
      log.info(
        `Kept the temporary ${present.length === 1 ? 'branch' : 'branches'} ${present.join(', ')} (--keep-branches); the next check of ${branch} removes ${present.length === 1 ? 'it' : 'them'} first.`,
      );
    else if (present.length > 0) {
      log.debug(`Removing temporary branches: ${present.join(', ')}`);
      // Side by side: each is a branch of its own (the drops' checkpoints are shared, not queued).
      await Promise.all(
        present.map((name) =>
          provider.delete(name, ours).then(
            () => removed.push(name),
            (e: unknown) =>
              log.warn(
                `Could not remove the temporary branch ${name}: ${(e as Error).message} (the next check of ${branch} removes it first)`,
              ),
          ),
        ),
      );
    }
    if (removed.length > 0) log.debug(`Removed temporary branches: ${removed.join(', ')}`);
    if (input.cleanup && branchCreated && !input.keepBranches)
      await provider.delete(branch, ours).catch(() => undefined);
    await headRunner?.close().catch(() => undefined);
    await sidesOnDisk?.catch(() => undefined); // never remove the scratch directory under git
    await workdir?.dispose();
    await release?.().catch(() => undefined);
  }

  /** The names among `names` that are branches now. */
  async function existing(names: readonly string[]): Promise<string[]> {
    const found = await Promise.all(names.map((n) => provider.get(n).catch(() => undefined)));
    return names.filter((_, i) => found[i]);
  }

  function finish(): CheckReport {
    return {
      schemaVersion: CHECK_REPORT_VERSION,
      tool: { name: 'consort', version: input.toolVersion },
      conclusion: cancelled ? 'cancelled' : error ? 'error' : concludeStages(stages),
      startedAt: startedAt.toISOString(),
      durationMs: Math.round(clock.monotonicMs() - t0),
      provider: provider.name,
      branchMode: mode,
      base: { ref: input.base.ref, sha: input.base.sha },
      head: { ref: input.head.ref, sha: input.head.sha },
      pr: input.pr,
      branch: branchCreated && !(input.cleanup && !input.keepBranches) ? branch : null,
      configSource: input.configSource,
      ...(cancelled ? { cancelled } : error ? { error } : {}),
      stages,
    };
  }
}

interface SidesOnDisk {
  base: { dir: string; relativeTo: string };
  head: { dir: string; relativeTo: string };
}

/**
 * Each side's migrations where node-pg-migrate reads them: a working tree as it is, a commit's
 * whole tree extracted into the run's scratch directory (so imports of project code resolve), or
 * the files the plan read written there. `made` gets the scratch directory as soon as it exists.
 */
async function writeSides(
  plan: CheckPlan,
  input: CheckPlan['request'],
  git: CheckPorts['git'],
  made: (workdir: Workdir) => void,
  log: (line: string) => void,
): Promise<SidesOnDisk> {
  const scratch = await createWorkdir(await migrationsPackage(input.workspace, input.config.migrations.dir), git);
  made(scratch);
  const sideDir = async (name: string, side: CheckSide, files: readonly MigrationFile[]) => {
    // The base's migrations where the base keeps them (its own migrations.dir), the head's where it does.
    const migrationsDir = side.settings?.migrationsDir ?? input.config.migrations.dir;
    if (side.tree?.kind === 'dir') return { dir: path.join(side.tree.dir, migrationsDir), relativeTo: side.tree.dir };
    if (side.tree?.kind === 'commit') {
      const { leftOut, ...at } = await scratch.extract(
        name,
        migrationsDir,
        side.tree.repo,
        side.tree.sha,
        side.migrations,
      );
      for (const l of leftOut) log(`Not written for the run (${name}): ${l}.`);
      return at;
    }
    return scratch.write(name, migrationsDir, files);
  };
  const [base, head] = await Promise.all([
    sideDir('base', input.base, plan.sets.base),
    sideDir('head', input.head, plan.sets.head),
  ]);
  return { base, head };
}

/** Never migrate the wrong database: the branch URL must reach the branch's own database. */
async function verifyBranchUrl(url: string, database: string, branch: string): Promise<void> {
  const actual = await withClient(
    url,
    async (db) => (await db.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db,
  );
  if (actual !== database) {
    throw new ConsortError(
      'internal',
      `The URL of branch "${branch}" reaches database "${actual}", not "${database}"; refusing to migrate it.`,
      {
        hint: 'This is a provider bug: report it. Nothing was written.',
      },
    );
  }
}
