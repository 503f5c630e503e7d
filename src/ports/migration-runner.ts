/**
 * What the lanes do with migrations: apply a directory's migrations to a branch (up or down, all or
 * named ones), keep one runner for a run's many steps, and resolve which node-pg-migrate the
 * project deploys with. The adapter is src/migrations/runner.ts (nodePgMigrate): node-pg-migrate's
 * own runner, in a child process with the allow-listed basics whenever the migrations or the engine
 * are the repository's code (src/migrations/isolated.ts). Reading migration files and planning them
 * are pure and stay in src/migrations/ (files.ts, plan.ts).
 */
import type { MigrationEngine, ResolveEngineOptions } from '../migrations/engine.js';
import type { MigrationFile } from '../migrations/files.js';

/**
 * Where node-pg-migrate runs the migrations and records them: its `migrationsTable`, `schema`,
 * `createSchema`, `migrationsSchema` and `createMigrationsSchema` options, with its meanings (the
 * project's `migrations.*` configuration, see src/migrations/placement.ts).
 */
export interface MigrationPlacement {
  migrationsTable: string;
  /** The search_path while migrating (`--schema`); unset: the connection's own (public). */
  schema?: readonly string[];
  /** CREATE SCHEMA IF NOT EXISTS each of `schema` first (`--create-schema`). */
  createSchema?: boolean;
  /** The schema of `migrationsTable` (`--migrations-schema`); unset: the first of `schema`, else public. */
  migrationsSchema?: string;
  /** CREATE SCHEMA IF NOT EXISTS `migrationsSchema` first, when it is set (`--create-migrations-schema`). */
  createMigrationsSchema?: boolean;
  /** Builder names turned into snake_case (`--decamelize`), as the project deploys (`migrations.decamelize`). */
  decamelize?: boolean;
  /** node-pg-migrate's ignorePattern, as the project deploys (`migrations.ignorePattern`; default: dotfiles). */
  ignorePattern?: string;
}

export interface ApplyOptions extends MigrationPlacement {
  databaseUrl: string;
  dir: string;
  direction: 'up' | 'down';
  /** How many to run (node-pg-migrate's default: all pending up, one down). Not with `onlyNames`. */
  count?: number;
  /** Run exactly these migrations, one node-pg-migrate run each, in the order given. */
  onlyNames?: readonly string[];
  /**
   * Default false: each migration commits on its own, so after a failure the earlier migrations stay
   * applied and the report can say precisely which ones ran; a migration that opts out of
   * transactions (`pgm.noTransaction()`, e.g. CREATE INDEX CONCURRENTLY) runs as written instead of
   * node-pg-migrate breaking a shared transaction around it.
   */
  singleTransaction?: boolean;
  /** Base for the `file` paths reported (default: the working directory). */
  relativeTo?: string;
  /** node-pg-migrate's checkOrder, as the project deploys (default true; false for `--no-check-order`). */
  checkOrder?: boolean;
  /** Which node-pg-migrate runs (default: the bundled one); see resolveEngine. */
  engine?: MigrationEngine;
  /**
   * Variables the migration code sees besides the allow-listed basics (build them with migrationEnv):
   * what the project's modules read when a migration imports them. Only where the code runs in a
   * child process, which starts with them.
   */
  env?: Readonly<Record<string, string>>;
}

export interface MigrationError {
  message: string;
  /** The SQLSTATE when Postgres rejected a statement. */
  code?: string;
  /** 1-based character offset into `statement`, as Postgres reports it. */
  position?: number;
  /** 1-based line in the migration file, when the statement text can be found in it. */
  line?: number;
  detail?: string;
  hint?: string;
}

export type ApplyFailure =
  /**
   * Postgres rejected a statement the migration sent. `sent`: what the migration sent until then,
   * the failing statement last, and whether inside a transaction (lint reads a JS/TS migration's
   * SQL from it, as from an applied one's).
   */
  | {
      kind: 'statement';
      name: string;
      file: string;
      statement: string;
      error: MigrationError;
      sent?: { sql: string[]; transactional: boolean };
    }
  /**
   * `script`: the migration's own code threw before sending SQL. `down-unavailable`: down is
   * `false` (or a SQL file has no Down section) or node-pg-migrate cannot infer it. `order`:
   * checkOrder found this not-yet-run migration sorting before one already run.
   */
  | { kind: 'script' | 'down-unavailable' | 'order'; name: string; file: string; error: MigrationError }
  /** node-pg-migrate could not load the directory (a JS syntax error, a file it cannot order, a ran migration's file gone). */
  | { kind: 'load'; name?: string; file?: string; error: MigrationError };

