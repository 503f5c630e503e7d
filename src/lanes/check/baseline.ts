/**
 * The baseline: the parent database brought to base's migration state (and seeded), kept and
 * keyed by what it contains, so the next check on the same base forks straight from it. Built
 * with `prepare`, so it only becomes visible once complete and concurrent checks share one build.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ConsortConfig } from '../../config/schema.js';
import { parseDuration } from '../../core/duration.js';
import { ConsortError } from '../../core/errors.js';
import { INSIDE_HINT, resolvedInside } from '../../core/read-regular.js';
import { quoteIdent, withClient } from '../../db/sql.js';
import { parseMigration, type MigrationFile } from '../../migrations/files.js';
import { pathAlias, type PathAlias } from '../../migrations/path-alias.js';
import { ignorePatternFor, notAMigration } from '../../migrations/plan.js';
import type { MigrationEngine } from '../../migrations/engine.js';
import {
  hasSchemaSettings,
  migrationPlacement,
  migrationsTableSchema,
  migrationsTableSql,
  type MigrationPlacement,
} from '../../migrations/placement.js';
import { childEnv, migrationEnv } from '../../core/child-env.js';
import type { BranchProvider } from '../../ports/branch-provider.js';
import type { Log } from '../../ports/log.js';
import type { ApplyFailure, ApplyOptions, ApplyResult, MigrationRunner } from '../../ports/migration-runner.js';
import type { ProcessRunner } from '../../ports/process.js';
import { branchEnv } from '../../suite/pg-env.js';
import { applyBounded, cancelSession, MAX_TIMER_MS, raiseLimit, ranPastLimit } from './time-limit.js';

export const BASELINE_TTL_MS = 7 * 86_400_000;

export interface BaselineInput {
  provider: BranchProvider;
  config: ConsortConfig;
  workspace: string;
  base: readonly MigrationFile[];
  /** The project's files base's migrations import (imported-code.ts): part of the baseline's name. */
  imports?: readonly { file: string; sha256: string }[];
  /**
   * A hash of what base's `.env` gives its migrations (migrations/dotenv.ts' dotenvHash): part of
   * the baseline's name, so a changed `.env` on base builds a new one. Never its values.
   */
  dotenv?: string;
  baseDir: { dir: string; relativeTo: string };
  rebuild: boolean;
  env: NodeJS.ProcessEnv;
  /** Starts the seed command. */
  processes: ProcessRunner;
  /** Applies base's migrations (in a session of their own under `timeout`, where it can open one). */
  migrations: Pick<MigrationRunner, 'apply'> & Partial<Pick<MigrationRunner, 'open'>>;
  /**
   * migrations.timeout from configuration nothing under test controls (the check lane: the base's
   * own; the TDD lane: the run's, or the pull request's base branch's): past it a base migration is
   * ended as a pull request's is (time-limit.ts) and the baseline fails naming it. The seed gets
   * the same limit, counted on its own. Absent: no limit on the migrations, 10 minutes on a seed command.
   */
  timeout?: string;
  /** Where `timeout` is set, as a failure says where to raise it and why it is that one (default: the check lane's, the base branch's). */
  timeoutSource?: LimitSource;
  /**
   * The run's cancel: the base's migrations are ended as a cancelled run ends the PR's (their
   * statements cancelled, then their child; time-limit.ts, endRequests), in their own session; a
   * seed command's process group is killed, a seed file's statement cancelled.
   */
  signal?: AbortSignal;
  /**
   * The seed file as base has it (a PR that adds a table and seeds it must not seed base's
   * schema with it): a string, or null when base has no seed file yet (then nothing is seeded).
   * Undefined: read it from the workspace.
   */
  baseSeed?: string | null;
  /**
   * Where a seed command runs: the base's whole tree where the caller has it (the check lane), so
   * the baseline every later check forks is seeded by the base's code, never by the files of the
   * change that happened to build it. Default: `workspace`.
   */
  seedDir?: string;
  /** The node-pg-migrate to apply base's migrations with (default: the bundled one). */
  engine?: MigrationEngine;
  /** The baseline's name when the caller has it (the check lane's plan); else computed from the rest. */
  name?: string;
}

/** The configuration a baseline's limit is read from: named where a failure says where to raise it. */
export interface LimitSource {
  /** `the base branch's Consort configuration` */
  configuration: string;
  /** Why that one, for the failure's hint (default: the check lane's: a pull request cannot change it). */
  why?: string;
}

const BASE_LIMIT: LimitSource = { configuration: "the base branch's Consort configuration" };

export type BaselineOutcome =
  | {
      ok: true;
      name: string;
      reused: boolean;
      applied: string[];
      seeded: boolean;
      /** The seed ran with the provider's own credentials: it could make no confined role. */
      seededUnconfined?: boolean;
    }
  | { ok: false; kind: 'parent-ahead'; ahead: string[] }
  | {
      ok: false;
      kind: 'failed';
      /** One paragraph for the summary: never a stack trace. */
      message: string;
      /** When one of base's migrations failed: the whole error (its stack included), for JSON and debug output. */
      failure?: BaseMigrationFailure;
      /** A base migration or the seed ran past migrations.timeout (the message says where to raise it). */
      pastLimit?: true;
    };

