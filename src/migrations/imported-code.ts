/**
 * The project's own files JavaScript and TypeScript migrations import: `import … from '../models/event'`,
 * `require('./lib/audit')`, `import('../src/kinds.js')`, and what those import in turn. A migration
 * that builds an enum from the app's `Object.values(EventKind)` or names a table by a model's
 * `tableName` gives another schema once that file changes, though the migration itself did not; so
 * does one that runs SQL it reads from a file by a path from its own folder
 * (`pgm.sql(fs.readFileSync(path.join(__dirname, 'sql', '1_users.up.sql'), 'utf8'))`), listed too.
 * Read statically (relative specifiers, and the workspace's own packages where its install links
 * them into the repository: other packages are the lockfile's), from a side's tree, and never run. Imported files name what was built with the migrations (the check's and the TDD lane's
 * baselines, the isolation's test template: one built before such a file changed is not reused
 * after), and a change that edits one is told that a database migrated from scratch would no longer
 * be what base's migrations made.
 */
import path, { posix } from 'node:path';
import { readRegularFile, resolvedInside } from '../core/read-regular.js';
import type { GitRepo } from '../ports/git.js';
import { sha256Normalized } from './files.js';

/** Where a side's files are: a folder (the working tree) or a commit of a repository. */
export type SourceTree = { kind: 'dir'; dir: string } | { kind: 'commit'; repo: string; sha: string };

/** A reader of a tree's files, relative to its root; undefined when there is no tree to read. */
export function treeReader(
  tree: SourceTree | undefined,
  git: Pick<GitRepo, 'filesAt'> | undefined,
): ((file: string) => Promise<string | undefined>) | undefined {
  if (!tree) return undefined;
  if (tree.kind === 'dir')
    return async (file) => {
      const real = resolvedInside(tree.dir, path.join(tree.dir, file));
      return real === null ? undefined : (readRegularFile(real)?.toString('utf8') ?? undefined);
    };
  if (!git) return undefined;
  // One listing per folder (a file's candidates share it): the files directly in it, by path.
  const folders = new Map<string, Promise<Map<string, string>>>();
  return async (file) => {
    const folder = path.posix.dirname(file);
    let files = folders.get(folder);
    if (!files)
      folders.set(
        folder,
        (files = git.filesAt(tree.repo, tree.sha, folder).then(
          (found) => new Map(found.map((f) => [f.file, f.content])),
          () => new Map<string, string>(),
        )),
      );
    return (await files).get(file);
  };
}

