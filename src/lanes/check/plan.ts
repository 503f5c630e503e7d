/**
 * The PR lane's plan: everything a run will do, decided before it touches a database — the
 * migration plan, the node-pg-migrate (and TypeScript loader) that will apply the migrations, the
 * seed base has, the baseline's name and the branches the run will use. `consort check --dry-run`
 * prints exactly this plan (checkPlanJson); runCheck (run.ts) executes the same object.
 *
 * planCheck reads what the plan depends on (the project's engine, the workspace's seed file) and
 * then decides purely (decidePlan). What it cannot read is not a throw: it blocks the run, which
 * fails its baseline stage with the same error a run reading it there would report.
 */
import { DEFAULT_CONFIG_FILE } from '../../config/files.js';
import type { SideSettings } from './base-settings.js';
import type { ConsortConfig } from '../../config/schema.js';
import { prBranchName, runBranches, type RunBranches } from '../../core/names.js';
import { isConsortError } from '../../core/errors.js';
import {
  deploySettings,
  deployTransaction,
  type DeploySetting,
  type DeployTransaction,
} from '../../migrations/deploy-settings.js';
import type { MigrationEngine } from '../../migrations/engine.js';
import { refuseChangedModules } from './changed-modules.js';
import { migrationSetFromEntries, type MigrationEntry, type MigrationFile } from '../../migrations/files.js';
import { outsideMigrationsDir, planMigrations, type MigrationPlan, type Problem } from '../../migrations/plan.js';
import { prepareTypeScript, type PathAliasLoader, type TypeScriptLoader } from '../../migrations/ts-loader.js';
import type { Log } from '../../ports/log.js';
import type { MigrationRunner } from '../../ports/migration-runner.js';
import {
  importedFiles,
  isDownSql,
  treeReader,
  type ImportedFile,
  type SourceTree,
} from '../../migrations/imported-code.js';
import { migrationsPackage, workspacePackages } from '../../migrations/project-packages.js';
import { dotenvHash } from '../../migrations/dotenv.js';
import { sha256Normalized } from '../../migrations/files.js';
import type { GitRepo } from '../../ports/git.js';
import { baselineName, readSeed } from './baseline.js';
import { ignoredNote, trustedConfig } from './trusted-config.js';
import { uncheckedMigrationDirs } from './other-dirs.js';

export interface CheckSide {
  ref: string;
  sha: string | null;
  /** The git branch the side is on, when `ref` does not name it (`HEAD`, the working tree). */
  gitBranch?: string | null;
  migrations: readonly MigrationEntry[];
  /** The side's `database.seed` file: its text, null when the side has none; undefined: not read (the workspace's is used). */
  seed?: string | null;
  /**
   * Where the side's whole tree is, so migrations that import project code run where their imports
   * resolve: a directory (the working tree) or a commit of a repository (extracted for the run).
   * Without it only the migration files are written to a scratch directory.
   */
  tree?: SourceTree;
  /**
   * The side's own committed configuration, for what a pull request must not grant itself
   * (`check.migrationsRole`): only the base's is read. Absent: the defaults (the confined role).
   */
  settings?: SideSettings;
  /**
   * The change's side only, when its `migrations.dir` is not the base's: the change's files in the
   * base's folder (`baseDir`), so a migration added there — where the base deploys from — is not
   * passed over because the change's configuration reads another folder (sides.ts, leftBehind).
   */
  leftBehind?: {
    baseDir: string;
    migrations: readonly MigrationEntry[];
    /**
     * The base's own files in `baseDir`, when the base side's migrations were read from another
     * folder (a base without a valid configuration, whose folder is the default); absent: the base
     * side's migrations are these.
     */
    baseMigrations?: readonly MigrationEntry[];
  };
}

/** What a shell asks the lane to check: data only (the ports a run uses are passed to runCheck). */
export interface CheckRequest {
  workspace: string;
  config: ConsortConfig;
  configSource: string | null;
  base: CheckSide;
  head: CheckSide;
  pr: number | null;
  /**
   * The environment the project's code gets (suite, seed command), also what an npm install of the
   * node-pg-migrate or TypeScript loader a lockfile pins is run with.
   */
  env: NodeJS.ProcessEnv;
  toolVersion: string;
  keepBranches?: boolean;
  /** Also delete the PR branch at the end. */
  cleanup?: boolean;
  rebuildBaseline?: boolean;
}

