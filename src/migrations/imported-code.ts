/**
 * The project's own files JavaScript and TypeScript migrations import: `import … from '../models/event'`,
 * `require('./lib/audit')`, `import('../src/kinds.js')`, and what those import in turn. A migration
 * that builds an enum from the app's `Object.values(EventKind)` or names a table by a model's
 * `tableName` gives another schema once that file changes, though the migration itself did not.
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
  const files = new Map<string, { sha256: string; content: string; importedBy: Set<string> }>();
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
      const specifiers = [
        ...relativeSpecifiers(at.content).map((sp) => () => resolve(at.file, sp)),
        ...(workspace.size === 0 ? [] : packageSpecifiers(at.content).map((sp) => () => resolvePackage(sp))),
      ];
      for (const resolveSpecifier of specifiers) {
        const found = await resolveSpecifier();
        if (!found || seen.has(found.file)) continue;
        seen.add(found.file);
        // Another migration imported for a constant or a helper: compared as a migration, but what it imports counts.
        if (!skip.has(found.file)) {
          const entry = files.get(found.file) ?? {
            sha256: sha256Normalized(found.content),
            content: found.content,
            importedBy: new Set<string>(),
          };
          entry.importedBy.add(m.file);
          files.set(found.file, entry);
        }
        if (CODE.includes(posix.extname(found.file))) queue.push(found);
      }
    }
  }
  return [...files.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([file, e]) => ({ file, sha256: e.sha256, importedBy: [...e.importedBy].sort() }));
}