/** Relative module specifiers in a source text, in order of appearance, each once. */
export function relativeSpecifiers(source: string): string[] {
  const found = new Set<string>();
  const patterns = [
    // import x from '…', import { a } from '…', export * from '…', import type … from '…'
    /\bfrom\s*(['"])(\.{1,2}\/[^'"\n]*)\1/g,
    // import '…' (for its effects)
    /\bimport\s*(['"])(\.{1,2}\/[^'"\n]*)\1/g,
    // require('…'), import('…')
    /\b(?:require|import)\s*\(\s*(['"`])(\.{1,2}\/[^'"`\n$]*)\1\s*\)/g,
  ];
  for (const re of patterns) for (const m of source.matchAll(re)) found.add(m[2]!);
  return [...found];
}

/** A string literal: '…', "…" or `…` without interpolation; group 2 is its text. */
const LITERAL = String.raw`(['"\x60])((?:(?!\1)[^\\\n$]|\$(?!\{))*)\1`;
const DIRNAME = String.raw`(?:__dirname|import\.meta\.dirname)`;

/** The texts of `list` when it is string literals alone, separated by `separator` (`,`, `+`); else undefined. */
function literalList(list: string, separator: string): string[] | undefined {
  const parts: string[] = [];
  let rest = list.trim();
  const one = new RegExp(String.raw`^${LITERAL}\s*`);
  for (;;) {
    const m = one.exec(rest);
    if (!m) return undefined;
    parts.push(m[2]!);
    rest = rest.slice(m[0].length);
    if (rest === '') return parts;
    if (!rest.startsWith(separator)) return undefined;
    rest = rest.slice(separator.length).trimStart();
  }
}

/**
 * Files a source text reads by a path built from its own folder and literals alone, as a migration
 * that keeps its SQL beside it does: `fs.readFileSync(path.join(__dirname, 'sql', '1_users.up.sql'))`,
 * `path.resolve(__dirname, '../schema.sql')`, `__dirname + '/sql/up.sql'`, `` `${__dirname}/sql/up.sql` ``,
 * `new URL('./sql/up.sql', import.meta.url)`. Each relative to the file's folder (`./sql/up.sql`),
 * in order of appearance, each once. A path with any other part (a variable, `__filename`) is not
 * read: what it names is not known without running the code.
 */
export function readSpecifiers(source: string): string[] {
  const found = new Set<string>();
  const add = (parts: string[] | undefined): void => {
    if (!parts || parts.length === 0) return;
    const joined = posix.join(...parts.map((p) => p.replace(/^\/+/, '')));
    if (joined === '.' || joined === '..' || joined.endsWith('/')) return;
    found.add(joined.startsWith('../') ? joined : `./${joined}`);
  };
  // path.join(__dirname, 'sql', 'x.sql'), join(…), path.resolve(…) (where an absolute part leaves the folder)
  for (const m of source.matchAll(new RegExp(String.raw`\b(join|resolve)\s*\(\s*${DIRNAME}\s*,([^()]*)\)`, 'g'))) {
    const parts = literalList(m[2]!.replace(/,\s*$/, ''), ',');
    if (m[1] === 'resolve' && parts?.some((p) => p.startsWith('/'))) continue;
    add(parts);
  }
  // __dirname + '/sql/up.sql' (+ '…'), up to the end of the expression
  for (const m of source.matchAll(new RegExp(String.raw`${DIRNAME}\s*\+([^;,()\n]*)`, 'g'))) {
    const parts = literalList(m[1]!, '+');
    if (parts) add([parts.join('')]);
  }
  // `${__dirname}/sql/up.sql`
  for (const m of source.matchAll(
    new RegExp(String.raw`\x60\$\{\s*${DIRNAME}\s*\}((?:[^\x60\\$]|\$(?!\{))*)\x60`, 'g'),
  ))
    add([m[1]!]);
  // new URL('./sql/up.sql', import.meta.url)
  for (const m of source.matchAll(
    new RegExp(String.raw`\bnew\s+URL\s*\(\s*${LITERAL}\s*,\s*import\.meta\.url\s*\)`, 'g'),
  ))
    if (/^\.{1,2}\//.test(m[2]!)) add([m[2]!]);
  return [...found];
}

/**
 * The names of SQL files a source text spells out whole (`readSql('1_users.up.sql')`,
 * `'./sql/1_users.up.sql'`), each once, in order: read by whatever it hands them to, from the source's
 * folder or from that of a module it imports (a helper that reads `path.join(__dirname, name)`).
 */
export function sqlFileNames(source: string): string[] {
  const found = new Set<string>();
  for (const m of source.matchAll(new RegExp(LITERAL, 'g'))) {
    const text = m[2]!;
    if (/\.sql$/i.test(text) && !/^[/\\]|\s/.test(text) && posix.basename(text) !== '.sql') found.add(text);
  }
  return [...found];
}

/**
 * Files a source text reads by a path made from its own file's name, as a migration template that
 * keeps each migration's SQL under its name does: `join(__dirname, 'sql', basename(__filename,
 * extname(__filename)))` and then `` `${basePath}.up.sql` ``, or `__filename + '.sql'`. Only when the
 * text names its own file (`__filename`, `import.meta.url`, `import.meta.filename`): each SQL suffix
 * it spells (`'.up.sql'`, `'-down.sql'`, `'.sql'`) after its name with and without its extension, in
 * its folder and in each folder a plain literal of it names (`'sql'`), relative to that folder.
 */
export function ownNameReads(source: string, file: string): string[] {
  if (!/\b__filename\b|\bimport\.meta\.(?:url|filename)\b/.test(source)) return [];
  const literals = [...source.matchAll(new RegExp(LITERAL, 'g'))].map((m) => m[2]!);
  // `'.up.sql'`, and a template's tail after its last interpolation: `${basePath}.up.sql`
  const tails = [...source.matchAll(/\}([^\x60$\\\n]*)\x60/g)].map((m) => m[1]!);
  const suffixes = [...new Set([...literals, ...tails].filter((l) => /^[._-](?:[\w.-]*\.)?sql$/i.test(l)))];
  if (suffixes.length === 0) return [];
  const folders = ['.', ...new Set(literals.filter((l) => /^[A-Za-z0-9_-]+$/.test(l)))];
  const base = posix.basename(file);
  const stems = [...new Set([base.slice(0, base.length - posix.extname(base).length), base])];
  return folders.flatMap((folder) =>
    stems.flatMap((stem) =>
      suffixes.map((suffix) => (folder === '.' ? `./${stem}${suffix}` : `./${folder}/${stem}${suffix}`)),
    ),
  );
}

/**
 * Whether a file read is a migration's down SQL by its name (`1_users.down.sql`, `…-down.sql`,
 * `sql/down.sql`): read when the migration is rolled back, by every database alike, so an edit
 * changes no database that ran the migration's up.
 */
export function isDownSql(file: string): boolean {
  const base = posix.basename(file);
  return /\.sql$/i.test(base) && /(?:^|[._-])down$/i.test(base.slice(0, -4));
}

/** Bare module specifiers (`@acme/shared`, `@acme/shared/kinds`, `lodash`) in a source text, each once. */
function packageSpecifiers(source: string): string[] {
  const found = new Set<string>();
  const patterns = [
    /\bfrom\s*(['"])([^.'"\n/][^'"\n]*)\1/g,
    /\bimport\s*(['"])([^.'"\n/][^'"\n]*)\1/g,
    /\b(?:require|import)\s*\(\s*(['"`])([^.'"`\n$/][^'"`\n$]*)\1\s*\)/g,
  ];
  for (const re of patterns) for (const m of source.matchAll(re)) found.add(m[2]!);
  return [...found];
}

/** The files a package.json names as its entry, most likely first (`exports`, `module`, `main`, then `index`). */
function packageEntries(manifest: string | undefined): string[] {
  let pkg: unknown;
  try {
    pkg = manifest === undefined ? undefined : JSON.parse(manifest);
  } catch {
    pkg = undefined;
  }
  const entries: string[] = [];
  const add = (v: unknown): void => {
    if (typeof v === 'string') entries.push(v);
    else if (Array.isArray(v)) v.forEach(add);
    else if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      // A subpath map's root, or a condition map: the conditions node-pg-migrate's loaders take.
      if ('.' in o) add(o['.']);
      else for (const c of ['import', 'require', 'node', 'default', 'types']) add(o[c]);
    }
  };
  if (typeof pkg === 'object' && pkg !== null) {
    const p = pkg as Record<string, unknown>;
    add(p.exports);
    add(p.module);
    add(p.main);
  }
  entries.push('index');
  return entries.map((e) => (e.startsWith('./') ? e : `./${e}`));
}

const CODE = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];
/** What a TypeScript ESM import names by its compiled extension (`./kinds.js` is `./kinds.ts`). */
const COMPILED: Record<string, string[]> = {
  '.js': ['.ts', '.tsx'],
  '.jsx': ['.tsx'],
  '.mjs': ['.mts'],
  '.cjs': ['.cts'],
};

/** The files a specifier may be, most likely first, relative to the tree's root; none outside it. */
function candidates(from: string, specifier: string): string[] {
  const target = posix.normalize(posix.join(posix.dirname(from), specifier));
  if (target === '..' || target.startsWith('../') || posix.isAbsolute(target)) return [];
  const ext = posix.extname(target);
  const stem = target.slice(0, target.length - ext.length);
  return [
    target,
    ...(COMPILED[ext] ?? []).map((e) => stem + e),
    ...[...CODE, '.json'].map((e) => target + e),
    ...CODE.map((e) => `${target}/index${e}`),
  ];
}

export interface ImportedFile {
  /** Relative to the tree's root, with `/` separators. */
  file: string;
  /** As MigrationFile's: CRLF normalized. */
  sha256: string;
  /** The migrations that import it, directly or through other files. */
  importedBy: string[];
  /**
   * true: they only read it (`fs.readFileSync(path.join(__dirname, 'sql', '1_users.up.sql'))`, SQL a
   * migration runs as its own), never import it.
   */
  read?: true;
}

/** Enough for any real history; a tree importing more is read no further. */
const MAX_FILES = 500;

/**
 * The files `migrations` import, transitively, read with `read` (undefined: no such file). The
 * migrations themselves (`skip`, every migration file of the side) are not listed: they are
 * compared as migrations.
 */
export async function importedFiles(
  migrations: readonly { file: string; content: string }[],
  read: (file: string) => Promise<string | undefined>,
  skip: ReadonlySet<string> = new Set(migrations.map((m) => m.file)),
  workspace: ReadonlyMap<string, string> = new Map(),
): Promise<ImportedFile[]> {
  const files = new Map<string, { sha256: string; content: string; importedBy: Set<string>; imported: boolean }>();
  const cache = new Map<string, Promise<string | undefined>>();
  const readOnce = (file: string) => {
    let r = cache.get(file);
    if (!r) cache.set(file, (r = read(file).catch(() => undefined)));
    return r;
  };
  const resolve = async (from: string, specifier: string): Promise<{ file: string; content: string } | undefined> => {
    for (const file of candidates(from, specifier)) {
      const content = await readOnce(file);
      if (content !== undefined) return { file, content };
    }
    return undefined;
  };
  // A file read by a path from the reader's folder: that file alone, no extension added, none outside the tree.
  const resolveRead = async (
    from: string,
    specifier: string,
  ): Promise<{ file: string; content: string } | undefined> => {
    const file = posix.normalize(posix.join(posix.dirname(from), specifier));
    if (file === '..' || file.startsWith('../') || posix.isAbsolute(file)) return undefined;
    const content = await readOnce(file);
    return content === undefined ? undefined : { file, content };
  };
  // `@acme/shared` or `@acme/shared/kinds`, for a package of the workspace: its files in the tree.
  const resolvePackage = async (specifier: string): Promise<{ file: string; content: string } | undefined> => {
    const named = /^((?:@[^/]+\/)?[^/]+)(?:\/(.+))?$/.exec(specifier);
    const dir = named ? workspace.get(named[1]!) : undefined;
    if (!named || dir === undefined) return undefined;
    const manifest = `${dir}/package.json`;
    const entries = named[2] !== undefined ? [`./${named[2]}`] : packageEntries(await readOnce(manifest));
    for (const entry of entries) {
      const found = await resolve(manifest, entry);
      if (found) return found;
    }
    return undefined;
  };
  for (const m of migrations) {
    if (!CODE.includes(posix.extname(m.file))) continue;
    const seen = new Set<string>([m.file]);
    const queue: { file: string; content: string }[] = [m];
    while (queue.length > 0 && files.size < MAX_FILES) {
      const at = queue.shift()!;
      const take = (found: { file: string; content: string } | undefined, onlyRead: boolean): void => {
        if (!found) return;
        const known = files.get(found.file);
        if (known && !onlyRead) known.imported = true;
        if (seen.has(found.file)) return;
        seen.add(found.file);
        // Another migration imported for a constant or a helper: compared as a migration, but what it imports counts.
        if (!skip.has(found.file)) {
          const entry = files.get(found.file) ?? {
            sha256: sha256Normalized(found.content),
            content: found.content,
            importedBy: new Set<string>(),
            imported: !onlyRead,
          };
          entry.importedBy.add(m.file);
          files.set(found.file, entry);
        }
        // A file read is text to the reader (SQL, most often): nothing it names is loaded.
        if (!onlyRead && CODE.includes(posix.extname(found.file))) queue.push(found);
      };
      // The folders of what it imports: where a helper it hands a file's name reads from (`readSql('1_users.up.sql')`).
      const folders = new Set([posix.dirname(at.file)]);
      const imports = [
        ...relativeSpecifiers(at.content).map((sp) => () => resolve(at.file, sp)),
        ...(workspace.size === 0 ? [] : packageSpecifiers(at.content).map((sp) => () => resolvePackage(sp))),
      ];
      for (const find of imports) {
        const found = await find();
        if (found) folders.add(posix.dirname(found.file));
        take(found, false);
      }
      for (const sp of [...readSpecifiers(at.content), ...ownNameReads(at.content, at.file)])
        take(await resolveRead(at.file, sp), true);
      for (const name of sqlFileNames(at.content))
        for (const folder of folders) {
          const found = await resolveRead(`${folder}/.`, name);
          if (found) {
            take(found, true);
            break;
          }
        }
    }
  }
  return [...files.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([file, e]) => ({
      file,
      sha256: e.sha256,
      importedBy: [...e.importedBy].sort(),
      ...(e.imported ? {} : { read: true as const }),
    }));
}