/** The migrations' engine as the run will use it. */
export interface PlannedEngine {
  /** With the project's TypeScript loader named on it (`tsLoader`) when the migrations need one. */
  engine: MigrationEngine;
  loader: TypeScriptLoader | undefined;
  /** What resolves path aliases, when the project's deploy resolves them (`tsconfigPaths` on the engine). */
  paths?: PathAliasLoader;
}

/** What stops the run in its baseline stage, with the error that stage reports. */
export interface PlanBlock {
  stage: 'baseline';
  /** `engine`: no node-pg-migrate (or TypeScript loader) for these migrations; `seed`: the seed file cannot be read. */
  reason: 'engine' | 'seed';
  error: unknown;
}

export interface CheckPlan {
  /** The request, its configuration judged by the base's verdict settings (trusted-config.ts). */
  request: CheckRequest;
  /**
   * Why the change's own verdict settings were not used (they differ from the base's), for the
   * log and the plan stage; null when it set none.
   */
  ignoredSettings: string | null;
  /** Base's and head's migration sets, parsed and sorted as node-pg-migrate orders them. */
  sets: { base: MigrationFile[]; head: MigrationFile[] };
  /** The migration plan: what is new, and what in the history would fail. */
  migrations: MigrationPlan;
  /** The migration plan passes (order, history, names). */
  ok: boolean;
  newMigrations: string[];
  /** null when it could not be resolved (then `blocked` says why). */
  engine: PlannedEngine | null;
  /**
   * The seed file's text the baseline is seeded with (base's; the workspace's when the side does not
   * carry it), null when base has none; undefined when the configuration seeds with no file.
   */
  baseSeed: string | null | undefined;
  /** The baseline's name, or null when it cannot be known (`blocked`). */
  baseline: string | null;
  /** The PR branch and the run's temporary branches. */
  branches: RunBranches;
  temporaryBranches: string[];
  blocked: PlanBlock | null;
  /**
   * How the project's scripts apply the migrations (deploy-settings.ts): in one transaction, as
   * node-pg-migrate's CLI does by default, the pull request's new migrations are applied so too;
   * undefined (no such script: a deploy calling runner()), a transaction each.
   */
  transaction?: DeployTransaction;
}

/** What planCheck reads before deciding. */
export interface PlanReadings {
  engine: PlannedEngine | { error: unknown };
  /** undefined: the configuration seeds with no file. */
  baseSeed: string | null | undefined | { error: unknown };
  /** The settings the project's scripts run node-pg-migrate with that the check does not (deploy-settings.ts). */
  deploy?: readonly DeploySetting[];
  /** The project's files base's migrations import (imported-code.ts); absent when base's tree cannot be read. */
  imports?: ImportsReading;
  /** Migrations the change adds or edits in other folders its scripts run node-pg-migrate on (other-dirs.ts). */
  unchecked?: readonly Problem[];
  /** Whether the project's scripts apply migrations.dir in one transaction (deploy-settings.ts). */
  transaction?: DeployTransaction;
  /** A hash of what base's `.env` gives its migrations (dotenvHash); absent when it gives nothing. */
  dotenv?: string;
}

/** Base's imported files, and each one's sha256 on the change's side (null: gone; absent: not read). */
export interface ImportsReading {
  base: ImportedFile[];
  head?: Record<string, string | null>;
}

