/**
 * A proof's worktree made ahead of its proof. A full checkout is the longest git call in a TDD
 * cycle: on an ext4 disk every file and folder it creates costs the kernel a fraction of a
 * millisecond, so even a small project's tree takes 50–100 ms (measured in docs/benchmarks.md),
 * and it grows with the project. The conductor therefore starts the worktree of the turn's base
 * commit while the agent works; once the turn is committed, the proof moves it to that commit with
 * `git checkout` (which writes only the files the turn changed) and then checks every file
 * against the commit itself before anything runs there.
 *
 * The check trusts nothing in the tree or in its index: a made-ahead tree exists while untrusted
 * code runs (the agent's turn; it is hidden from every isolated command started until its proof
 * takes it, and made only under bubblewrap, where the turn sees `.git` read-only: local-workspace.ts). Every regular file must hash to its blob id in the
 * commit with its executable bit, every symlink to its target's blob, every folder must hold some
 * file of the commit, and nothing else may be there (an ignored file, a FIFO, a planted report).
 * The worktree's own `.git` file and its registration (`commondir`, `gitdir`) must be the bytes git
 * wrote, with no `config.worktree`: git reads them before anything else. Whatever differs — an
 * attack, or simply a checkout filter or end-of-line setting that makes files differ from their
 * blobs — and the proof makes its tree afresh instead (src/git/workspace.ts addWorktree).
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { hideFromIsolated } from '../process/isolate.js';
import { git } from './exec.js';
import { addWorktreeInto, worktreeAdminDir, type GitWorkspace } from './workspace.js';

export interface PreparedWorktree {
  dir: string;
  /** What git wrote for the worktree (null: it could not be made). */
  made: Promise<Registration | null>;
  /** Shows the folder to isolated commands again. */
  show: () => void;
}

/** The worktree's `.git` file and its registration's files that name where its git directory is. */
interface Registration {
  admin: string;
  bytes: Map<string, Buffer>;
  /** The base commit's `.gitattributes` files (path → blob id): the rules its files were checked out by. */
  attributes: Map<string, string>;
}

const readOr = (file: string): Buffer | null => {
  try {
    return readFileSync(file);
  } catch {
    return null;
  }
};

function registrationFiles(dir: string, admin: string): string[] {
  return [path.join(dir, '.git'), path.join(admin, 'commondir'), path.join(admin, 'gitdir')];
}

/**
 * Start a detached worktree of `commit` at `dir`, which must not exist yet: the folder is made at
 * once (so that every command isolated from now on finds it to hide) and git fills it in the background.
 */
export function prepareWorktree(ws: GitWorkspace, dir: string, commit: string): PreparedWorktree {
  mkdirSync(dir);
  const show = hideFromIsolated(dir);
  const made = (async (): Promise<Registration | null> => {
    const [added, listing] = await Promise.all([addWorktreeInto(ws, dir, commit), listTree(ws, commit)]);
    if (!added || listing === null) return null;
    const admin = await worktreeAdminDir(ws, dir);
    if (admin === null) return null;
    const bytes = new Map<string, Buffer>();
    for (const file of registrationFiles(dir, admin)) {
      const content = readOr(file);
      if (content === null) return null;
      bytes.set(file, content);
    }
    return { admin, bytes, attributes: attributesOf(listing) };
  })().catch(() => null);
  return { dir, made, show };
}

/**
 * Move a prepared worktree to `commit` and check it file by file; whether it now holds exactly
 * that commit. False leaves the folder for the caller to remove.
 */
export async function settleWorktree(ws: GitWorkspace, prepared: PreparedWorktree, commit: string): Promise<boolean> {
  const made = await prepared.made;
  if (made === null || !registrationIntact(prepared.dir, made)) return false;
  const [moved, listing] = await Promise.all([
    git(prepared.dir, ['checkout', '-q', '--detach', '--no-recurse-submodules', commit]),
    listTree(ws, commit),
  ]);
  if (moved.code !== 0 || listing === null) return false;
  // Other `.gitattributes` than the base's: a file the turn did not change may now check out
  // otherwise (an end-of-line rule, a filter) than it did at the base, and still match its blob.
  const attributes = attributesOf(listing);
  if (
    attributes.size !== made.attributes.size ||
    [...attributes].some(([file, id]) => made.attributes.get(file) !== id)
  )
    return false;
  return treeMatches(prepared.dir, listing);
}