/** One of base's migrations failing on the parent, as the migrations stage reports a PR's (report's `failure`). */
export interface BaseMigrationFailure {
  name: string;
  file: string;
  statement: string;
  message: string;
  code?: string;
  /** Postgres' DETAIL and HINT, as the migrations stage's failure has them. */
  detail?: string;
  hint?: string;
  line?: number;
}

/** Whether the parent holds any relation of its own (in a schema not Postgres' own). */
async function parentHasObjects(url: string): Promise<boolean> {
  return withClient(url, async (db) => {
    const { rows } = await db.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema') AS found`,
    );
    return rows[0]?.found === true;
  });
}

/** Types that come with an extension, by name: a base that uses one the database was given by hand. */
const EXTENSION_TYPES: Record<string, string> = {
  geometry: 'postgis',
  geography: 'postgis',
  box2d: 'postgis',
  box3d: 'postgis',
  raster: 'postgis_raster',
  vector: 'vector',
  halfvec: 'vector',
  sparsevec: 'vector',
  citext: 'citext',
  hstore: 'hstore',
  ltree: 'ltree',
  lquery: 'ltree',
  cube: 'cube',
  earth: 'earthdistance',
  isbn: 'isn',
  ean13: 'isn',
  seg: 'seg',
};

/** Functions that come with an extension, by name (`uuid_generate_v4()` with uuid-ossp). */
const EXTENSION_FUNCTIONS: Record<string, string> = {
  uuid_generate_v1: 'uuid-ossp',
  uuid_generate_v1mc: 'uuid-ossp',
  uuid_generate_v3: 'uuid-ossp',
  uuid_generate_v4: 'uuid-ossp',
  uuid_generate_v5: 'uuid-ossp',
  uuid_nil: 'uuid-ossp',
  crypt: 'pgcrypto',
  gen_salt: 'pgcrypto',
  gen_random_bytes: 'pgcrypto',
  digest: 'pgcrypto',
  hmac: 'pgcrypto',
  pgp_sym_encrypt: 'pgcrypto',
  pgp_sym_decrypt: 'pgcrypto',
  similarity: 'pg_trgm',
  word_similarity: 'pg_trgm',
  show_trgm: 'pg_trgm',
  unaccent: 'unaccent',
  levenshtein: 'fuzzystrmatch',
  soundex: 'fuzzystrmatch',
  metaphone: 'fuzzystrmatch',
  dmetaphone: 'fuzzystrmatch',
  ll_to_earth: 'earthdistance',
  earth_distance: 'earthdistance',
  moddatetime: 'moddatetime',
};

/** Operator classes and foreign-data wrappers that come with an extension. */
const EXTENSION_OPCLASSES: Record<string, string> = {
  gin_trgm_ops: 'pg_trgm',
  gist_trgm_ops: 'pg_trgm',
  gist_geometry_ops_2d: 'postgis',
};
const EXTENSION_FDWS: Record<string, string> = { postgres_fdw: 'postgres_fdw', file_fdw: 'file_fdw' };

export interface MissingExtension {
  /** What the error says is missing, as the hint names it: `geometry`, `uuid_generate_v4()`. */
  object: string;
  kind: 'type' | 'function' | 'operator class' | 'foreign-data wrapper';
  name: string;
}

/** The extension a missing type (`type "public.geometry" does not exist`) belongs to, if a well-known one. */
export function extensionOfType(message: string): { type: string; name: string } | undefined {
  const type = /type "(?:[^".]+\.)?([^".]+)" does not exist/.exec(message)?.[1]?.toLowerCase();
  const name = type === undefined ? undefined : EXTENSION_TYPES[type];
  return type !== undefined && name !== undefined ? { type, name } : undefined;
}

/**
 * The well-known extension a missing object belongs to: a type (42704), a function such as
 * `uuid_generate_v4()` (42883, `function uuid_generate_v4() does not exist`), an operator class
 * (`gin_trgm_ops`) or a foreign-data wrapper (`postgres_fdw`), all of which a database that was
 * given the extension by hand has.
 */
export function extensionOfMissing(code: string | undefined, message: string): MissingExtension | undefined {
  if (code === '42883') {
    const fn = /function (?:"?[^".(\s]+"?\.)?"?([^".(\s]+)"?\(/.exec(message)?.[1]?.toLowerCase();
    const name = fn === undefined ? undefined : EXTENSION_FUNCTIONS[fn];
    return fn !== undefined && name !== undefined ? { object: `${fn}()`, kind: 'function', name } : undefined;
  }
  if (code !== '42704') return undefined;
  const type = extensionOfType(message);
  if (type) return { object: type.type, kind: 'type', name: type.name };
  const opclass = /operator class "([^"]+)" does not exist/.exec(message)?.[1]?.toLowerCase();
  if (opclass !== undefined && EXTENSION_OPCLASSES[opclass] !== undefined)
    return { object: opclass, kind: 'operator class', name: EXTENSION_OPCLASSES[opclass] };
  const fdw = /foreign-data wrapper "([^"]+)" does not exist/.exec(message)?.[1]?.toLowerCase();
  if (fdw !== undefined && EXTENSION_FDWS[fdw] !== undefined)
    return { object: fdw, kind: 'foreign-data wrapper', name: EXTENSION_FDWS[fdw] };
  return undefined;
}

/** An extension's name as CREATE EXTENSION takes it: `"uuid-ossp"` needs its quotes. */
function extensionIdent(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name}"`;
}

