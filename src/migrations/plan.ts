/**
 * The pure migration plan for a pull request: which migrations are new, and whether the head's
 * migrations can be applied on top of the base's at all. Migrations are matched by name, because
 * that is what node-pg-migrate records in its table; content is compared by normalized hash.
 */
import path from 'node:path';
import { escapeRegExp } from '../core/regexp.js';
import {
  collateNames,
  compareMigrationFileNames,
  DEFAULT_IGNORE_PATTERN,
  orderKeyOf,
  type MigrationFile,
} from './files.js';

export type Problem =
  /** A new migration sorts before the newest one on base: node-pg-migrate's checkOrder would reject it once base's are applied. */
  | {
      kind: 'order-conflict';
      file: string;
      name: string;
      newestOnBase: string;
      suggestedName: string;
      suggestedFile: string;
    }
  /** A migration that already ran wherever base is deployed was changed or removed; databases would no longer match the files. */
  | { kind: 'history-rewritten'; file: string; name: string; change: 'edited' | 'deleted' }
  /**
   * A new migration has the same order value as another one, so their order depends on the rest of
   * the name. A warning when node-pg-migrate's name comparison orders them (after everything on
   * base); a problem when it cannot tell the names apart, so the order is the directory listing's.
   */
  | {
      kind: 'duplicate-prefix';
      file: string;
      name: string;
      conflictsWith: string;
      suggestedName: string;
      suggestedFile: string;
    }
  /** node-pg-migrate cannot load this file at all: no numeric prefix, an invalid 17-digit timestamp, or not a migration type. */
  | { kind: 'invalid-name'; file: string; name: string; reason: string }
  /**
   * The project's scripts run node-pg-migrate on migrations.dir with a setting the check does not
   * apply with (deploy-settings.ts): a warning only, naming the key to set.
   */
  | {
      kind: 'deploy-setting';
      file: string;
      manifest: string;
      script: string;
      setting: string;
      deploy: string;
      configured: string | null;
      how: string;
      /** The configuration file to set it in: the one the check read, else `.github/consort.yml`. */
      configFile: string;
    }
  /**
   * A warning: a file of the project base's migrations import (`importedBy`, directly or through
   * other files) is edited or deleted by the change, so base's migrations run from scratch at the
   * change would not do what they did where base is deployed (imported-code.ts).
   */
  | {
      kind: 'imported-code-changed';
      file: string;
      change: 'edited' | 'deleted';
      importedBy: string[];
      /** true: they read the file (its SQL) by a path from their folder, and import it nowhere. */
      read?: true;
    }
  /**
   * The change points `migrations.dir` at another folder (`dir`) but also adds or edits a migration
   * in the folder the base applies migrations from (`baseDir`): whatever deploys from that folder
   * would run it, and the check, reading the change's folder, never does.
   */
  | {
      kind: 'outside-migrations-dir';
      file: string;
      name: string;
      dir: string;
      baseDir: string;
      change: 'added' | 'edited';
    }
  /**
   * A warning: the change adds or edits a migration in another folder the project's scripts run
   * node-pg-migrate on (`dir`, by `script` of `manifest`); the check applies `migrationsDir` alone
   * and never ran it (lanes/check/other-dirs.ts).
   */
  | {
      kind: 'unchecked-migrations-dir';
      file: string;
      name: string;
      dir: string;
      migrationsDir: string;
      manifest: string;
      script: string;
      change: 'added' | 'edited' | 'deleted';
    };

/**
 * `warnings`: order conflicts when the project deploys with `--no-check-order` (migrations.checkOrder:
 * false), and duplicate prefixes node-pg-migrate orders by the rest of the name.
 */
export type MigrationPlan =
  | { ok: true; newMigrations: MigrationFile[]; unchanged: number; warnings: Problem[] }
  | { ok: false; problems: Problem[]; newMigrations: MigrationFile[]; warnings: Problem[] };