/** A commit's files, as `ls-tree` lists them (null when git cannot). */
async function listTree(ws: GitWorkspace, commit: string): Promise<Map<string, Entry> | null> {
  const r = await git(ws.top, ['ls-tree', '-r', '-z', '-l', '--full-tree', commit]);
  if (r.code !== 0) return null;
  const files = new Map<string, Entry>();
  for (const line of r.stdout.split('\0')) {
    if (line === '') continue;
    // A submodule (160000, size "-") is an empty folder git leaves for the user to fill: not matched.
    const m = /^(\d{6}) \w+ ([0-9a-f]{40}(?:[0-9a-f]{24})?) +(\d+|-)\t(.+)$/s.exec(line);
    if (m === null) return null;
    const [, mode, id, size, file] = m as unknown as [string, string, string, string, string];
    files.set(file, { mode, id, size: size === '-' ? -1 : Number(size) });
  }
  return files;
}

function attributesOf(files: Map<string, Entry>): Map<string, string> {
  return new Map(
    [...files].filter(([file]) => path.posix.basename(file) === '.gitattributes').map(([file, e]) => [file, e.id]),
  );
}

function registrationIntact(dir: string, made: Registration): boolean {
  if (lstatSync(path.join(made.admin, 'config.worktree'), { throwIfNoEntry: false }) !== undefined) return false;
  return registrationFiles(dir, made.admin).every((file) => {
    const info = lstatSync(file, { throwIfNoEntry: false });
    const content = info?.isFile() ? readOr(file) : null;
    return content !== null && content.equals(made.bytes.get(file)!);
  });
}

interface Entry {
  mode: string;
  id: string;
  size: number;
}

/** Whether the folder holds exactly the commit's files (its `.git` file aside). */
function treeMatches(dir: string, expected: Map<string, Entry>): boolean {
  const folders = new Set<string>();
  for (const [file, entry] of expected) {
    if (entry.mode === '160000') return false;
    for (let at = path.posix.dirname(file); at !== '.'; at = path.posix.dirname(at)) folders.add(at);
  }
  let seen = 0;
  const walk = (rel: string): boolean => {
    let names: string[];
    try {
      names = readdirSync(rel === '' ? dir : path.join(dir, rel));
    } catch {
      return false;
    }
    for (const name of names) {
      if (rel === '' && name === '.git') continue;
      const at = rel === '' ? name : `${rel}/${name}`;
      const full = path.join(dir, at);
      const info = lstatSync(full, { throwIfNoEntry: false });
      if (info === undefined) return false;
      if (info.isDirectory()) {
        if (!folders.has(at) || !walk(at)) return false;
        continue;
      }
      const entry = expected.get(at);
      if (entry === undefined) return false;
      seen += 1;
      let content: Buffer;
      if (info.isSymbolicLink()) {
        if (entry.mode !== '120000') return false;
        content = readlinkSync(full, { encoding: 'buffer' });
      } else if (info.isFile()) {
        if (entry.mode !== '100644' && entry.mode !== '100755') return false;
        if ((entry.mode === '100755') !== ((info.mode & 0o100) !== 0)) return false;
        // A size that differs needs no read (a file grown to gigabytes is not read whole).
        if (info.size !== entry.size) return false;
        const read = readOr(full);
        if (read === null || read.length !== entry.size) return false;
        content = read;
      } else return false;
      if (blobId(content, entry.id.length) !== entry.id) return false;
    }
    return true;
  };
  return walk('') && seen === expected.size;
}

/** git's id of a blob holding `content` (sha1, or sha256 in a repository of that format). */
function blobId(content: Buffer, length: number): string {
  return createHash(length === 40 ? 'sha1' : 'sha256')
    .update(`blob ${content.length}\0`)
    .update(content)
    .digest('hex');
}