/** Where the local provider cannot help: extensions its embedded PostgreSQL does not ship. */
function notEmbedded(name: string): string {
  return ['postgis', 'postgis_raster', 'vector'].includes(name)
    ? " (the local provider's embedded PostgreSQL has no PostGIS or pgvector: use the postgres provider on a server that has them)"
    : '';
}

/**
 * The extension a CREATE EXTENSION could not find on the server: its files are not installed there
 * (`extension "postgis" is not available`, 0A000, PostgreSQL 15+; `could not open extension control
 * file ".../postgis.control"`, 58P01, before). No migration can fix that: the server must have it.
 */
export function unavailableExtension(code: string | undefined, message: string): string | undefined {
  if (code === '0A000') return /^extension "([^"]+)" is not available/.exec(message)?.[1];
  if (code === '58P01')
    return /could not open extension control file "(?:[^"]*\/)?([^"/]+)\.control"/.exec(message)?.[1];
  return undefined;
}

/** Why a server without the extension's files cannot be helped by a migration, and where the check can run instead. */
function notInstalled(name: string, where: string): string {
  return `the ${name} extension is not installed on the server ${where}: CREATE EXTENSION needs its files there, which no migration can add${notEmbedded(name)}`;
}

/**
 * For a pull request's migration that failed on a missing object of a well-known extension, or on
 * an extension the server does not have: what it is and the fix, for the migrations stage's
 * summary; undefined for any other failure.
 */
export function missingExtensionNote(code: string | undefined, message: string): string | undefined {
  const unavailable = unavailableExtension(code, message.split('\n')[0] ?? '');
  if (unavailable !== undefined) return notInstalled(unavailable, 'the branches are on');
  const extension = extensionOfMissing(code, message.split('\n')[0] ?? '');
  if (!extension) return undefined;
  return `${extension.object} is a ${extension.kind} of the ${extension.name} extension, which no migration before it creates: run CREATE EXTENSION IF NOT EXISTS ${extensionIdent(extension.name)} in a migration before it${notEmbedded(extension.name)}`;
}

/**
 * The role a statement named that the server lacks (`role "authenticated" does not exist`, 42704):
 * roles are the server's, not a database's, and the server a project deploys to often has some no
 * migration makes (a platform's — Supabase's anon, authenticated, service_role — or a DBA's). Not
 * `undefined`: that is a setting the migration did not get (unset-setting-note.ts).
 */
export function missingRole(code: string | undefined, message: string): string | undefined {
  if (code !== '42704') return undefined;
  const role = /^role "([^"]+)" does not exist/.exec(message)?.[1];
  return role === undefined || role === 'undefined' ? undefined : role;
}

/** How to make `role` where the check runs and nowhere it already is: a statement for a base migration. */
function createRoleIfMissing(role: string): string {
  const ident = `"${role.replace(/"/g, '""')}"`;
  return `DO $$ BEGIN CREATE ROLE ${ident} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`;
}

/** For a pull request's migration that failed on a role the server lacks: why, and the fix. */
export function missingRoleNote(code: string | undefined, message: string): string | undefined {
  const role = missingRole(code, message.split('\n')[0] ?? '');
  if (role === undefined) return undefined;
  return `a role belongs to the server, not to a database, and no migration before this one creates "${role}": the server you deploy to presumably has it from elsewhere (a platform such as Supabase, or by hand), the one the branches are on does not. Create it where it is missing in a migration on the base branch before this one (${createRoleIfMissing(role)}), which the baseline applies as the admin; a pull request's own migration may create roles only with check.migrationsRole: admin on the base branch`;
}

/**
 * The schema a statement named that the database lacks (`schema "data" does not exist`, 3F000): the
 * database a project deploys to often has one no migration makes (created by hand, by a DBA, or by
 * the deploy's own `--create-schema`), so a history that never creates it fails on a fresh parent.
 */
export function missingSchema(code: string | undefined, message: string): string | undefined {
  if (code !== '3F000') return undefined;
  return /^schema "([^"]+)" does not exist/.exec(message)?.[1];
}

/** A schema's name as CREATE SCHEMA takes it: quoted unless it is a plain lower-case name. */
function schemaIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/** How a deploy that makes the schema itself says so, and the keys that make the check do the same. */
function createSchemaSetting(schema: string): string {
  return `if your deploy runs node-pg-migrate with --schema ${schema} --create-schema, set migrations.schema: ${schema} and migrations.createSchema: true in the Consort configuration of the base branch`;
}

/** For a pull request's migration that failed on a schema the branch lacks: why, and the fixes. */
export function missingSchemaNote(code: string | undefined, message: string): string | undefined {
  const schema = missingSchema(code, message.split('\n')[0] ?? '');
  if (schema === undefined) return undefined;
  return `no migration before this one creates schema "${schema}", and the parent branch has none: the database you deploy to presumably has it from elsewhere (made by hand). Create it in a migration before this one (CREATE SCHEMA IF NOT EXISTS ${schemaIdent(schema)}) or in the parent branch; ${createSchemaSetting(schema)}`;
}

const REBUILD =
  "build the baseline from base alone (`consort check --rebuild-baseline`, the Action's `rebuild-baseline: true`; the App has no such setting)";