export interface PlanOptions {
  /** node-pg-migrate's checkOrder as the project deploys with it (default true). */
  checkOrder?: boolean;
  /**
   * The node-pg-migrate that applies the migrations (default: 9's ordering). 6–8 read a file's
   * order number from the text before its first `_` only (legacyOrderKey).
   */
  engineVersion?: string;
  /** `migrations.ignorePattern` as configured: a suggested one for files that are not migrations extends it. */
  ignorePattern?: string;
}

/** Whether this node-pg-migrate reads the order number only before the first `_` (6–8; 9 reads the leading digits). */
export function readsPrefixBeforeUnderscore(engineVersion: string | undefined): boolean {
  const major = Number(/^(\d+)\./.exec(engineVersion ?? '')?.[1]);
  return Number.isInteger(major) && major < 9;
}

/**
 * node-pg-migrate 6–8's order value for a file name (their `getNumericPrefix`/`getTimestamp`): the
 * text before the first `_`, read as 9 reads a prefix when it is all digits, else 0 (after logging
 * "Can't determine timestamp"). `0007-pins.js` is 0 there, ordered before every numbered migration.
 * 7–8 read the file name, 6 the migration's name (without its extension): `0007.js` is 0 on 7, 7 on 6.
 */
export function legacyOrderKey(fileName: string, engineVersion?: string): number | null {
  const read = /^6\./.test(engineVersion ?? '')
    ? path.posix.basename(fileName, path.posix.extname(fileName))
    : fileName;
  const before = read.split('_')[0] ?? '';
  return /^\d+$/.test(before) ? orderKeyOf(before).orderKey : 0;
}

/** Whether node-pg-migrate would take the file for a migration it cannot load or order: a README, a helper. */
export const notAMigration = (m: MigrationFile): boolean => m.kind === 'other' || m.prefix === null;

/**
 * The `migrations.ignorePattern` that keeps skipping what it skips now (by default, names starting
 * with a dot) and also skips these files, each name matched whole.
 */
export function ignorePatternFor(files: readonly string[], current: string = DEFAULT_IGNORE_PATTERN): string {
  const names = [...new Set(files.map((f) => escapeRegExp(path.posix.basename(f))))];
  return [current, ...names].join('|');
}

function invalidReason(m: MigrationFile, ignoreAll: string): string | undefined {
  const base = path.posix.basename(m.file);
  // A line break hides the file from the SQL capture (and so from lint); a quote breaks
  // node-pg-migrate's INSERT of the name into its table after the migration ran.
  if (/[\r\n]/.test(base))
    return 'its name holds a line break, which node-pg-migrate records verbatim and Consort cannot lint or report reliably; rename it';
  if (base.includes("'"))
    return "its name holds a ', which breaks node-pg-migrate's insert of the name into its migrations table; rename it";
  // Not meant as a migration at all (a README, a helper): the project's deploy skips it with an ignorePattern.
  const notOne = ` (if it is not a migration, set migrations.ignorePattern: '${ignoreAll}' in the Consort configuration, or to the --ignore-pattern your deploy passes)`;
  if (m.kind === 'other')
    return `it is not a migration file node-pg-migrate can load (.sql, .js, .cjs, .mjs, .ts, .cts or .mts)${notOne}`;
  if (m.prefix === null) return `its name does not start with the number node-pg-migrate orders migrations by${notOne}`;
  if (m.orderKey === null) return `its 17-digit prefix ${m.prefix} is not a valid UTC timestamp (YYYYMMDDHHmmssSSS)`;
  if (!Number.isSafeInteger(m.orderKey))
    return `its prefix ${m.prefix} is too large for node-pg-migrate to order exactly`;
  return undefined;
}

function utcPrefix(value: number): string {
  return new Date(value).toISOString().replace(/\D/g, '');
}

/** Format an order value the way the file already writes its prefix: a 17-digit UTC timestamp, or zero-padded to the same width. */
export function formatPrefix(value: number, like: string): string {
  if (like.length === 17) return utcPrefix(value);
  return String(value).padStart(like.length, '0');
}

