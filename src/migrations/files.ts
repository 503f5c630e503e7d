/**
 * A migrations directory as node-pg-migrate sees it: every regular file its ignorePattern does not match (by default, those not starting with `.`),
 * named by its file name without the extension (what node-pg-migrate records in its table), and
 * ordered exactly as node-pg-migrate 9 orders them. Parsing is pure so the App can build the same
 * set from files it fetched through the GitHub API; only `readMigrationSet` touches the disk.
 */
import { createHash } from 'node:crypto';
import { readdirSync, type Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConsortError } from '../core/errors.js';
import { readRegularFile, INSIDE_HINT, resolvedInside } from '../core/read-regular.js';
import { configFileToEdit } from '../config/files.js';

export type MigrationKind = 'sql' | 'js' | 'cjs' | 'mjs' | 'ts' | 'cts' | 'mts' | 'other';

/**
 * How a migration can be reversed. `inferred`: a JS/TS migration without a `down` export, which
 * node-pg-migrate reverses by replaying `up` in reverse mode (works for createTable and the like,
 * fails for `pgm.sql`), so only running it tells whether it is reversible.
 */
export type DownStatus = boolean | 'irreversible' | 'inferred';

export interface MigrationFile {
  name: string;
  /** Path relative to the repository (or to `relativeTo`), with `/` separators. */
  file: string;
  kind: MigrationKind;
  content: string;
  /** sha256 of the content with CRLF normalized to LF, so a checkout's line endings do not count as an edit. */
  sha256: string;
  hasDown: DownStatus;
  /** The digits a file name starts with, or null when it has none (node-pg-migrate cannot load it). */
  prefix: string | null;
  /** node-pg-migrate's sort value for the prefix; null when the prefix is missing or not a valid date. */
  orderKey: number | null;
  /** Lines before the text node-pg-migrate sends for the up (down) section of a SQL migration. */
  upSqlLineOffset?: number;
  downSqlLineOffset?: number;
}

export interface MigrationEntry {
  file: string;
  content: string;
}

const KINDS: ReadonlySet<string> = new Set(['sql', 'js', 'cjs', 'mjs', 'ts', 'cts', 'mts']);

/** node-pg-migrate's `getNumericPrefix`: 17 digits are a UTC timestamp (ms), anything else a plain number. */
export function orderKeyOf(fileName: string): { prefix: string | null; orderKey: number | null } {
  const prefix = /^\d+/.exec(fileName)?.[0] ?? null;
  if (prefix === null) return { prefix, orderKey: null };
  if (prefix.length !== 17) return { prefix, orderKey: Number(prefix) };
  const iso = `${prefix.slice(0, 4)}-${prefix.slice(4, 6)}-${prefix.slice(6, 8)}T${prefix.slice(8, 10)}:${prefix.slice(10, 12)}:${prefix.slice(12, 14)}.${prefix.slice(14, 17)}Z`;
  const value = new Date(iso).valueOf();
  return { prefix, orderKey: Number.isNaN(value) ? null : value };
}

/**
 * node-pg-migrate's `compareMigrationFileNames`: by prefix value, then a numeric, punctuation-blind
 * locale comparison. Names node-pg-migrate cannot order (no prefix) go last so they stay visible.
 * Where its comparison says equal (`1_a.sql`, `1-a.sql`) it keeps readdir order; we fall back to
 * code units so a plan does not depend on how a directory or an API listed the files.
 */
export function compareMigrationFileNames(a: string, b: string): number {
  const ka = orderKeyOf(a).orderKey;
  const kb = orderKeyOf(b).orderKey;
  if (ka === null || kb === null) {
    if (ka !== kb) return ka === null ? 1 : -1;
  } else if (ka !== kb) {
    return ka - kb;
  }
  const byLocale = collateNames(a, b);
  return byLocale !== 0 ? byLocale : a < b ? -1 : a > b ? 1 : 0;
}

/**
 * node-pg-migrate's tie-break between names with the same order value. 0 means it cannot tell
 * them apart (`1_a.sql`, `1-a.sql`), so their order is readdir's.
 */
export function collateNames(a: string, b: string): number {
  return a.localeCompare(b, undefined, {
    usage: 'sort',
    numeric: true,
    sensitivity: 'variant',
    ignorePunctuation: true,
  });
}

export function sha256Normalized(content: string): string {
  return createHash('sha256').update(content.replace(/\r\n/g, '\n')).digest('hex');
}

// The exact markers node-pg-migrate's SQL loader looks for (sqlMigration.ts).
const UP_MARKER = /^\s*--[\s-]*up\s+migration/im;
const DOWN_MARKER = /^\s*--[\s-]*down\s+migration/im;
const SQL_IRREVERSIBLE = /^\s*--\s*consort\s*:\s*irreversible\b/im;

function linesBefore(content: string, index: number): number {
  let n = 0;
  for (let i = content.indexOf('\n'); i !== -1 && i < index; i = content.indexOf('\n', i + 1)) n += 1;
  return n;
}