/** What base's migrations import, read from base's tree, and the same files on the change's side. */
async function readImports(
  request: Pick<CheckRequest, 'base' | 'head' | 'workspace' | 'config'>,
  sets: CheckPlan['sets'],
  git: Pick<GitRepo, 'filesAt'> | undefined,
): Promise<ImportsReading | undefined> {
  const readBase = treeReader(request.base.tree, git);
  if (!readBase) return undefined;
  // The workspace's own packages (`@acme/shared`), where its install links them: followed as files of the tree.
  const workspace = await workspacePackages(
    await migrationsPackage(request.workspace, request.config.migrations.dir),
  ).catch(() => new Map<string, string>());
  const base = await importedFiles(
    sets.base,
    readBase,
    new Set([...sets.base, ...sets.head].map((m) => m.file)),
    workspace,
  );
  const readHead = treeReader(request.head.tree, git);
  if (!readHead || base.length === 0) return { base };
  const head: Record<string, string | null> = {};
  for (const f of base) {
    const content = await readHead(f.file).catch(() => undefined);
    head[f.file] = content === undefined ? null : sha256Normalized(content);
  }
  return { base, head };
}

/**
 * A hash of what base's `.env` gives its migrations, read from base's tree as the baseline's apply
 * loads it (migrations/dotenv.ts): the file the packages name, found in base's own tree where it is
 * a folder, else in the workspace.
 */
async function readBaseDotenv(
  request: Pick<CheckRequest, 'base' | 'workspace' | 'config'>,
  git: Pick<GitRepo, 'filesAt'> | undefined,
): Promise<string | undefined> {
  const read = treeReader(request.base.tree, git);
  if (!read) return undefined;
  const dir = request.base.settings?.migrationsDir ?? trustedConfig(request.config, request.base).config.migrations.dir;
  const root = request.base.tree?.kind === 'dir' ? request.base.tree.dir : request.workspace;
  return dotenvHash(root, dir, read);
}

const failed = (x: unknown): x is { error: unknown } => typeof x === 'object' && x !== null && 'error' in x;

/** Read what the plan depends on, then decide it. Reads no database and starts no server. */
export async function planCheck(
  request: CheckRequest,
  ports: { migrations: Pick<MigrationRunner, 'resolveEngine'>; log?: Log; git?: Pick<GitRepo, 'filesAt'> },
): Promise<CheckPlan> {
  const { log } = ports;
  // Which files are migrations is the base's to say (migrations.ignorePattern), as in decidePlan.
  const sets = migrationSets({ ...request, config: trustedConfig(request.config, request.base).config });
  const say = (line: string) => log?.info(line);
  const engine = await (async (): Promise<PlanReadings['engine']> => {
    try {
      // The project's own node-pg-migrate when it has one: what its deploy applies.
      // In a monorepo, that of the package owning migrations.dir (migrationsPackage).
      const migrationsDir = request.config.migrations.dir;
      const resolved = await ports.migrations.resolveEngine(request.workspace, {
        migrationsDir,
        env: request.env,
        log: say,
      });
      const ts = await prepareTypeScript(
        resolved,
        request.workspace,
        [...sets.base, ...sets.head].map((m) => m.file),
        { migrationsDir, env: request.env, log: say },
      );
      ts.dispose(); // the loader is registered where the migrations run, never here
      // The baseline's child runs as the admin: none of the packages the change commits.
      await refuseChangedModules(request, ts.engine, sets.base);
      return { engine: ts.engine, loader: ts.loader, ...(ts.paths ? { paths: ts.paths } : {}) };
    } catch (error) {
      return { error };
    }
  })();
  const seed = request.config.database.seed;
  let baseSeed: PlanReadings['baseSeed'];
  if (request.base.seed !== undefined) baseSeed = request.base.seed;
  else if (seed?.kind === 'file') baseSeed = await readSeed(request.workspace, seed.path).catch((error) => ({ error }));
  // Advice only: scripts that cannot be read say nothing.
  // As the node-pg-migrate that applies reads the scripts' --config-file (6 and 7: its top-level keys).
  const engineVersion = failed(engine) ? undefined : engine.engine.version;
  const deploy = await deploySettings(
    request.workspace,
    trustedConfig(request.config, request.base).config.migrations,
    engineVersion,
  ).catch(() => []);
  const transaction = await deployTransaction(
    request.workspace,
    trustedConfig(request.config, request.base).config.migrations,
    engineVersion,
  ).catch(() => undefined);
  // Advice too: migrations the change adds in another folder its scripts run node-pg-migrate on.
  const unchecked = await uncheckedMigrationDirs(
    request,
    trustedConfig(request.config, request.base).config.migrations,
    ports.git,
  ).catch(() => []);
  // Advice and the baseline's name: a tree that cannot be read names the baseline by its migrations alone.
  const imports = await readImports(request, sets, ports.git).catch(() => undefined);
  // The baseline's name too: a .env changed on base builds a new one.
  const dotenv = await readBaseDotenv(request, ports.git).catch(() => undefined);
  const plan = await decidePlan(request, sets, {
    engine,
    baseSeed,
    deploy,
    unchecked,
    ...(transaction ? { transaction } : {}),
    ...(imports ? { imports } : {}),
    ...(dotenv ? { dotenv } : {}),
  });
  if (plan.ignoredSettings) say(`Configuration: ${plan.ignoredSettings}.`);
  return plan;
}