/**
 * The file name with its numeric prefix replaced, everything after the prefix kept as written;
 * `underscore`: with `_` after the number (a `-` or space there replaced), as node-pg-migrate 6–8 need.
 */
export function renameWithPrefix(
  m: MigrationFile,
  value: number,
  underscore = false,
): { suggestedName: string; suggestedFile: string } {
  const base = path.posix.basename(m.file);
  const prefix = m.prefix ?? '';
  let rest = base.slice(prefix.length);
  if (underscore && !rest.startsWith('_')) rest = `_${rest.replace(/^[- ]/, '')}`;
  const suggestedName = formatPrefix(value, prefix) + rest;
  const dir = path.posix.dirname(m.file);
  return { suggestedName, suggestedFile: dir === '.' ? suggestedName : `${dir}/${suggestedName}` };
}

/** Hands out the smallest order value above `after` that no head migration uses (and records it as used). */
function allocator(taken: Set<number>): (after: number) => number {
  return (after) => {
    let next = after + 1;
    while (taken.has(next)) next += 1;
    taken.add(next);
    return next;
  };
}

function byNodeOrder(a: MigrationFile, b: MigrationFile): number {
  return compareMigrationFileNames(path.posix.basename(a.file), path.posix.basename(b.file));
}

export function planMigrations(
  base: readonly MigrationFile[],
  head: readonly MigrationFile[],
  options: PlanOptions = {},
): MigrationPlan {
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  const headByName = new Map(head.map((m) => [m.name, m]));
  const baseNames = new Set(base.map((m) => m.name));
  let unchanged = 0;

  for (const b of base) {
    const h = headByName.get(b.name);
    if (h === undefined) problems.push({ kind: 'history-rewritten', file: b.file, name: b.name, change: 'deleted' });
    else if (h.sha256 !== b.sha256)
      problems.push({ kind: 'history-rewritten', file: h.file, name: h.name, change: 'edited' });
    else unchanged += 1;
  }

  const newMigrations = head.filter((m) => !baseNames.has(m.name)).sort(byNodeOrder);
  const valid: { m: MigrationFile; key: number }[] = [];
  // One pattern for all of them, so whichever file's reason the user reads, its value fixes every one.
  const ignoreAll = ignorePatternFor(
    newMigrations.filter(notAMigration).map((m) => m.file),
    options.ignorePattern,
  );
  for (const m of newMigrations) {
    const reason = invalidReason(m, ignoreAll);
    if (reason === undefined && m.orderKey !== null) valid.push({ m, key: m.orderKey });
    else problems.push({ kind: 'invalid-name', file: m.file, name: m.name, reason: reason ?? 'it has no order value' });
  }

  // Base files node-pg-migrate cannot order are base's own problem; they do not move the floor.
  const orderedBase = base.filter((m) => m.orderKey !== null).sort(byNodeOrder);
  const newestOnBase = orderedBase.at(-1);
  const take = allocator(new Set(head.flatMap((m) => (m.orderKey === null ? [] : [m.orderKey]))));

  const keyOwner = new Map<number, MigrationFile>();
  for (const m of orderedBase) if (!keyOwner.has(m.orderKey as number)) keyOwner.set(m.orderKey as number, m);
  // node-pg-migrate 6–8 order by the number before the first `_` (0 when there is none), then by
  // name: a new migration is in order when it sorts after every base migration that way.
  const legacy = readsPrefixBeforeUnderscore(options.engineVersion);
  const legacyKey = (m: MigrationFile): number =>
    legacyOrderKey(path.posix.basename(m.file), options.engineVersion) ?? 0;
  const byLegacyOrder = (a: MigrationFile, b: MigrationFile): number =>
    legacyKey(a) - legacyKey(b) || collateNames(path.posix.basename(a.file), path.posix.basename(b.file));
  const newestLegacy = legacy ? [...orderedBase].sort(byLegacyOrder).at(-1) : undefined;
  for (const { m, key } of valid) {
    const floor = newestOnBase?.orderKey ?? null;
    const sameKey = keyOwner.get(key);
    // node-pg-migrate's checkOrder compares the whole order (value, then name): sharing the newest
    // base value but sorting before that migration is as out of order as a smaller value.
    const beforeNewest =
      !legacy &&
      newestOnBase !== undefined &&
      floor !== null &&
      (key < floor || (key === floor && byNodeOrder(m, newestOnBase) < 0));
    if (newestOnBase !== undefined && floor !== null && beforeNewest) {
      const conflict: Problem = {
        kind: 'order-conflict',
        file: m.file,
        name: m.name,
        newestOnBase: newestOnBase.name,
        ...renameWithPrefix(m, take(floor), legacy),
      };
      (options.checkOrder === false ? warnings : problems).push(conflict);
    } else if (newestLegacy !== undefined && byLegacyOrder(m, newestLegacy) < 0) {
      // Where base orders by name alone (no `_` after its numbers), the next number in the same
      // style; else with `_` after its own number where that already sorts after base, or the
      // next free one.
      const legacyFloor = legacyKey(newestLegacy);
      const byName = legacyFloor === 0 && legacyKey(m) === 0 && floor !== null;
      const keep = !byName && key > legacyFloor && sameKey === undefined;
      const value = byName ? take(Math.max(floor, key)) : keep ? key : take(Math.max(key, legacyFloor));
      const conflict: Problem = {
        kind: 'order-conflict',
        file: m.file,
        name: m.name,
        newestOnBase: newestLegacy.name,
        ...renameWithPrefix(m, value, !byName),
      };
      (options.checkOrder === false ? warnings : problems).push(conflict);
      if (keep) keyOwner.set(key, m);
    } else if (sameKey !== undefined) {
      // Renaming to just after the shared value keeps the file where its author put it relative to the others.
      const duplicate: Problem = {
        kind: 'duplicate-prefix',
        file: m.file,
        name: m.name,
        conflictsWith: sameKey.name,
        ...renameWithPrefix(m, take(key)),
      };
      const ordered = collateNames(path.posix.basename(sameKey.file), path.posix.basename(m.file)) !== 0;
      (ordered ? warnings : problems).push(duplicate);
    } else {
      keyOwner.set(key, m);
    }
  }

  return problems.length === 0
    ? { ok: true, newMigrations, unchanged, warnings }
    : { ok: false, problems, newMigrations, warnings };
}

