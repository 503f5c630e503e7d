/**
 * The index `git add` wrote, for the in-process commit (commit-objects.ts): its entries read and
 * checked as git reads them, and every tree built from them (the cache-tree extension is not trusted).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { give, refuse } from './in-process.js';
import { hashObject } from './loose-objects.js';

export interface IndexEntry {
  /** The path's bytes as a latin1 string (byte order is code unit order). */
  path: string;
  mode: string;
  id: string;
}

const MODES: Record<number, string> = {
  0o100644: '100644',
  0o100755: '100755',
  0o120000: '120000',
  0o160000: '160000',
};

/** The index's entries (version 2 or 3, stage 0 only), checked as git reads them. */
export function readIndex(file: string): IndexEntry[] {
  const data = readFileSync(file);
  if (data.length < 32 || data.toString('latin1', 0, 4) !== 'DIRC') give('not an index');
  const version = data.readUInt32BE(4);
  if (version !== 2 && version !== 3) give(`index version ${version}`);
  const trailer = data.subarray(data.length - 20);
  if (
    !createHash('sha1')
      .update(data.subarray(0, data.length - 20))
      .digest()
      .equals(trailer)
  )
    give('index checksum');
  const count = data.readUInt32BE(8);
  const entries: IndexEntry[] = [];
  let at = 12;
  let previous: string | null = null;
  for (let i = 0; i < count; i++) {
    if (at + 62 > data.length - 20) give('index truncated');
    const mode = data.readUInt32BE(at + 24);
    const id = data.toString('hex', at + 40, at + 60);
    const flags = data.readUInt16BE(at + 60);
    let nameAt = at + 62;
    if (flags & 0x4000) {
      if (version < 3) give('extended flags in a version 2 index');
      const extended = data.readUInt16BE(nameAt);
      // intent-to-add (0x2000), skip-worktree (0x4000) of a sparse directory entry: git's cases.
      if (extended & 0x2000) give('intent-to-add entry');
      nameAt += 2;
    }
    if (flags & 0x3000) give('unmerged entry');
    const end = data.indexOf(0, nameAt);
    if (end < 0 || end >= data.length - 20) give('index truncated');
    const name = data.toString('latin1', nameAt, end);
    if ((flags & 0xfff) !== Math.min(end - nameAt, 0xfff)) give('index name length');
    if (mode === 0o40000) give('a sparse directory entry');
    const kind = MODES[mode] ?? give(`mode ${mode.toString(8)}`);
    if (!validPath(name)) give('a path git would refuse');
    if (previous !== null && !(previous < name)) give('index not sorted');
    previous = name;
    entries.push({ path: name, mode: kind, id });
    // Entries are padded with 1–8 NULs to a multiple of 8 bytes.
    at += Math.floor((end - at + 8) / 8) * 8;
  }
  // Extensions: optional ones (upper-case signature) skipped; a split (link) or sparse (sdir) index, or any mandatory one, gives up.
  while (at < data.length - 20) {
    if (at + 8 > data.length - 20) give('index extension truncated');
    const sig = data.toString('latin1', at, at + 4);
    const size = data.readUInt32BE(at + 4);
    if (!/^[A-Z]/.test(sig) || sig === 'sdir' || sig === 'link') give(`index extension ${sig}`);
    at += 8 + size;
  }
  if (at !== data.length - 20) give('index extensions overrun');
  return entries;
}

/** git's verify_path, as far as a commit needs: no empty, `.`, `..` or `.git` component. */
function validPath(p: string): boolean {
  return p.split('/').every((c) => c !== '' && c !== '.' && c !== '..' && c.toLowerCase() !== '.git');
}

export interface Tree {
  id: string;
  body: Buffer;
  /** The ids of its blobs (not of its subtrees or gitlinks). */
  blobs: string[];
}

/** Every tree of the index, children before their parents, the root last. */
export function buildTrees(entries: readonly IndexEntry[]): Tree[] {
  const out: Tree[] = [];
  const build = (from: number, to: number, prefix: string): string => {
    const items: { name: string; mode: string; id: string }[] = [];
    const blobs: string[] = [];
    let i = from;
    while (i < to) {
      const rest = entries[i]!.path.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash < 0) {
        items.push({ name: rest, mode: entries[i]!.mode, id: entries[i]!.id });
        if (entries[i]!.mode !== '160000') blobs.push(entries[i]!.id);
        i++;
        continue;
      }
      const dir = rest.slice(0, slash);
      const sub = `${prefix}${dir}/`;
      let j = i;
      while (j < to && entries[j]!.path.startsWith(sub)) j++;
      items.push({ name: dir, mode: '40000', id: build(i, j, sub) });
      i = j;
    }
    // A file and a folder of one name cannot both be. They need not sort next to each other (`a`,
    // `a.txt`, `a/b`): git's own check (verify_cache) compares neighbours only, and git 2.39 commits
    // such an index as a tree with the name twice, which fsck rejects — so no fallback either.
    const names = new Set<string>();
    for (const e of items) {
      if (names.has(e.name)) refuse(`the index holds ${prefix}${e.name} both as a file and as a folder`);
      names.add(e.name);
    }
    // git's order: names as bytes, a tree's as if it ended in "/".
    const key = (e: { name: string; mode: string }): string => (e.mode === '40000' ? `${e.name}/` : e.name);
    items.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    const body = Buffer.concat(
      items.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`, 'latin1'), Buffer.from(e.id, 'hex')]),
    );
    const id = hashObject('tree', body);
    out.push({ id, body, blobs });
    return id;
  };
  build(0, entries.length, '');
  return out;
}
