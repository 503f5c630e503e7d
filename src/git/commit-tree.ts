/**
 * A commit's tree written into a folder from its objects, byte for byte. Not `git archive`, which
 * reads the archived tree's own `.gitattributes`: a pull request's `export-ignore` dropped a
 * migration from the run directory (the plan counted it, node-pg-migrate never saw it), and
 * `export-subst`, `ident`, `eol`/`text` and `working-tree-encoding` changed the bytes that ran
 * from the bytes the plan read and linted (git 2.39, this runner's, has no way to point archive's
 * attributes elsewhere). Links are written only when they lead to a file or folder of the commit
 * (tree-links.ts), so nothing in the written tree reads the runner's disk; the rest are left out
 * and named.
 */
import { spawn } from 'node:child_process';
import { mkdir, open, symlink, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ConsortError } from '../core/errors.js';
import { gitProgram } from './exec.js';
import { gitEnv, SAFE_GIT_ARGS } from './safe.js';
import { isLink, MAX_TARGET, parseTree, refusal, resolveInTree, type TreeEntry } from './tree-links.js';

/**
 * The whole tree of `sha`, folders included, by path. Refused, naming the path, when it holds what
 * no checkout writes: a name git refuses (unsafePath), a name twice in one folder (the map would
 * keep one, the writer would fail on the other), an entry whose folder is not a folder of the tree
 * (a name holding a `/`, a file or link where its folder should be). `git mktree` and
 * `hash-object --literally` make all of these; git's fsck, and so a host like GitHub, refuses them.
 */
export async function listTree(
  root: string,
  sha: string,
  under?: string,
  maxEntries = MAX_ENTRIES,
): Promise<Map<string, TreeEntry>> {
  const args = [
    'ls-tree',
    '-r',
    '-t',
    '-z',
    '--full-tree',
    sha,
    ...(under !== undefined ? ['--', `:(literal)${under}`] : []),
  ];
  const entries = new Map<string, TreeEntry>();
  for await (const e of listing(root, args, sha, maxEntries)) {
    const folder = path.posix.dirname(e.path);
    const why = unsafePath(e.path)
      ? 'a name no checkout writes'
      : entries.has(e.path)
        ? 'twice'
        : folder !== '.' && entries.get(folder)?.type !== 'tree'
          ? `in ${JSON.stringify(folder)}, which is not a folder of the commit`
          : undefined;
    if (why !== undefined)
      throw new ConsortError(
        'invalid-input',
        `The commit ${sha.slice(0, 12)} holds ${JSON.stringify(e.path)}: ${why}.`,
        {
          hint: 'git would not check this commit out: make it again with git add and git commit.',
        },
      );
    entries.set(e.path, e);
  }
  return entries;
}

/**
 * The most entries a tree may list. A tree may name one subtree many times: 25 tree objects of two
 * entries each list 2^25 paths, a push of a few kilobytes that held git's whole listing (gigabytes)
 * in memory and then wrote every path. A million is far past the repositories Consort serves.
 */
export const MAX_ENTRIES = 1_000_000;

/** The most bytes of files the writer writes: one large blob named many times fills the disk. */
export const MAX_BYTES = 4 * 1024 ** 3;

export interface TreeLimits {
  entries: number;
  bytes: number;
}
const LIMITS: TreeLimits = { entries: MAX_ENTRIES, bytes: MAX_BYTES };

/** `git ls-tree … -z`, entry by entry as git prints them, refused past `max` entries. */
async function* listing(root: string, args: readonly string[], sha: string, max: number): AsyncGenerator<TreeEntry> {
  const child = spawn(gitProgram(), [...SAFE_GIT_ARGS, ...args], {
    cwd: root,
    env: gitEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    if (stderr.length < 64 * 1024) stderr += d.toString();
  });
  const closed = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  closed.catch(() => undefined); // awaited below, unless the listing is given up first
  let count = 0;
  let rest = Buffer.alloc(0);
  let whole = false;
  try {
    for await (const piece of child.stdout as AsyncIterable<Buffer>) {
      let chunk = rest.length > 0 ? Buffer.concat([rest, piece]) : piece;
      for (let nul = chunk.indexOf(0); nul >= 0; nul = chunk.indexOf(0)) {
        if (++count > max)
          throw new ConsortError('invalid-input', `The commit ${sha.slice(0, 12)} lists more than ${max} paths.`, {
            hint: 'A tree that names one folder many times over lists more paths than any checkout could write.',
          });
        yield* parseTree(chunk.subarray(0, nul).toString('utf8'));
        chunk = chunk.subarray(nul + 1);
      }
      rest = Buffer.from(chunk);
    }
    whole = true;
  } finally {
    // Given up (too many paths, a refused one, the caller stopped): git has no more to say.
    if (!whole) child.kill();
  }
  const code = await closed;
  if (code !== 0) throw new ConsortError('invalid-input', `git ls-tree failed: ${stderr.trim() || `exit ${code}`}`);
}