/**
 * The migrations a change adds or edits in the base's migrations folder while its own
 * configuration reads another one (`migrations.dir` moved): `leftBehind` is the change's files in
 * the base's folder, `base` the base's files there. A real move leaves nothing (or the same files)
 * behind; a folder of copies beside a new migration in the deployed folder does not.
 */
export function outsideMigrationsDir(
  base: readonly MigrationFile[],
  leftBehind: readonly MigrationFile[],
  dirs: { dir: string; baseDir: string },
): Problem[] {
  const baseByFile = new Map(base.map((m) => [m.file, m]));
  return leftBehind.flatMap((m): Problem[] => {
    const b = baseByFile.get(m.file);
    if (b !== undefined && b.sha256 === m.sha256) return [];
    return [{ kind: 'outside-migrations-dir', file: m.file, name: m.name, ...dirs, change: b ? 'edited' : 'added' }];
  });
}

/** Why a plan warning is not a problem, for its heading. */
export function planWarningReason(p: { kind: string }): string {
  if (p.kind === 'deploy-setting') return 'the check did not apply with it';
  if (p.kind === 'imported-code-changed') return 'the check applies base as base deployed it';
  if (p.kind === 'unchecked-migrations-dir') return 'the check applies migrations.dir alone';
  return p.kind === 'order-conflict' ? 'migrations.checkOrder is false' : 'node-pg-migrate orders them by name';
}