/** True when SQL holds nothing but whitespace and comments (node-pg-migrate's SQL template leaves it so). */
function isBlankSql(sql: string): boolean {
  return (
    sql
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/--[^\n]*/g, '')
      .trim().length === 0
  );
}

/** Splits a SQL migration the way node-pg-migrate does, keeping where each section starts. */
export function parseSqlSections(content: string): {
  up: string;
  upStart: number;
  down: string | undefined;
  downStart: number | undefined;
} {
  const upStart = content.search(UP_MARKER);
  const downStart = content.search(DOWN_MARKER);
  const up = upStart >= 0 ? content.slice(upStart, downStart < upStart ? undefined : downStart) : content;
  const down = downStart >= 0 ? content.slice(downStart, upStart < downStart ? undefined : upStart) : undefined;
  return { up, upStart: Math.max(upStart, 0), down, downStart: downStart >= 0 ? downStart : undefined };
}

function stripJsComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:\\])\/\/[^\n]*/g, '$1');
}

/**
 * A static reading of a JS/TS migration's `down`: the App only has the text, and loading user
 * code just to inspect it would execute it. `down = false` is node-pg-migrate's irreversible marker.
 */
function jsDownStatus(source: string): DownStatus {
  const code = stripJsComments(source);
  // `module.exports = { up, down: false }` / `export default { down() {} }`: look at keys only there.
  const objectExport = /\b(?:module\.exports|export\s+default)\s*=?\s*\{([\s\S]*)\}/.exec(code)?.[1] ?? '';
  if (/\bexports\.down\s*=\s*false\b/.test(code)) return 'irreversible';
  if (/\bexport\s+(?:const|let|var)\s+down\b(?:\s*:[^=]+)?\s*=\s*false\b/.test(code)) return 'irreversible';
  if (/(?:^|[{,\s])down\s*:\s*false\b/.test(objectExport)) return 'irreversible';
  const explicit = [
    /\bexports\.down\s*=/,
    /\bexport\s+(?:async\s+)?function\s*\*?\s*down\b/,
    /\bexport\s+(?:const|let|var)\s+down\b/,
    /\bexport\s*\{[^}]*\bdown\b[^}]*\}/,
  ];
  if (explicit.some((re) => re.test(code))) return true;
  return /(?:^|[{,\s])(?:async\s+)?down\s*(?::|\(|,|\}|$)/m.test(objectExport) ? true : 'inferred';
}

function kindOf(fileName: string): MigrationKind {
  const ext = path.posix.extname(fileName).slice(1).toLowerCase();
  return KINDS.has(ext) ? (ext as MigrationKind) : 'other';
}

export function parseMigration(entry: MigrationEntry): MigrationFile {
  const file = entry.file.replace(/\\/g, '/');
  const base = path.posix.basename(file);
  const name = path.posix.basename(base, path.posix.extname(base));
  const kind = kindOf(base);
  const common = {
    name,
    file,
    kind,
    content: entry.content,
    sha256: sha256Normalized(entry.content),
    ...orderKeyOf(base),
  };
  if (kind !== 'sql') return { ...common, hasDown: kind === 'other' ? false : jsDownStatus(entry.content) };
  const sections = parseSqlSections(entry.content);
  const declared = SQL_IRREVERSIBLE.test(entry.content);
  const hasDown: DownStatus = declared ? 'irreversible' : sections.down !== undefined && !isBlankSql(sections.down);
  return {
    ...common,
    hasDown,
    upSqlLineOffset: linesBefore(entry.content, sections.upStart),
    ...(sections.downStart === undefined ? {} : { downSqlLineOffset: linesBefore(entry.content, sections.downStart) }),
  };
}

/** node-pg-migrate's default ignorePattern: names starting with a dot (`.gitkeep`). */
export const DEFAULT_IGNORE_PATTERN = '\\..*';

/** An ignorePattern that matches no name: every file, for a caller that filters later. */
export const EVERY_FILE = '(?!)';

/**
 * The file names node-pg-migrate skips: those `ignorePattern` matches whole (`migrations.ignorePattern`,
 * its `--ignore-pattern`). node-pg-migrate 6 anchors the pattern as one group, 7+ without one
 * (`a|b` is `^a|b$` there); Consort groups it, and hands the runner the grouped form (runnerIgnorePattern),
 * so what it plans and what node-pg-migrate loads are the same files whatever the version.
 */
export function ignoredNames(ignorePattern: string = DEFAULT_IGNORE_PATTERN): RegExp {
  return new RegExp(`^(?:${ignorePattern})$`);
}

/** The pattern to pass node-pg-migrate's runner, read the same by 6 (`^(p)$`) and 7+ (`^p$`). */
export function runnerIgnorePattern(ignorePattern: string = DEFAULT_IGNORE_PATTERN): string {
  return `(?:${ignorePattern})`;
}

export function migrationSetFromEntries(entries: readonly MigrationEntry[], ignorePattern?: string): MigrationFile[] {
  const ignored = ignoredNames(ignorePattern);
  return entries
    .filter((e) => !ignored.test(path.posix.basename(e.file.replace(/\\/g, '/'))))
    .map(parseMigration)
    .sort((a, b) => compareMigrationFileNames(path.posix.basename(a.file), path.posix.basename(b.file)));
}

