/**
 * The symlinks on the way to a path, for the `.git` guard (src/git/guard.ts). The guard follows a
 * link the user made before a turn (a dotfiles `~/.config/git`, `.git/hooks` → a shared folder), as
 * git does; untrusted code can write folders outside the git directory (the home folder even under
 * bubblewrap), so a folder on that way may since have become a link to anywhere — the repository's
 * `.git`, which the sandbox keeps read-only to that code. The guard compares the way with the
 * snapshot's and undoes only the links; nothing is put back or removed through one the turn made.
 */
import { lstatSync, readlinkSync } from 'node:fs';
import { symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import { ConsortError } from '../core/errors.js';
import type { FileChange } from '../conductor/events.js';

/** As many links as the kernel follows in one lookup before it gives up (ELOOP). */
const MAX_LINKS = 40;

export interface Way {
  /** The symlinks met, in order (each link's path → its target). */
  links: [string, string][];
  /** Where the path leads, every link followed (names below a missing folder as they are); null when nowhere (a loop, a name that cannot be looked up). */
  end: string | null;
}

/** The way to `p`, every name of it resolved one at a time as the kernel does (its own last name too). */
export function wayTo(p: string): Way {
  const links: [string, string][] = [];
  const names = path.resolve(p).split(path.sep).filter(Boolean);
  let at = path.parse(path.resolve(p)).root;
  while (names.length > 0) {
    const next = path.join(at, names.shift()!);
    let info;
    let target = '';
    try {
      info = lstatSync(next, { throwIfNoEntry: false });
      if (info?.isSymbolicLink()) target = readlinkSync(next);
    } catch {
      return { links, end: null }; // a name too long, or a file where a folder was
    }
    if (info === undefined) return { links, end: path.join(next, ...names) }; // nothing below a missing folder can be a link
    if (!info.isSymbolicLink()) {
      at = next;
      continue;
    }
    if (links.length === MAX_LINKS) return { links, end: null };
    links.push([next, target]);
    names.unshift(...target.split(path.sep).filter(Boolean));
    if (path.isAbsolute(target)) at = path.parse(target).root;
  }
  return { links, end: at };
}

/** A path as a change names it: under `~/` in the home folder, else as it is. */
export function shownPath(p: string, home: string): string {
  const shown = path.relative(home, p);
  return shown.startsWith('..') || path.isAbsolute(shown) ? p : `~/${shown}`;
}

/**
 * Undo the links planted on the way to `p` since the snapshot, whose way had `was` (link → target):
 * the first one met that `was` did not have (or had to elsewhere) is removed — the link itself — or
 * pointed back where it was, until the way is the snapshot's. Each is reported as the turn's change,
 * but for `quiet` (a file's own place, whose change the caller reports); returns the links undone.
 */
export async function unplantLinks(
  p: string,
  was: ReadonlyMap<string, string>,
  home: string,
  changes: FileChange[],
  quiet?: string,
): Promise<string[]> {
  const undone: string[] = [];
  for (let round = 0; round < MAX_LINKS; round++) {
    const planted = wayTo(p).links.find(([link, target]) => was.get(link) !== target);
    if (planted === undefined) return undone;
    const [link] = planted;
    const before = was.get(link);
    if (link !== quiet)
      changes.push({ path: shownPath(link, home), status: before === undefined ? 'added' : 'modified' });
    await unlink(link);
    if (before !== undefined) await symlink(before, link);
    undone.push(link);
  }
  throw new ConsortError('internal', `Links planted on the way to ${p} could not all be removed.`);
}
