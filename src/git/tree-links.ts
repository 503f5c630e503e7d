/**
 * Symbolic links inside a commit's tree (mode 120000), followed as a checkout's kernel would follow
 * them — but only through the commit itself, never the runner's disk. A monorepo's migration (or
 * a file one imports) is often a link to a shared file; read as the blob it is, its "content"
 * would be the target's path, and the plan would lint and compare that while node-pg-migrate,
 * reading the written tree, runs the target. A link that leads out of the tree (an absolute path,
 * `..` past the top), names nothing in it, or loops is refused with its target named.
 */

/** One line of `git ls-tree -r -t -z --full-tree`. */
export interface TreeEntry {
  mode: string;
  type: string;
  id: string;
  path: string;
}

/** The kernel's limit on links followed in one path lookup (MAXSYMLINKS). */
export const MAX_HOPS = 40;

/**
 * The longest target a link can have on disk (PATH_MAX less its NUL): symlink() refuses a longer
 * one, so the plan must not read through it either; and a link's blob is read no further.
 */
export const MAX_TARGET = 4095;

export type Resolved =
  | { kind: 'file'; path: string; entry: TreeEntry }
  | { kind: 'folder'; path: string }
  /** `start` itself is not in the tree (no link on the way). */
  | { kind: 'missing' }
  /** `why` completes "… is a link to "<target>", which …". */
  | { kind: 'refused'; link: string; target: string; why: string };

export const isLink = (e: TreeEntry): boolean => e.mode === '120000';

/** A folder of the tree: a tree object, or a submodule (written as an empty folder). */
const isFolder = (e: TreeEntry): boolean => e.type === 'tree' || e.type === 'commit';

/**
 * Where `start` leads in the tree: every link on the way replaced by its target, relative to the
 * link's folder, `..` applied after the link as the kernel applies it. `entries`: the whole tree by
 * path; `targets`: each link's text by path.
 */
export function resolveInTree(
  entries: ReadonlyMap<string, TreeEntry>,
  targets: ReadonlyMap<string, string>,
  start: string,
): Resolved {
  const pending = start.split('/');
  const at: string[] = [];
  let hops = 0;
  // The first link on the way, named in a refusal (the one the caller asked about, usually).
  let link: { path: string; target: string } | undefined;
  const refuse = (why: string): Resolved => ({
    kind: 'refused',
    link: link?.path ?? start,
    target: link?.target ?? start,
    why,
  });
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (at.length === 0) return refuse('leads outside the repository');
      at.pop();
      continue;
    }
    const here = [...at, part].join('/');
    const entry = entries.get(here);
    if (entry === undefined)
      return link === undefined ? { kind: 'missing' } : refuse(`names nothing in the commit (no ${here})`);
    if (isLink(entry)) {
      const target = targets.get(here) ?? '';
      link ??= { path: here, target };
      if (++hops > MAX_HOPS) return refuse(`loops (more than ${MAX_HOPS} links followed)`);
      if (target === '' || target.includes('\0')) return refuse('names nothing');
      if (Buffer.byteLength(target) > MAX_TARGET) return refuse(`is longer than a link can be (${MAX_TARGET} bytes)`);
      if (target.startsWith('/')) return refuse('leads outside the repository (an absolute path)');
      pending.unshift(...target.split('/'));
      continue;
    }
    at.push(part);
    if (isFolder(entry)) {
      if (entry.type === 'commit' && pending.some((p) => p !== '' && p !== '.'))
        return refuse(`leads into the submodule ${here}, which the commit does not hold`);
      continue;
    }
    // A file: nothing may follow it (the kernel's ENOTDIR).
    if (pending.length > 0 && link === undefined) return { kind: 'missing' };
    if (pending.length > 0) return refuse(`names nothing in the commit (${here} is a file, not a folder)`);
    return { kind: 'file', path: here, entry };
  }
  return { kind: 'folder', path: at.join('/') };
}

/** Characters of a target a refusal quotes. */
const SHOWN = 200;

/** "db/migrations/1_a.sql is a link to "../x", which leads outside the repository." */
export function refusal(r: Extract<Resolved, { kind: 'refused' }>): string {
  const target = r.target.length > SHOWN ? `${r.target.slice(0, SHOWN)}…` : r.target;
  return `${r.link} is a link to ${JSON.stringify(target)}, which ${r.why}`;
}

/** Parse `git ls-tree -r -t -z --full-tree` output. */
export function parseTree(listing: string): TreeEntry[] {
  return listing
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [mode, type, id] = line.slice(0, tab).split(' ') as [string, string, string];
      return { mode, type, id, path: line.slice(tab + 1) };
    });
}