/**
 * A module the migrations import by a TypeScript path alias: installing nothing finds it. Node's
 * resolution, which node-pg-migrate loads them with, never reads `paths` (a deploy that registers
 * tsconfig-paths, or passes node-pg-migrate 9 `--tsconfig-paths`, does; the check does neither), so
 * the import that loads everywhere is a relative one.
 */
function aliasHint(specifier: string, alias: PathAlias, message: string, file: string | undefined): string {
  // The file that imports it: the first of Node's require stack (a module the migration imports,
  // itself importing by alias), when it is the project's; else the migration.
  const stacked = /\nRequire stack:\n- ([^\n]+)/.exec(message)?.[1];
  const importer =
    stacked !== undefined && !path.isAbsolute(stacked) && !stacked.split('/').includes('node_modules') ? stacked : file;
  let relative: string | undefined;
  if (alias.target !== undefined && importer !== undefined) {
    const r = path.posix.relative(path.posix.dirname(importer), alias.target);
    relative = r.startsWith('.') ? r : `./${r}`;
  }
  const where =
    importer === undefined || importer === file
      ? 'in the migrations'
      : `in ${importer} (and wherever else the migrations' imports use one)`;
  return (
    `${specifier} is a TypeScript path alias ("${alias.pattern}" in the compilerOptions.paths of ${alias.tsconfig}), not a package: ` +
    `node-pg-migrate loads migrations with Node's module resolution, which does not read tsconfig paths (a deploy that registers tsconfig-paths, or runs node-pg-migrate 9 with --tsconfig-paths, resolves them; the check does so only when every script that runs node-pg-migrate on migrations.dir does, and here none does or they disagree). ` +
    `Import it by a relative path ${where}${relative === undefined ? '' : ` ('${relative}')`}, so they load wherever node-pg-migrate runs them.`
  );
}

/**
 * What to say of a migration that could not be loaded (`message`, Node's error with its require
 * stack; `file`, the migration) because it, or a module it imports, imports by a TypeScript path
 * alias; undefined when the module it could not find is no alias (`aliasOf`: pathAlias on its tree).
 */
export async function pathAliasNote(
  message: string,
  file: string | undefined,
  aliasOf: (specifier: string) => Promise<PathAlias | undefined>,
): Promise<string | undefined> {
  const missing = /Cannot find (?:module|package) '([^']+)'/.exec(message)?.[1];
  const alias = missing === undefined ? undefined : await aliasOf(missing).catch(() => undefined);
  return missing === undefined || alias === undefined ? undefined : aliasHint(missing, alias, message, file);
}

/**
 * What to say when base's migrations do not apply to the parent: a migration that cannot load is
 * a missing install (or a broken file), not a broken parent; a statement is named as the
 * migrations stage names a PR's; rebuilding the baseline is offered only when the parent holds
 * something base's migrations may have met (an empty parent cannot be what breaks them).
 */