export function migrationSets(request: Pick<CheckRequest, 'base' | 'head' | 'config'>): CheckPlan['sets'] {
  const ignorePattern = request.config.migrations.ignorePattern;
  return {
    base: migrationSetFromEntries(request.base.migrations, ignorePattern),
    head: migrationSetFromEntries(request.head.migrations, ignorePattern),
  };
}

/** The plan from the request and what was read: no I/O. */
export async function decidePlan(asked: CheckRequest, sets: CheckPlan['sets'], read: PlanReadings): Promise<CheckPlan> {
  // What decides the verdict is the base's (a pull request cannot turn its own gate green).
  const trusted = trustedConfig(asked.config, asked.base);
  const request = { ...asked, config: trusted.config };
  const engineVersion = failed(read.engine) ? undefined : read.engine.engine.version;
  const migrations = withDeploySettings(
    withLeftBehind(
      planMigrations(sets.base, sets.head, {
        checkOrder: request.config.migrations.checkOrder,
        ignorePattern: request.config.migrations.ignorePattern,
        // 6–8 order names differently from 9: the plan orders them as the engine that applies them.
        ...(engineVersion === undefined ? {} : { engineVersion }),
      }),
      request,
      sets,
    ),
    read.deploy ?? [],
    request.configSource ?? DEFAULT_CONFIG_FILE,
  );
  const changedImports = importedCodeChanged(read.imports);
  if (changedImports.length > 0) migrations.warnings = [...migrations.warnings, ...changedImports];
  if (read.unchecked?.length) migrations.warnings = [...migrations.warnings, ...read.unchecked];
  const branches = runBranches(prBranchName(request.pr, request.head.sha));
  const engine = failed(read.engine) ? null : read.engine;
  const baseSeed = failed(read.baseSeed) ? undefined : read.baseSeed;
  const blocked: PlanBlock | null = failed(read.engine)
    ? { stage: 'baseline', reason: 'engine', error: read.engine.error }
    : failed(read.baseSeed)
      ? { stage: 'baseline', reason: 'seed', error: read.baseSeed.error }
      : null;
  return {
    request,
    ignoredSettings: ignoredNote(trusted.ignored, request.base),
    sets,
    migrations,
    ok: migrations.ok,
    newMigrations: migrations.newMigrations.map((m) => m.name),
    engine,
    baseSeed,
    // Seed text given: baselineName reads nothing.
    baseline:
      blocked || !engine
        ? null
        : await baselineName({
            config: request.config,
            workspace: request.workspace,
            base: sets.base,
            rebuild: request.rebuildBaseline === true,
            baseSeed: baseSeed ?? null,
            engine: engine.engine,
            imports: read.imports?.base ?? [],
            ...(read.dotenv ? { dotenv: read.dotenv } : {}),
          }),
    branches,
    temporaryBranches: [branches.reversibility, branches.suite],
    blocked,
    ...(read.transaction ? { transaction: read.transaction } : {}),
  };
}