export type ApplyResult =
  | { ok: true; applied: AppliedMigration[]; log: string[] }
  | {
      ok: false;
      failed: ApplyFailure;
      applied: AppliedMigration[];
      log: string[];
      /**
       * Migrations that ran to their end this run but were rolled back with the failure (one
       * transaction for the lot, as node-pg-migrate's CLI runs by default): not applied, yet they
       * sent their SQL, which lint reads.
       */
      rolledBack?: AppliedMigration[];
    };

export interface AppliedMigration {
  name: string;
  file: string;
  /** The statements the migration sent, without node-pg-migrate's BEGIN/COMMIT and bookkeeping. */
  sql: string[];
  durationMs: number;
  /** Whether it ran inside a transaction (false after `pgm.noTransaction()`). */
  transactional: boolean;
}

/**
 * Applies migrations step after step with one child process for the lot (started once, its engine
 * and TypeScript loader loaded once), where `applyMigrations` starts one per call: what the PR lane
 * uses for a side's migrations. SQL alone still runs here. `close` ends the child.
 */
export interface MigrationSession {
  /**
   * `keep`: leave the connection open for the next request on the same URL (reversibility's many
   * steps on one branch), reset to a fresh session's state (`DISCARD ALL`) between requests, until
   * `release` or `close`. A connection kept on a branch stops it from being forked, reset or dropped
   * without ending it: release it first. Requests on different databases run side by side, in the
   * session's child too, where those on one database run one at a time, in the order made. `first`:
   * ahead of the requests waiting without it in the session's child (the check's critical path:
   * reversibility's steps). `onRunning`: told the name of each migration as it starts (what a time
   * limit names when it ends the request).
   */
  apply(
    options: ApplyOptions,
    how?: { keep?: boolean; first?: boolean; onRunning?: (name: string) => void },
  ): Promise<ApplyResult>;
  /** Start the child and load `engine` now, in the background, when these files will need it. */
  warm(engine: MigrationEngine | undefined, files: readonly Pick<MigrationFile, 'kind'>[]): void;
  /**
   * Settles once what `warm` started is loaded (Node, the engine, a TypeScript loader: the session's
   * own start-up, not the migrations'); at once when nothing was warmed. Never rejects.
   */
  ready?(): Promise<void>;
  /**
   * Load `dir`'s migration files in the session's child now, in the background, as the engine warmed
   * will load them (a CommonJS node-pg-migrate, 6–7: `require`, TypeScript compiled by the project's
   * loader), so the first `apply` on any branch finds them compiled. Nothing for other engines.
   * Settles when done (never rejects: the apply that loads a broken file reports it). `relativeTo`:
   * the tree `dir` is in, whose `.env` the files see as the apply will (migrations/dotenv.ts).
   */
  preload?(dir: string, relativeTo?: string): Promise<void>;
  /**
   * End the session's child process now, with the requests in it (they reject): for a migration
   * past its time limit that runs no statement to cancel (a promise that never settles, a loop).
   * The next request starts a fresh child. Nothing for SQL alone, which runs in this process.
   */
  stop?(): void;
  /** End the connection kept for `databaseUrl` (every kept one without it); the session stays usable. */
  release?(databaseUrl?: string): Promise<void>;
  close(): Promise<void>;
}

export interface MigrationRunner {
  /**
   * Apply a directory's migrations. A bad migration is a failed ApplyResult; only an unusable
   * database (cannot connect, lock held elsewhere, connection lost) throws.
   */
  apply(options: ApplyOptions): Promise<ApplyResult>;
  /**
   * A session for many steps on one engine (the PR lane's head migrations); `close` it. `env`: as
   * ApplyOptions' `env`, for the session's child (an `env` on a session's apply is not used).
   * `tree`: the folder the session applies migrations from when it is a proof's tree (the TDD
   * lane's): the child sees no other proof's tree.
   */
  open(options?: { env?: Readonly<Record<string, string>>; tree?: string }): MigrationSession;
  /**
   * Which node-pg-migrate the project at `workspace` deploys with (its own, the one its lockfile
   * pins, or the bundled one); in a monorepo, that of the package owning `options.migrationsDir`.
   */
  resolveEngine(workspace: string, options?: ResolveEngineOptions): Promise<MigrationEngine>;
}