/**
 * A path git would not check out: one that could lead out of `dest` or into a `.git` — as any file
 * system git guards reads the name (git's is_ntfs_dotgit and is_hfs_dotgit): NTFS drops trailing
 * dots and spaces and reads `git~1` as `.git`'s short name, HFS+ ignores some code points.
 */
const unsafePath = (p: string): boolean =>
  p.split('/').some((c) => c === '' || c === '.' || c === '..' || DOT_GIT.test(c.replace(HFS_IGNORED, '')));
const DOT_GIT = /^(\.git|git~1)[. ]*([:\\].*)?$/i;
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * Each blob of `ids` in order, streamed from one `git cat-file --batch`: `onStart` (given the size)
 * then `onChunk` for its bytes then `onEnd`, each awaited, so a large file never sits in memory.
 */
export async function streamBlobs(
  root: string,
  ids: readonly string[],
  sink: {
    onStart(index: number, size: number): Promise<void> | void;
    onChunk(index: number, bytes: Buffer): Promise<void> | void;
    onEnd(index: number): Promise<void> | void;
  },
): Promise<void> {
  if (ids.length === 0) return;
  const child = spawn(gitProgram(), [...SAFE_GIT_ARGS, 'cat-file', '--batch'], {
    cwd: root,
    env: gitEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const closed = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  child.stdin.on('error', () => undefined); // git gone early: its exit code tells
  child.stdin.end(ids.join('\n') + '\n');
  let index = 0;
  let header = Buffer.alloc(0);
  let left = -1; // bytes of the current blob still to come; -1 while reading a header
  let trailer = false; // the newline after a blob's bytes
  for await (const piece of child.stdout as AsyncIterable<Buffer>) {
    let chunk = piece;
    while (chunk.length > 0) {
      if (trailer) {
        chunk = chunk.subarray(1);
        trailer = false;
        continue;
      }
      if (left < 0) {
        const nl = chunk.indexOf(0x0a);
        if (nl < 0) {
          header = Buffer.concat([header, chunk]);
          break;
        }
        const line = Buffer.concat([header, chunk.subarray(0, nl)]).toString('latin1');
        header = Buffer.alloc(0);
        chunk = chunk.subarray(nl + 1);
        const [, type, size] = line.split(' ');
        if (type !== 'blob' || size === undefined)
          throw new ConsortError('invalid-input', `git cat-file: ${ids[index]} is not a blob (${line})`);
        left = Number(size);
        await sink.onStart(index, left);
      }
      const take = chunk.subarray(0, left);
      if (take.length > 0) await sink.onChunk(index, take);
      left -= take.length;
      chunk = chunk.subarray(take.length);
      if (left === 0) {
        await sink.onEnd(index++);
        left = -1;
        trailer = true;
      }
    }
  }
  const code = await closed;
  if (code !== 0 || index !== ids.length)
    throw new ConsortError('invalid-input', `git cat-file failed: ${stderr.trim() || `exit ${code}`}`);
}

/** Each blob of `ids` whole (small files: migrations, links' targets). */
export async function readBlobs(root: string, ids: readonly string[]): Promise<Buffer[]> {
  const parts: Buffer[][] = ids.map(() => []);
  await streamBlobs(root, ids, {
    onStart: () => undefined,
    onChunk: (i, bytes) => void parts[i]!.push(Buffer.from(bytes)),
    onEnd: () => undefined,
  });
  return parts.map((p) => Buffer.concat(p));
}

/**
 * Each link's target text, by path: at most MAX_TARGET + 1 bytes of it, so a link blob of any size
 * (git takes gigabytes) is neither held whole nor mistaken for a target short enough to follow.
 */
export async function linkTargets(root: string, entries: Iterable<TreeEntry>): Promise<Map<string, string>> {
  const links = [...entries].filter(isLink);
  const parts: Buffer[][] = links.map(() => []);
  const kept = links.map(() => 0);
  await streamBlobs(
    root,
    links.map((l) => l.id),
    {
      onStart: () => undefined,
      onChunk: (i, bytes) => {
        const take = bytes.subarray(0, MAX_TARGET + 1 - kept[i]!);
        if (take.length === 0) return;
        parts[i]!.push(Buffer.from(take));
        kept[i]! += take.length;
      },
      onEnd: () => undefined,
    },
  );
  return new Map(links.map((l, i) => [l.path, Buffer.concat(parts[i]!).toString('utf8')]));
}

/** Files up to this size are held whole and written several at a time. */
const SMALL = 1 << 20;
const AT_ONCE = 32;

/**
 * The tree of `sha` written into the existing, empty folder `dest`. Returns the links left out,
 * each with its target and why (one that leads outside, names nothing, or loops).
 */
export async function writeCommitTree(
  root: string,
  sha: string,
  dest: string,
  limits: TreeLimits = LIMITS,
): Promise<{ leftOut: string[] }> {
  const entries = await listTree(root, sha, undefined, limits.entries);
  // A file the file system refuses (a name over 255 bytes, a path too deep) stops the run naming it.
  const writing = <T>(at: string, work: Promise<T>): Promise<T> =>
    work.catch((e: unknown) => {
      const why = (e as NodeJS.ErrnoException).code ?? String(e);
      throw new ConsortError('invalid-input', `Could not write ${at} of the commit ${sha.slice(0, 12)}: ${why}.`, {
        cause: e,
      });
    });
  const all = [...entries.values()];
  for (const e of all)
    if (e.type !== 'blob') await writing(e.path, mkdir(path.join(dest, e.path), { recursive: true }));
  const files = all.filter((e) => e.type === 'blob' && !isLink(e));
  // Small files are written several at a time (one at a time cost half as much again as git
  // archive | tar on a 938-file tree); a large one is streamed to its file, never held whole.
  let handle: FileHandle | undefined;
  let parts: Buffer[] | undefined;
  let pending: Promise<void>[] = [];
  let total = 0;
  const fileOf = (i: number) => ({
    name: files[i]!.path,
    at: path.join(dest, files[i]!.path),
    mode: files[i]!.mode === '100755' ? 0o755 : 0o644,
  });
  try {
    await streamBlobs(
      root,
      files.map((f) => f.id),
      {
        onStart: async (i, size) => {
          if ((total += size) > limits.bytes)
            throw new ConsortError(
              'invalid-input',
              `The files of the commit ${sha.slice(0, 12)} come to more than ${limits.bytes} bytes (at ${files[i]!.path}).`,
              { hint: 'A tree that names one large file many times over fills the disk it is written to.' },
            );
          if (size <= SMALL) {
            parts = [];
            return;
          }
          const f = fileOf(i);
          // `wx`: a fresh file, never through a link (dest is a folder of this run's own).
          handle = await writing(f.name, open(f.at, 'wx', f.mode));
        },
        onChunk: async (i, bytes) => {
          if (parts) parts.push(Buffer.from(bytes));
          else await writing(fileOf(i).name, handle!.write(bytes));
        },
        onEnd: async (i) => {
          if (parts) {
            const f = fileOf(i);
            const write = writing(f.name, writeFile(f.at, Buffer.concat(parts), { flag: 'wx', mode: f.mode }));
            // Handled now: a write that fails while later blobs stream in would otherwise be an
            // unhandled rejection, which ends the whole process (the CLI's, the Action's).
            write.catch(() => undefined);
            pending.push(write);
            parts = undefined;
            if (pending.length >= AT_ONCE) await Promise.all(pending.splice(0));
            return;
          }
          await handle!.close();
          handle = undefined;
        },
      },
    );
    await Promise.all(pending);
  } finally {
    await handle?.close().catch(() => undefined);
    await Promise.allSettled(pending);
    pending = [];
  }
  const targets = await linkTargets(root, all);
  const leftOut: string[] = [];
  for (const [at, target] of targets) {
    const r = resolveInTree(entries, targets, at);
    if (r.kind === 'refused') leftOut.push(refusal(r));
    // The link as committed: it resolves on disk as it did in the tree, to what was written there.
    else await writing(at, symlink(target, path.join(dest, at)));
  }
  return { leftOut };
}