/** The plan with the change's migrations left in the base's folder (CheckSide.leftBehind) as problems. */
function withLeftBehind(
  plan: MigrationPlan,
  request: Pick<CheckRequest, 'head' | 'config'>,
  sets: CheckPlan['sets'],
): MigrationPlan {
  const left = request.head.leftBehind;
  if (!left) return plan;
  const ignorePattern = request.config.migrations.ignorePattern;
  const extra = outsideMigrationsDir(
    left.baseMigrations ? migrationSetFromEntries(left.baseMigrations, ignorePattern) : sets.base,
    migrationSetFromEntries(left.migrations, ignorePattern),
    {
      dir: request.config.migrations.dir,
      baseDir: left.baseDir,
    },
  );
  if (extra.length === 0) return plan;
  return {
    ok: false,
    problems: [...(plan.ok ? [] : plan.problems), ...extra],
    newMigrations: plan.newMigrations,
    warnings: plan.warnings,
  };
}

/** Files base's migrations import that the change edits or deletes, as warnings. */
function importedCodeChanged(imports: ImportsReading | undefined): Problem[] {
  const head = imports?.head;
  if (!head) return [];
  return imports.base.flatMap((f): Problem[] => {
    const now = head[f.file];
    if (now === undefined || now === f.sha256) return [];
    // A down's SQL is read at a rollback, with the file as it is then: its edit leaves no database behind.
    if (f.read && now !== null && isDownSql(f.file)) return [];
    return [
      {
        kind: 'imported-code-changed',
        file: f.file,
        change: now === null ? 'deleted' : 'edited',
        importedBy: f.importedBy,
        ...(f.read ? { read: true as const } : {}),
      },
    ];
  });
}

/** The plan with the deploy's settings the check does not apply with as warnings. */
function withDeploySettings(plan: MigrationPlan, deploy: readonly DeploySetting[], configFile: string): MigrationPlan {
  if (deploy.length === 0) return plan;
  return {
    ...plan,
    warnings: [...plan.warnings, ...deploy.map((d): Problem => ({ kind: 'deploy-setting', ...d, configFile }))],
  };
}

/** The plan as `consort check --dry-run --json` prints it (docs/cli.md). */
export interface CheckPlanJson {
  ok: boolean;
  newMigrations: string[];
  problems: Problem[];
  warnings: Problem[];
  base: { ref: string; sha: string | null };
  head: { ref: string; sha: string | null };
  pr: number | null;
  engine: {
    version: string;
    source: MigrationEngine['source'];
    typescript?: TypeScriptLoader;
    pathAliases?: PathAliasLoader;
  } | null;
  seed: 'none' | 'command' | 'file' | 'file absent on base';
  baseline: string | null;
  rebuildBaseline: boolean;
  branch: string;
  temporaryBranches: string[];
  blocked: { stage: 'baseline'; reason: PlanBlock['reason']; message: string; hint?: string } | null;
}

export function checkPlanJson(plan: CheckPlan): CheckPlanJson {
  const { request } = plan;
  const seed = request.config.database.seed;
  const e = plan.blocked?.error;
  return {
    ok: plan.ok,
    newMigrations: plan.newMigrations,
    problems: plan.migrations.ok ? [] : plan.migrations.problems,
    warnings: plan.migrations.warnings,
    base: { ref: request.base.ref, sha: request.base.sha },
    head: { ref: request.head.ref, sha: request.head.sha },
    pr: request.pr,
    engine: plan.engine
      ? {
          version: plan.engine.engine.version,
          source: plan.engine.engine.source,
          ...(plan.engine.loader ? { typescript: plan.engine.loader } : {}),
          ...(plan.engine.paths ? { pathAliases: plan.engine.paths } : {}),
        }
      : null,
    seed: !seed
      ? 'none'
      : seed.kind === 'command'
        ? 'command'
        : plan.baseSeed === null
          ? 'file absent on base'
          : 'file',
    baseline: plan.baseline,
    rebuildBaseline: request.rebuildBaseline === true,
    branch: plan.branches.branch,
    temporaryBranches: plan.temporaryBranches,
    blocked: plan.blocked
      ? {
          stage: plan.blocked.stage,
          reason: plan.blocked.reason,
          message: e instanceof Error ? e.message : String(e),
          ...(isConsortError(e) && e.hint ? { hint: e.hint } : {}),
        }
      : null,
  };
}