export async function baseFailure(
  f: ApplyFailure,
  parent: string,
  rebuilt: boolean,
  parentHasContent: () => Promise<boolean>,
  /** Base's files and the configured ignorePattern: a hint about a file that is no migration names the pattern that skips them all. */
  skip?: { base: readonly MigrationFile[]; ignorePattern?: string | undefined },
  /** Why migrations.timeout is read where it is (LimitSource.why): the hint of a migration it ended. */
  limitWhy?: string,
  /** The TypeScript path alias a module the migrations could not find is, if it is one (pathAlias). */
  aliasOf?: (specifier: string) => Promise<PathAlias | undefined>,
): Promise<{ message: string; hint: string; detail: BaseMigrationFailure }> {
  const full = f.error.message;
  // Node's "Cannot find module" carries its require stack on the lines after: only the first line is shown.
  const firstLine = full.split('\n')[0]!.trim();
  const where = f.file ? `${f.file}${f.error.line ? `:${f.error.line}` : ''}` : f.name;
  const detail: BaseMigrationFailure = {
    name: f.name ?? '',
    file: f.file ?? '',
    statement: f.kind === 'statement' ? f.statement : '',
    message: full,
    ...(f.error.code ? { code: f.error.code } : {}),
    ...(f.error.detail ? { detail: f.error.detail } : {}),
    ...(f.error.hint ? { hint: f.error.hint } : {}),
    ...(f.error.line ? { line: f.error.line } : {}),
  };
  const limitHint =
    limitWhy ??
    `The limit is the base branch's own: a pull request cannot change it for base's migrations, which ran on a copy of "${parent}".`;
  // Ended by the limit before the child said which migration ran (it was still starting, or loading
  // them): not a migration that could not be loaded.
  if (f.kind === 'load' && ranPastLimit(f))
    return {
      message: `${where ? `base's migration ${where}` : "base's migrations"} failed on the parent branch "${parent}": ${firstLine}`,
      hint: limitHint,
      detail,
    };
  if (f.kind === 'load') {
    const missing = /Cannot find (?:module|package) '([^']+)'/.exec(full)?.[1];
    // A file no migration could be (a README, a helper): the deploy skips it with an ignorePattern.
    const named = f.file === undefined ? undefined : parseMigration({ file: f.file, content: '' });
    const unordered = named !== undefined && (named.prefix === null || named.kind === 'other');
    const which = where ? `base's migration ${where}` : "base's migrations";
    const alias = aliasOf === undefined ? undefined : await pathAliasNote(full, f.file, aliasOf);
    if (alias !== undefined) return { message: `${which} could not be loaded: ${firstLine}`, hint: alias, detail };
    return {
      message: `${which} could not be loaded: ${firstLine}`,
      hint: missing
        ? `The migrations import ${missing}, which is not installed: install the project's dependencies before the check (npm ci), so base's and the PR's migrations load as they do when deployed.`
        : unordered
          ? `If that file is not a migration, set migrations.ignorePattern: '${ignorePatternFor(
              [...new Set([f.file!, ...(skip?.base ?? []).filter(notAMigration).map((m) => m.file)])],
              skip?.ignorePattern,
            )}' in the Consort configuration of the base branch (or to the --ignore-pattern your deploy passes node-pg-migrate); if it is one, name it with the number node-pg-migrate orders by.`
          : "Install the project's dependencies before the check (npm ci). If they are installed, the migration or a module it imports threw while loading: a setting it reads from the environment reaches it when you export it where the check runs (in the Action, the workflow's env:), except credential-looking names, libpq's PG* and DATABASE_URL; else fix the migration file on base.",
      detail,
    };
  }
  const which = `base's migration ${where ?? 'a migration'}`;
  const statement = f.kind === 'statement' ? ` in: ${oneLine(f.statement)}` : '';
  const unavailable = unavailableExtension(f.error.code, firstLine);
  if (unavailable !== undefined) {
    return {
      message: `${which} failed on the parent branch "${parent}": ${firstLine}${statement}`,
      hint: `Not a fault of the migration: ${notInstalled(unavailable, `the parent branch "${parent}" is on`)}. Install it on that server, or run the check on a server that has it.`,
      detail,
    };
  }
  const extension = extensionOfMissing(f.error.code, firstLine);
  if (extension) {
    return {
      message: `${which} failed on the parent branch "${parent}": ${firstLine}${statement}`,
      hint: `${extension.object} is a ${extension.kind} of the ${extension.name} extension, which none of base's migrations before it creates (the database you deploy to presumably has it installed). Add a migration before this one that runs CREATE EXTENSION IF NOT EXISTS ${extensionIdent(extension.name)}, or create it in the parent branch "${parent}" before the check; the server must offer it${notEmbedded(extension.name)}.`,
      detail,
    };
  }
  const schema = missingSchema(f.error.code, firstLine);
  if (schema !== undefined) {
    return {
      message: `${which} failed on the parent branch "${parent}": ${firstLine}${statement}`,
      hint: `None of base's migrations before it creates schema "${schema}" (the database you deploy to presumably has it from elsewhere: made by hand, or by a DBA). Add a migration before this one that runs CREATE SCHEMA IF NOT EXISTS ${schemaIdent(schema)}, or create it in the parent branch "${parent}" before the check; ${createSchemaSetting(schema)}.`,
      detail,
    };
  }
  const role = missingRole(f.error.code, firstLine);
  if (role !== undefined) {
    return {
      message: `${which} failed on the parent branch "${parent}": ${firstLine}${statement}`,
      hint: `A role belongs to the server, not to a database, and none of base's migrations before it creates "${role}" (the server you deploy to presumably has it from elsewhere: a platform such as Supabase, or by hand). Add a migration before this one that creates it where it is missing (${createRoleIfMissing(role)}), or create it on the server the parent branch "${parent}" is on before the check.`,
      detail,
    };
  }
  const message = `${which} failed on the parent branch "${parent}": ${firstLine}${statement}`;
  if (ranPastLimit(f))
    return {
      message,
      hint: limitHint,
      detail,
    };
  const fixBase = `fix ${where ?? 'the migration'} on base: the PR cannot be checked on top of a base that does not apply.`;
  if (!rebuilt && (await parentHasContent().catch(() => true)))
    return {
      message,
      hint: `If "${parent}" holds objects base's migrations do not expect (made by hand, or by migrations on no branch), fix the parent or ${REBUILD}; else ${fixBase}`,
      detail,
    };
  return { message, hint: `${fixBase[0]!.toUpperCase()}${fixBase.slice(1)}`, detail };
}

/** A failure and its hint as one summary: the message closed with a full stop where it has none. */
export function withHint(message: string, hint: string | undefined): string {
  if (!hint) return message.trim();
  const said = message.trim();
  return `${/[.!?]$/.test(said) ? said : `${said}.`} ${hint}`;
}

/** A statement on one line, cut to a length a summary can carry. */
function oneLine(statement: string): string {
  const flat = statement.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
}

async function seedIdentity(
  config: ConsortConfig,
  workspace: string,
  baseSeed: string | null | undefined,
): Promise<string> {
  const seed = config.database.seed;
  if (!seed) return 'none';
  if (seed.kind === 'command') return `command:${seed.command}`;
  const sql = baseSeed === undefined ? await readSeed(workspace, seed.path) : baseSeed;
  return sql === null ? 'file:absent-on-base' : `file:${createHash('sha256').update(sql).digest('hex')}`;
}