export interface ReadMigrationSetOptions {
  /** Base for the `file` paths (default: the working directory). */
  relativeTo?: string;
  /** Return an empty set instead of failing when the directory does not exist (a base without migrations yet). */
  missingOk?: boolean;
  /** `migrations.ignorePattern`: names that are not migrations (default: dotfiles). */
  ignorePattern?: string;
}

export async function readMigrationSet(dir: string, options: ReadMigrationSetOptions = {}): Promise<MigrationFile[]> {
  const absolute = path.resolve(dir);
  let dirents: Dirent[];
  try {
    // Listed synchronously as the files are read below: before every turn of the TDD lane, a trip
    // through libuv's thread pool waited behind the turn's other preparations (5–10 ms where the
    // listing itself takes ~0.1 ms).
    dirents = readdirSync(absolute, { withFileTypes: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && options.missingOk === true) return [];
    if (code === 'ENOENT') {
      const root = path.resolve(options.relativeTo ?? process.cwd());
      const configured = path.relative(root, absolute).split(path.sep).join('/') || '.';
      // Loaded only here: the migrations' child process imports this module and waits on nothing else.
      const { migrationsDirHint } = await import('./scripted-dirs.js');
      const scripted =
        options.relativeTo === undefined ? undefined : await migrationsDirHint(root, configured).catch(() => undefined);
      throw new ConsortError('config', `No migrations directory at ${configured} (migrations.dir).`, {
        hint:
          scripted ??
          `Create it, or set migrations.dir in ${await configFileToEdit(root)} to the folder that holds your migrations.`,
        cause: e,
      });
    }
    throw new ConsortError(
      'config',
      `Cannot read the migrations directory ${dir} (migrations.dir): ${(e as Error).message}`,
      { cause: e },
    );
  }
  const relativeTo = path.resolve(options.relativeTo ?? process.cwd());
  // Links may not lead out of the repository (or, without one named, the migrations directory): a
  // pull request or an agent could link a migration, or the directory, to /proc/self/environ, and
  // the lint, the apply error or the schema diff would quote this process's environment.
  const boundary = options.relativeTo === undefined ? absolute : relativeTo;
  const entries: MigrationEntry[] = [];
  const ignored = ignoredNames(options.ignorePattern);
  for (const d of dirents) {
    // Same filter as node-pg-migrate's getMigrationFilePaths: files and symlinks, no directories.
    if (!(d.isFile() || d.isSymbolicLink()) || ignored.test(d.name)) continue;
    const full = path.join(absolute, d.name);
    const file = path.relative(relativeTo, full).split(path.sep).join('/');
    if (resolvedInside(boundary, full) === null)
      throw new ConsortError('config', `The migration ${file} leads outside the repository, or nowhere.`, {
        hint: INSIDE_HINT,
      });
    // Read synchronously (small files, read before every turn of the TDD lane); a FIFO would block.
    const content = readRegularFile(full);
    if (content === null)
      throw new ConsortError('config', `Cannot read the migration ${file}: it is not a readable regular file.`, {
        hint: 'Make it a regular file (or a link to one), or move it out of the migrations directory.',
      });
    entries.push({ file, content: content.toString('utf8') });
  }
  return migrationSetFromEntries(entries, options.ignorePattern);
}

/**
 * A directory's migrations read once for many requests (the migrations' child of a check answers
 * each reversibility step with the same set): read again only when its listing, or a file's size or
 * times, changed. Reading and parsing 31 TypeScript migrations took 8–22 ms; the look, ~0.5 ms.
 * Times are as coarse as the file system's clock (a same-size rewrite within it goes unseen): a
 * check's sides are written before its first request and never change during it.
 */
export class MigrationSetCache {
  private readonly sets = new Map<string, { stamp: string; set: Promise<MigrationFile[]> }>();

  async read(dir: string, options: ReadMigrationSetOptions = {}): Promise<MigrationFile[]> {
    const key = JSON.stringify([
      path.resolve(dir),
      options.relativeTo ?? null,
      options.missingOk ?? false,
      options.ignorePattern ?? null,
    ]);
    const stamp = await stampOf(dir);
    const known = this.sets.get(key);
    if (known && stamp !== undefined && known.stamp === stamp) return known.set;
    const set = readMigrationSet(dir, options);
    if (stamp === undefined) return set; // not listable: read (and reported) as it is
    this.sets.set(key, { stamp, set });
    set.catch(() => this.sets.delete(key)); // read again (and reported) next time
    return set;
  }
}

/** Names, sizes and times of a directory's entries; undefined when it cannot be listed. */
async function stampOf(dir: string): Promise<string | undefined> {
  try {
    const names = (await readdir(dir)).sort();
    const stats = await Promise.all(
      names.map((n) =>
        stat(path.join(dir, n)).then(
          (s) => [n, s.size, s.mtimeMs, s.ctimeMs, s.ino],
          () => [n],
        ),
      ),
    );
    return JSON.stringify(stats);
  } catch {
    return undefined;
  }
}