/** The seed file in the workspace; a `config` ConsortError ("Cannot read the seed file …") when it cannot be read. */
export async function readSeed(workspace: string, file: string): Promise<string> {
  const full = path.join(workspace, file);
  // Its SQL's errors quote it: a link out of the repository (to /proc/self/environ) is not read.
  if (existsSync(full) && resolvedInside(workspace, full) === null)
    throw new ConsortError('config', `Cannot read the seed file ${file}: it leads outside the repository.`, {
      hint: INSIDE_HINT,
    });
  try {
    return await readFile(full, 'utf8');
  } catch (e) {
    throw new ConsortError('config', `Cannot read the seed file ${file}: ${(e as Error).message}`, {
      hint: 'Fix database.seed in the Consort configuration.',
      cause: e,
    });
  }
}

/**
 * The baseline's name: a hash of everything that decides its contents. The same files applied by
 * another node-pg-migrate can give another schema (or fail), so a project's or lockfile's engine
 * is part of it; the bundled one is left out, so baselines made before engines were chosen (and a
 * dry run's plan, which resolves none) keep their names.
 */
export async function baselineName(
  input: Pick<
    BaselineInput,
    'config' | 'workspace' | 'base' | 'rebuild' | 'baseSeed' | 'engine' | 'imports' | 'dotenv'
  >,
): Promise<string> {
  const engine =
    input.engine && input.engine.source !== 'bundled' ? `${input.engine.source}:${input.engine.version}` : undefined;
  const placement = migrationPlacement(input.config.migrations);
  const key = createHash('sha256')
    .update(
      JSON.stringify({
        parent: input.config.database.parent,
        table: input.config.migrations.table,
        // Only when set, so baselines made before these settings existed keep their names.
        ...(hasSchemaSettings(placement) ? { placement } : {}),
        migrations: input.base.map((m) => [m.name, m.sha256]),
        seed: await seedIdentity(input.config, input.workspace, input.baseSeed),
        rebuild: input.rebuild,
        engine,
        // Only when there are any, so baselines of histories that import nothing keep their names.
        ...(input.imports && input.imports.length > 0 ? { imports: input.imports.map((f) => [f.file, f.sha256]) } : {}),
        // What the .env the migrations load gives them (settings a JS migration reads): only when it gives any.
        ...(input.dotenv ? { dotenv: input.dotenv } : {}),
      }),
    )
    .digest('hex');
  return `baseline-${key.slice(0, 12)}`;
}

/** Names of the migrations node-pg-migrate recorded as run in a database (in its table's own schema). */
export async function appliedMigrations(url: string, placement: MigrationPlacement): Promise<string[]> {
  const table = migrationsTableSql(placement);
  return withClient(url, async (db) => {
    const { rows } = await db.query<{ exists: boolean }>('SELECT to_regclass($1) IS NOT NULL AS exists', [table]);
    if (!rows[0]?.exists) return [];
    return (await db.query<{ name: string }>(`SELECT name FROM ${table} ORDER BY run_on, id`)).rows.map((r) => r.name);
  });
}

/**
 * Where the parent records base's migrations when not in the configured table: the node-pg-migrate
 * table (columns id, name, run_on) elsewhere that names the most of them, and how many; undefined
 * when none does. A deploy with its own `--migrations-table` or `--migrations-schema` leaves its
 * record there, and without the same settings the baseline would apply base again on top of it.
 */
export async function recordedElsewhere(
  url: string,
  placement: MigrationPlacement,
  baseNames: ReadonlySet<string>,
): Promise<{ schema: string; table: string; count: number } | undefined> {
  if (baseNames.size === 0) return undefined;
  return withClient(url, async (db) => {
    const { rows } = await db.query<{ schema: string; table: string }>(
      `SELECT n.nspname AS schema, c.relname AS table FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'p') AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
           AND (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = c.oid AND NOT a.attisdropped
                  AND a.attname IN ('id', 'name', 'run_on')) = 3
         ORDER BY 1, 2`,
    );
    let best: { schema: string; table: string; count: number } | undefined;
    for (const { schema, table } of rows) {
      const sql = `${quoteIdent(schema)}.${quoteIdent(table)}`;
      if (sql === migrationsTableSql(placement)) continue;
      const names = await db
        .query<{ name: unknown }>(`SELECT name FROM ${sql}`)
        .then((r) => r.rows.map((x) => String(x.name)))
        .catch(() => [] as string[]);
      const count = names.filter((n) => baseNames.has(n)).length;
      if (count > 0 && (best === undefined || count > best.count)) best = { schema, table, count };
    }
    return best;
  });
}

/** What to say when the parent records base elsewhere: the settings that name that table. */
export function recordedElsewhereMessage(
  found: { schema: string; table: string; count: number },
  placement: MigrationPlacement,
  parent: string,
): string {
  const schema = migrationsTableSchema(placement);
  const settings = [
    ...(found.table !== placement.migrationsTable ? [`migrations.table: ${found.table}`] : []),
    ...(found.schema !== schema ? [`migrations.migrationsSchema: ${found.schema}`] : []),
  ];
  const keys = [
    ...(found.table !== placement.migrationsTable ? ['migrations.table'] : []),
    ...(found.schema !== schema ? ['migrations.migrationsSchema'] : []),
  ];
  return (
    `The parent branch "${parent}" records ${found.count} of base's migrations in ${found.schema}.${found.table}, not in ${schema}.${placement.migrationsTable} (${keys.join(', ')}), ` +
    `so the baseline would apply them again on top of what they made: set ${settings.join(' and ')} in the Consort configuration of the base branch, ` +
    `as your deploy's node-pg-migrate has them (its --migrations-table, --migrations-schema).`
  );
}

/** Empty a forked database: every user schema dropped, `public` recreated (for --rebuild-baseline). */
async function emptyDatabase(url: string): Promise<void> {
  await withClient(url, async (db) => {
    const { rows } = await db.query<{ nspname: string }>(
      "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'",
    );
    for (const { nspname } of rows) await db.query(`DROP SCHEMA ${quoteIdent(nspname)} CASCADE`);
    await db.query('CREATE SCHEMA public');
  });
}

export async function ensureBaseline(input: BaselineInput): Promise<BaselineOutcome> {
  const { provider, config } = input;
  const name = input.name ?? (await baselineName(input));
  const existing = await provider.get(name);
  if (existing && existing.parent === config.database.parent)
    return { ok: true, name, reused: true, applied: [], seeded: false };

  const parentUrl = await provider.connectionUri(config.database.parent);
  const placement = migrationPlacement(config.migrations);
  const parentApplied = await appliedMigrations(parentUrl, placement);
  const baseNames = new Set(input.base.map((m) => m.name));
  const ahead = parentApplied.filter((n) => !baseNames.has(n));
  if (ahead.length > 0 && !input.rebuild) return { ok: false, kind: 'parent-ahead', ahead };
  if (parentApplied.length === 0 && !input.rebuild) {
    const elsewhere = await recordedElsewhere(parentUrl, placement, baseNames);
    if (elsewhere)
      return {
        ok: false,
        kind: 'failed',
        message: recordedElsewhereMessage(elsewhere, placement, config.database.parent),
      };
  }

  let applied: string[] = [];
  let seeded = false;
  let seededUnconfined = false;
  try {
    const { outcome } = await provider.ensure({
      name,
      parent: config.database.parent,
      ttlMs: BASELINE_TTL_MS,
      prepare: async (url, untrusted) => {
        if (input.rebuild) await emptyDatabase(url);
        const result = await applyBase(input, {
          databaseUrl: url,
          dir: input.baseDir.dir,
          relativeTo: input.baseDir.relativeTo,
          direction: 'up',
          ...placement,
          checkOrder: config.migrations.checkOrder,
          ignorePattern: config.migrations.ignorePattern,
          ...(input.engine ? { engine: input.engine } : {}),
          env: migrationEnv(input.env, [config.suite.env], config.suite.passEnv),
        });
        if (!result.ok) {
          const failure = await baseFailure(
            result.failed,
            config.database.parent,
            input.rebuild,
            () => parentHasObjects(parentUrl),
            { base: input.base, ignorePattern: config.migrations.ignorePattern },
            input.timeoutSource?.why,
            // Resolved as the deploy resolves them: a module still not found is no alias to explain.
            input.engine?.tsconfigPaths
              ? undefined
              : (specifier) =>
                  pathAlias(
                    input.baseDir.relativeTo,
                    path.relative(input.baseDir.relativeTo, input.baseDir.dir),
                    specifier,
                  ),
          );
          throw Object.assign(new ConsortError('internal', failure.message, { hint: failure.hint }), {
            baseFailure: failure.detail,
            ...(ranPastLimit(result.failed) ? { pastLimit: true } : {}),
          });
        }
        applied = result.applied.map((m) => m.name);
        // The seed is the project's code: a role confined to the baseline where the provider makes one.
        const seedUrl = config.database.seed && untrusted ? await untrusted() : url;
        seeded = await runSeed(
          config,
          input.seedDir ?? input.workspace,
          seedUrl,
          input.env,
          input.processes,
          input.baseSeed,
          {
            ...(input.timeout !== undefined ? { timeout: input.timeout } : {}),
            ...(input.timeoutSource ? { source: input.timeoutSource } : {}),
            ...(input.signal ? { signal: input.signal } : {}),
          },
        );
        seededUnconfined = seeded && seedUrl === url;
      },
    });
    return {
      ok: true,
      name,
      reused: outcome === 'reused',
      applied,
      seeded,
      ...(seededUnconfined ? { seededUnconfined } : {}),
    };
  } catch (e) {
    if (e instanceof ConsortError && e.code !== 'internal' && e.code !== 'config') throw e;
    const { baseFailure: failure, pastLimit } = e as { baseFailure?: BaseMigrationFailure; pastLimit?: true };
    return {
      ok: false,
      kind: 'failed',
      message: e instanceof ConsortError ? withHint(e.message, e.hint) : String(e),
      ...(failure ? { failure } : {}),
      ...(pastLimit ? { pastLimit } : {}),
    };
  }
}

/** Base's migrations up, under the base's migrations.timeout where one is given, ended by a cancel. */
function applyBase(input: BaselineInput, options: ApplyOptions): Promise<ApplyResult> {
  return applyBounded(input.migrations, options, input.base, {
    ...(input.timeout !== undefined ? { timeout: input.timeout } : {}),
    configuration: (input.timeoutSource ?? BASE_LIMIT).configuration,
    ...(input.signal ? { signal: input.signal } : {}),
    cancelled: "the run was cancelled before base's migrations started",
  });
}

/** Ready copies kept of a baseline: the PR branch's, reversibility's and the suite's. */
export const BASELINE_POOL_SIZE = 3;

/**
 * Give the baseline a warm pool where the provider keeps them, filled in the background: the PR
 * branch, reversibility's throwaway branch and the suite's branch are then renames of ready copies instead of copies
 * made while the check waits, and each handout is refilled while the check goes on. A pool is a
 * cache — it goes with the baseline — so any failure here only means the next creates copy.
 */
export async function warmBaselinePool(provider: BranchProvider, name: string, log: Log): Promise<void> {
  if (!provider.pool || !provider.poolStatus) return;
  try {
    const [pool] = await provider.poolStatus(name);
    if (pool && pool.size >= BASELINE_POOL_SIZE && pool.ready >= BASELINE_POOL_SIZE) return;
    await provider.pool(name, BASELINE_POOL_SIZE, { fill: 'background' });
  } catch (e) {
    log.warn(`  (no warm pool for ${name}: ${(e as Error).message})`);
  }
}

/** What bounds a seed: the baseline's limit (migrations.timeout, where it is set) and the run's cancel. */
export interface SeedLimits {
  timeout?: string;
  source?: LimitSource;
  signal?: AbortSignal;
}

/** A seed command without a limit of the run's: stopped after this long (`consort db`'s templates, pairing). */
const SEED_COMMAND_DEFAULT_MS = 10 * 60_000;

export async function runSeed(
  config: ConsortConfig,
  workspace: string,
  url: string,
  env: NodeJS.ProcessEnv,
  processes: ProcessRunner,
  baseSeed?: string | null,
  limits: SeedLimits = {},
): Promise<boolean> {
  const seed = config.database.seed;
  if (!seed) return false;
  const { timeout, signal } = limits;
  const configuration = (limits.source ?? BASE_LIMIT).configuration;
  // The seed gets the limit its baseline's migrations get, counted on its own.
  const pastLimit = `was still running after migrations.timeout (${timeout}), the limit on building the baseline (its migrations, then its seed), so it was ended. If it needs longer, ${raiseLimit(configuration)}.`;
  if (seed.kind === 'file') {
    const sql = baseSeed === undefined ? await readSeed(workspace, seed.path) : baseSeed;
    if (sql === null) return false;
    const ended = await seedFile(url, sql, timeout, signal).catch((e: Error) => {
      throw new ConsortError('config', `The seed file ${seed.path} failed: ${e.message}`, {
        hint: 'Fix the seed SQL so it runs on the base schema.',
      });
    });
    if (ended === 'limit')
      throw Object.assign(new ConsortError('config', `The seed file ${seed.path} ${pastLimit}`), { pastLimit: true });
    if (ended === 'cancel')
      throw new ConsortError('config', `The seed file ${seed.path} was stopped: the run was cancelled.`);
    return true;
  }
  const result = await processes.run({
    command: seed.command,
    cwd: workspace,
    env: childEnv(branchEnv(url, [config.suite.env]), {
      inherit: env,
      pass: Object.keys(env),
      secrets: config.suite.passEnv,
    }),
    // The repository's code, isolated as the suite is (suite-stage.ts); a cancel or the limit
    // kills its whole process group (src/process/runner.ts).
    isolate: true,
    timeoutMs: timeout === undefined ? SEED_COMMAND_DEFAULT_MS : Math.min(parseDuration(timeout), MAX_TIMER_MS),
    maxOutputBytes: 64 * 1024,
    ...(signal ? { signal } : {}),
  });
  if (result.aborted)
    throw new ConsortError('config', `The seed command \`${seed.command}\` was stopped: the run was cancelled.`);
  if (result.timedOut && timeout !== undefined)
    throw Object.assign(
      new ConsortError('config', `The seed command \`${seed.command}\` ${pastLimit}${tail(result.output)}`),
      { pastLimit: true },
    );
  if (result.exitCode !== 0) {
    throw new ConsortError(
      'config',
      `The seed command \`${seed.command}\` failed (${result.timedOut ? 'timed out' : `exit ${result.exitCode}`}): ${result.output.slice(-500)}`,
      {
        hint: 'Fix database.seed.command so it succeeds on the base schema.',
      },
    );
  }
  return true;
}

/** The end of a seed command's output, for a failure that did not come from it. */
const tail = (output: string): string => (output.trim() ? ` Its output ended: ${output.slice(-500)}` : '');

/**
 * A seed file's SQL on `url`, its statement cancelled past `timeout` or on `signal` (as the role
 * that runs it: time-limit.ts). Resolves to what ended it, if either did.
 */
async function seedFile(
  url: string,
  sql: string,
  timeout: string | undefined,
  signal: AbortSignal | undefined,
): Promise<'limit' | 'cancel' | undefined> {
  return withClient(
    url,
    async (db) => {
      if (signal?.aborted) return 'cancel';
      const pid = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      let ended: 'limit' | 'cancel' | undefined;
      const end = (why: 'limit' | 'cancel') => {
        ended ??= why;
        void cancelSession(url, pid).catch(() => undefined);
      };
      const timer =
        timeout === undefined
          ? undefined
          : setTimeout(() => end('limit'), Math.min(parseDuration(timeout), MAX_TIMER_MS));
      const cancel = () => end('cancel');
      signal?.addEventListener('abort', cancel, { once: true });
      try {
        await db.query(sql);
        return undefined; // one that finished as the limit passed stands
      } catch (e) {
        if (ended !== undefined) return ended;
        throw e;
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', cancel);
      }
    },
    { applicationName: 'consort-seed' },
  );
}
