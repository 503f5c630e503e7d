/**
 * The agent never changes what judges it: git's own files. An agent with a shell can write under
 * `.git/` — a hook that runs inside the conductor's next commit or push, an `include.path`,
 * `core.fsmonitor` or a clean filter in `config` that changes what git reports, an `info/exclude`
 * that hides a file from the scope check, a `refs/replace/` ref, an `objects/info/alternates`
 * entry, a `shallow` list, or an object file rewritten so that a known hash reads as other
 * content — and, as the same user, git's global files in the home folder (`~/.gitconfig`,
 * `~/.config/git/attributes`: a smudge filter rewrites a file as the proof's tree is checked out),
 * and the test runners' own ones there (`~/.npmrc`: `node-options` preloads a module into every
 * proof's suite), and the runner configuration found by walking up from a proof's worktree.
 *
 * Under bubblewrap the agent's turn sees the repository's git directory read-only
 * (src/lanes/tdd/turn.ts), so none of this can happen there. Everywhere, the conductor reads these
 * files before every turn and compares them after it: any difference is put back at once and
 * reported as the turn's change (the scope check refuses it, so the turn is refused and reverted).
 * Object files are judged by their content (see restoreObjects): a forged one is removed, and one
 * that is then missing stops the run, since nothing can put it back.
 */
import { createHash, randomUUID } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { ConsortError } from '../core/errors.js';
import type { FileChange } from '../conductor/events.js';
import { git } from './exec.js';
import { unplantLinks, wayTo } from './link-way.js';
import { pinnedCopies } from './pinned-config.js';
import { ownGitDir, type GitWorkspace } from './workspace.js';

/** Compared by content, relative to the common git directory. */
const GUARDED = [
  'config',
  'config.worktree',
  'hooks',
  'info',
  'commondir',
  'modules',
  'shallow',
  'refs/replace',
  'objects/info/alternates',
  'objects/info/http-alternates',
];

/**
 * Compared by content too, relative to a linked worktree's own git directory (`<common>/worktrees/<name>`):
 * `commondir` says where the object store, the refs and `config` are, and `config.worktree` is the
 * worktree's configuration when `extensions.worktreeConfig` is set.
 */
const OWN_GUARDED = ['commondir', 'config.worktree'];

/** git's global files, relative to the home folder every child gets (HOME; no XDG_CONFIG_HOME reaches one). */
const HOME_FILES = ['.gitconfig', '.config/git/config', '.config/git/attributes', '.config/git/ignore'];

/**
 * The test runners' and package managers' own global files in that home folder, which every proof's
 * suite reads as it starts, whatever the commit holds: npm's `~/.npmrc` (`node-options=--require
 * ~/x.cjs` preloads a module into every node process `npm test` starts, the test runner's workers
 * included), Yarn's, pnpm's, Bun's, Go's `go env -w` file (`GOFLAGS=-overlay=…` swaps source files at
 * build), Cargo's (a target `runner` runs every test binary), pip's and uv's. Compared like git's.
 */
const RUNNER_HOME_FILES = [
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  // pnpm's global configuration (`pnpm config set --global`), read besides ~/.npmrc.
  '.config/pnpm/rc',
  '.bunfig.toml',
  '.config/go/env',
  '.cargo/config',
  '.cargo/config.toml',
  '.config/pip/pip.conf',
  '.pip/pip.conf',
  '.config/uv/uv.toml',
];

/**
 * Files runners find by walking up from where they run, in every folder above the repository: a
 * proof's worktree lies next to the repository (src/lanes/tdd/clean-tree.ts), so those folders are
 * above it too, and an agent's turn can write them. pytest, when the commit holds no ini file of its
 * own, takes the first folder upward that has one (`pytest.ini`, even an empty one) as its rootdir
 * and loads its `conftest.py` (a hook there turns every test into a pass); cargo merges every
 * ancestor's `.cargo/config.toml`; jest, mocha, nyc, c8, tsc, deno and go look upward for theirs,
 * and pyenv's and asdf's shims for the version of python they run.
 */
const WALKED_UP = [
  'pytest.ini',
  '.pytest.ini',
  'pytest.toml',
  '.pytest.toml',
  'pyproject.toml',
  'tox.ini',
  'setup.cfg',
  'conftest.py',
  '.cargo/config',
  '.cargo/config.toml',
  'package.json',
  'jest.config.js',
  'jest.config.cjs',
  'jest.config.mjs',
  'jest.config.ts',
  'jest.config.json',
  '.mocharc.js',
  '.mocharc.cjs',
  '.mocharc.json',
  '.mocharc.jsonc',
  '.mocharc.yaml',
  '.mocharc.yml',
  '.nycrc',
  '.nycrc.json',
  '.nycrc.yaml',
  '.nycrc.yml',
  '.c8rc',
  '.c8rc.json',
  'tsconfig.json',
  'deno.json',
  'deno.jsonc',
  'go.work',
  // Which interpreter pyenv's and asdf's shims run.
  '.python-version',
  '.tool-versions',
];

/** WALKED_UP in the folder that holds the repository and every folder above it. */
function aboveRepository(top: string): string[] {
  const files: string[] = [];
  for (let dir = path.dirname(path.resolve(top)); ; dir = path.dirname(dir)) {
    for (const name of WALKED_UP) files.push(path.join(dir, name));
    if (path.dirname(dir) === dir) return files;
  }
}

/** npm's global configuration, `<prefix>/etc/npmrc`, where the prefix is the folder above the node binary's (a Node installed under the home folder makes it writable). */
const npmGlobalConfig = (): string => path.join(path.dirname(path.dirname(process.execPath)), 'etc', 'npmrc');

const LOOSE_DIR = /^[0-9a-f]{2}$/;
const LOOSE_NAME = /^([0-9a-f]{38}|[0-9a-f]{62})$/;
/** Packs, their indexes (which map an id to a place in the pack) and the multi-pack index; not git's temporary files. */
const PACK_NAME = /^(pack-[0-9a-f]+\.[a-z]+|multi-pack-index)$/;
const isLoose = (rel: string): boolean => !rel.startsWith('objects/pack/');

export interface GitSnapshot {
  /** The names compared, relative to the common git directory: GUARDED, and a linked worktree's own files. */
  guarded: string[];
  files: Map<string, Buffer>;
  home: Map<string, Buffer | null>;
  homeDir: string;
  /** The symlinks met on the way to `home`'s files, their own places and where those lead included (each link's path → its target). */
  homeLinks: Map<string, string>;
  /** The guarded names (config, hooks, …) that were symlinks: followed after a turn only as they were. */
  tops: Map<string, TopLink>;
  /** A linked worktree's `.git` file (which names its git directory); null in the main worktree. */
  dotGit: Buffer | null;
  /** `objects/…` path → inode:size:ctime. */
  objects: Map<string, string>;
  /** The worktree's HEAD file: a conditional include (onbranch:) depends on it. */
  head: Buffer | null;
}

/** A guarded name that is a symlink (`.git/hooks` → a shared folder), as the snapshot found it. */
interface TopLink {
  /** Its own target. */
  target: string;
  /** The links met on the way to where it leads, itself included (each link's path → its target). */
  way: Map<string, string>;
  /** Where it leads: the real path and the device and inode there; null when nowhere (dangling). */
  place: string | null;
}

/** A guarded name's link as it is now (null when it is no link). */
function topLink(full: string): TopLink | null {
  try {
    if (!lstatSync(full, { throwIfNoEntry: false })?.isSymbolicLink()) return null;
    return { target: readlinkSync(full), way: new Map(wayTo(full).links), place: placeOf(full) };
  } catch {
    return null;
  }
}

/** The real path a link leads to, and what is there (device and inode): a folder swapped in its place is another. */
function placeOf(full: string): string | null {
  try {
    const info = statSync(full);
    return `${realpathSync(full)}\0${info.dev}:${info.ino}`;
  } catch {
    return null;
  }
}

/**
 * What a guarded file holds in place of its bytes when it is neither a regular file nor a folder (a
 * FIFO or a device an agent planted, directly or behind a symlink): reading one could block forever.
 */
const NOT_A_FILE = Buffer.from('\0consort: not a regular file\0');
/** What a symlink to a folder (below the guarded folders themselves) holds in place of its bytes: its target. */
const LINK = Buffer.from('\0consort: symlink\0');
/**
 * What a file holds after a turn when its size alone shows that it changed (or the snapshot had no
 * file there to compare it with): its bytes are never read. Told apart by identity, not by bytes.
 */
const UNREAD = Buffer.from('\0consort: changed, not read\0');

/** Whether `now`, read after a turn, holds what `was` held. */
const unchanged = (now: Buffer, was: Buffer): boolean => now !== UNREAD && now.equals(was);

/**
 * Put `was` back at `file`: its bytes, its symlink, or, for what was no regular file (it cannot be
 * made again), nothing. Bytes are written aside and renamed over a regular file: no moment without one.
 */
async function putBack(file: string, was: Buffer): Promise<void> {
  if (was.equals(NOT_A_FILE) || was.subarray(0, LINK.length).equals(LINK) || !isRegularFile(file))
    await rm(file, { recursive: true, force: true });
  if (was.equals(NOT_A_FILE)) return;
  await mkdir(path.dirname(file), { recursive: true });
  if (was.subarray(0, LINK.length).equals(LINK)) {
    await symlink(was.subarray(LINK.length).toString(), file);
    return;
  }
  const temp = `${file}.${randomUUID()}`;
  await writeFile(temp, was);
  await rename(temp, file);
}

function isRegularFile(file: string): boolean {
  try {
    return lstatSync(file, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

/** After a turn, what the walk compares with: the snapshot's top links and files. */
interface AfterTurn {
  tops: Map<string, TopLink>;
  files: Map<string, Buffer>;
}

/**
 * Whether a file of `size` bytes may hold `was`. After a turn only such a file is read: one planted
 * (nothing to compare) or grown (a GiB of zeros) is a change without its bytes, never read into memory.
 */
const sameSize = (size: number, was: Buffer | null | undefined): boolean => was != null && was.length === size;

/**
 * Every file under `rel`, read synchronously, as `objectFiles` is: a guard reads a few dozen small
 * files (config, hooks, info/), and one trip through libuv's thread pool per file and folder cost
 * 8–12 ms per guard on a busy run (four guards a cycle), where the same reads on the main thread take one.
 */
function walk(root: string, rel: string, into: Map<string, Buffer>, depth = 0, after?: AfterTurn): void {
  const full = path.join(root, rel);
  try {
    const own = lstatSync(full, { throwIfNoEntry: false });
    if (own === undefined) return;
    // After a turn, a guarded name that has become a link since the snapshot (or now links elsewhere,
    // or leads elsewhere: `~/shared-hooks` made a link to `.git`, a folder on the way swapped) is the
    // link itself: following it would read, and removing what is 'added' under it would remove,
    // whatever folder it names (`.git/info` → `~`), and a link to a copy of `config` would read the same.
    if (depth === 0 && after !== undefined && own.isSymbolicLink()) {
      const target = readlinkSync(full);
      const top = after.tops.get(rel);
      if (top?.target !== target || placeOf(full) !== top.place) {
        into.set(rel, Buffer.concat([LINK, Buffer.from(target)]));
        return;
      }
    }
    // Symlinks are followed, as git follows them: to a file (a hook kept elsewhere), and at the top
    // (a hooks folder linked to a shared one). A folder linked from inside is the link itself: never
    // walked (a loop would not end, and removing what is under it would remove the folder it names).
    const info = statSync(full, { throwIfNoEntry: false });
    if (info === undefined) {
      into.set(rel, NOT_A_FILE); // a dangling symlink holds nothing git reads, but planted it is a change
      return;
    }
    if (info.isDirectory()) {
      if (own.isSymbolicLink() && depth > 0) into.set(rel, Buffer.concat([LINK, Buffer.from(readlinkSync(full))]));
      else for (const name of readdirSync(full)) walk(root, path.posix.join(rel, name), into, depth + 1, after);
      return;
    }
    if (!info.isFile()) into.set(rel, NOT_A_FILE);
    else if (after !== undefined && !sameSize(info.size, after.files.get(rel))) into.set(rel, UNREAD);
    else into.set(rel, readOr(full) ?? NOT_A_FILE);
  } catch {
    // A symlink loop (ELOOP), a link to a name too long (ENAMETOOLONG), a folder that cannot be
    // listed: git reads nothing there either, but planted it is a change (removed, the link itself),
    // and the guard goes on to put the rest back.
    into.set(rel, NOT_A_FILE);
  }
}

/** A file's bytes, or null when it cannot be read (gone, or unreadable). */
function readOr(file: string): Buffer | null {
  try {
    return readFileSync(file);
  } catch {
    return null;
  }
}

/** A linked worktree's `.git` file (null in the main worktree, whose `.git` is the git directory). */
function dotGitFile(ws: GitWorkspace): Buffer | null {
  const file = path.join(ws.top, '.git');
  return lstatSync(file, { throwIfNoEntry: false })?.isFile() ? readOr(file) : null;
}

/**
 * A file's bytes when it is a regular file (following symlinks); null when there is none, NOT_A_FILE
 * for anything else. Given what it held at the snapshot (after a turn), UNREAD when its size differs.
 */
function readRegular(file: string, was?: Buffer | null): Buffer | null {
  let info;
  try {
    info = statSync(file, { throwIfNoEntry: false });
  } catch (e) {
    // A folder on the way that is a file holds nothing, as for git; a loop or a name too long is a change.
    return (e as NodeJS.ErrnoException).code === 'ENOTDIR' ? null : NOT_A_FILE;
  }
  if (info === undefined) return null;
  if (!info.isFile()) return NOT_A_FILE;
  return was === undefined || sameSize(info.size, was) ? readOr(file) : UNREAD;
}

/**
 * Every loose object and pack file, as `objects/…` paths. Read synchronously, as `fingerprint`
 * stats: a repository holds thousands of loose objects (the conductor's commits add some every
 * turn, and its git runs no gc), and one trip through libuv's thread pool per directory and per file
 * cost 150–250 ms before every turn, where the same calls on the main thread take a few.
 */
function objectFiles(gitDir: string): string[] {
  const objects = path.join(gitDir, 'objects');
  const out: string[] = [];
  for (const dir of readdirOr(objects)) {
    const named = dir === 'pack' ? PACK_NAME : LOOSE_DIR.test(dir) ? LOOSE_NAME : null;
    if (named === null) continue;
    for (const name of readdirOr(path.join(objects, dir))) if (named.test(name)) out.push(`objects/${dir}/${name}`);
  }
  return out;
}

function readdirOr(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function fingerprint(file: string): string | null {
  const s = statSync(file, { throwIfNoEntry: false });
  return s === undefined ? null : `${s.ino}:${s.size}:${s.ctimeMs}`;
}

/** Whether a loose object's content hashes to its name (sha1 or sha256, by the name's length). */
async function looseObjectIsSound(file: string, rel: string): Promise<boolean> {
  const [, dir, name] = rel.split('/') as [string, string, string];
  try {
    const raw = inflateSync(await readFile(file));
    const id = dir + name;
    return (
      createHash(id.length === 40 ? 'sha1' : 'sha256')
        .update(raw)
        .digest('hex') === id
    );
  } catch {
    return false;
  }
}

/** Whether a pack file still verifies against its index (every object's hash recomputed). */
async function packIsSound(ws: GitWorkspace, rel: string): Promise<boolean> {
  if (rel.endsWith('multi-pack-index'))
    return (
      (await git(ws.top, ['multi-pack-index', '--object-dir', path.join(ws.gitDir, 'objects'), 'verify'])).code === 0
    );
  const m = /^objects\/pack\/(pack-[0-9a-f]+)\.(pack|idx)$/.exec(rel);
  if (m === null) return true; // .rev, .bitmap, .keep, .mtimes: caches and markers, rebuilt from the pack
  return (await git(ws.top, ['verify-pack', path.join(ws.gitDir, 'objects', 'pack', `${m[1]}.idx`)])).code === 0;
}

/**
 * git's global files: the fixed ones, every file the global configuration includes, and the
 * excludes and attributes files it names (absolute paths).
 */
async function globalFiles(ws: GitWorkspace, homeDir: string): Promise<string[]> {
  const files = new Set([...HOME_FILES, ...RUNNER_HOME_FILES].map((rel) => path.join(homeDir, rel)));
  files.add(npmGlobalConfig());
  for (const file of aboveRepository(ws.top)) files.add(file);
  // One git for every included file (an empty one lists no key of its own, relative to the file
  // that includes it) and the two files named by a key (the last setting wins, as for --get).
  const listed = await git(
    ws.top,
    [
      'config',
      '--global',
      '--includes',
      '--show-origin',
      '--path',
      '--get-regexp',
      '^(include(if\\..+)?\\.path|core\\.excludesfile|core\\.attributesfile)$',
    ],
    { env: { HOME: homeDir }, realGlobalConfig: true },
  );
  const named = new Map<string, string>();
  for (const line of listed.stdout.split('\n')) {
    const m = /^file:(.+?)\t(\S+) (.+)$/.exec(line);
    if (m === null) continue;
    const [, origin, key, value] = m as unknown as [string, string, string, string];
    if (key === 'core.excludesfile' || key === 'core.attributesfile') named.set(key, value);
    else files.add(path.resolve(path.dirname(path.resolve(homeDir, origin)), value));
  }
  for (const value of named.values()) files.add(path.resolve(homeDir, value));
  // The pin's copies of the excludes and attributes files: what the conductor's git reads instead.
  for (const copy of pinnedCopies()) files.add(copy);
  return [...files].sort();
}

/**
 * `.git`'s control files, git's global files and the object store as they are now. `previous`, a
 * snapshot of the same repository taken earlier in this process, saves asking git which global
 * files there are: when every one it listed still holds the same bytes, the list (which git makes
 * from those files alone) is the same.
 */
export async function snapshotGit(ws: GitWorkspace, previous?: GitSnapshot): Promise<GitSnapshot> {
  const files = new Map<string, Buffer>();
  const tops = new Map<string, TopLink>();
  const guarded = guardedNames(ws);
  for (const rel of guarded) {
    walk(ws.gitDir, rel, files);
    const top = topLink(path.join(ws.gitDir, rel));
    if (top !== null) tops.set(rel, top);
  }
  // The HOME every child is given (src/core/child-env.ts takes it from this process's environment).
  const homeDir = process.env.HOME || os.homedir();
  const read = (list: readonly string[]) => new Map(list.map((file) => [file, readRegular(file)] as const));
  const head = headFile(ws);
  let home = previous?.homeDir === homeDir && sameBytes(head, previous.head) ? read([...previous.home.keys()]) : null;
  if (home === null || [...home].some(([file, content]) => !sameBytes(content, previous!.home.get(file) ?? null)))
    home = read(await globalFiles(ws, homeDir));
  const homeLinks = new Map<string, string>();
  for (const file of home.keys()) for (const [link, target] of wayTo(file).links) homeLinks.set(link, target);
  const dotGit = dotGitFile(ws);
  return { guarded, files, tops, home, homeDir, homeLinks, dotGit, objects: objectPrints(ws), head };
}

/** GUARDED, and in a linked worktree its own git directory's files (relative to the common one). */
function guardedNames(ws: GitWorkspace): string[] {
  const own = ownGitDir(ws);
  if (own === null || path.resolve(own) === path.resolve(ws.gitDir)) return GUARDED;
  const rel = path.relative(ws.gitDir, own);
  return [...GUARDED, ...OWN_GUARDED.map((name) => path.join(rel, name))];
}

/** The worktree's HEAD file as bytes (null when there is none). */
function headFile(ws: GitWorkspace): Buffer | null {
  const own = ownGitDir(ws);
  return own === null ? null : readRegular(path.join(own, 'HEAD'));
}

/** Every object file's fingerprint now. */
function objectPrints(ws: GitWorkspace): Map<string, string> {
  const objects = new Map<string, string>();
  for (const rel of objectFiles(ws.gitDir)) {
    const fp = fingerprint(path.join(ws.gitDir, rel));
    if (fp !== null) objects.set(rel, fp);
  }
  return objects;
}

/**
 * A snapshot whose files were just put back (restoreGit), with the object store as it is now (the
 * conductor's commits add objects): what the next guard starts from without reading anything again.
 */
export async function settledSnapshot(ws: GitWorkspace, restored: GitSnapshot): Promise<GitSnapshot> {
  // A detached HEAD names the commit itself: the conductor's commits since moved it, so it is read
  // again (as a fresh snapshot would) — but only for another detached id; a branch stays the one put back.
  let head = restored.head;
  if (head !== null && DETACHED.test(head.toString('utf8').trim())) {
    const now = headFile(ws);
    if (now !== null && DETACHED.test(now.toString('utf8').trim())) head = now;
  }
  return { ...restored, head, objects: objectPrints(ws) };
}

const DETACHED = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

const sameBytes = (a: Buffer | null, b: Buffer | null): boolean =>
  a === null ? b === null : b !== null && a.equals(b);

/**
 * Object files are content-addressed, so a changed one is judged by its content: git itself
 * touches an existing object's times (it "freshens" one it would write again, from any worktree of
 * the repository), which is no change. A loose object that no longer hashes to its name, a pack
 * that no longer verifies, an object gone, or a new pack, is the turn's change: the forged file is
 * removed, and an object that is then missing stops the run (its content cannot be put back).
 */
async function restoreObjects(ws: GitWorkspace, before: GitSnapshot, changes: FileChange[]): Promise<void> {
  const lost: string[] = [];
  const now = new Set(objectFiles(ws.gitDir));
  for (const [rel, fp] of before.objects) {
    const full = path.join(ws.gitDir, rel);
    const present = now.has(rel);
    if (present && fingerprint(full) === fp) continue;
    if (present && (isLoose(rel) ? await looseObjectIsSound(full, rel) : await packIsSound(ws, rel))) continue;
    changes.push({ path: `.git/${rel}`, status: present ? 'modified' : 'deleted' });
    await rm(full, { force: true });
    if (!isLoose(rel) && rel.endsWith('.pack')) await rm(full.replace(/\.pack$/, '.idx'), { force: true });
    // Gone from the loose store, but git may still hold it in a pack.
    const id = isLoose(rel) ? rel.split('/').slice(1).join('') : null;
    if (id === null || (await git(ws.top, ['cat-file', '-e', id])).code !== 0) lost.push(rel);
  }
  for (const rel of now) {
    if (before.objects.has(rel)) continue;
    const full = path.join(ws.gitDir, rel);
    // A new loose object is git's when its content hashes to its name; a new pack is nobody's during a turn.
    if (isLoose(rel) && (await looseObjectIsSound(full, rel))) continue;
    changes.push({ path: `.git/${rel}`, status: 'added' });
    await rm(full, { force: true });
  }
  if (lost.length > 0)
    throw new ConsortError(
      'internal',
      `A turn rewrote or removed objects in git's store (${lost.slice(0, 5).join(', ')}${lost.length > 5 ? ', …' : ''}): ` +
        'forged files were removed, so that nothing reads their content, and these cannot be put back.',
      {
        hint: "Restore the repository's missing objects from a clone (git fetch), and do not run that agent again.",
      },
    );
}

/**
 * Put a global file back as the snapshot had it. Nothing is put back through a link the turn made on
 * the way (`~/.config/git` → the repository's `.git`, which the sandbox keeps read-only to that code),
 * in the file's place (`~/.gitconfig` → a copy) or beyond (a dotfiles folder made a link): those links
 * go first, or point back where they were. The user's own link in its place (`~/.gitconfig` → a
 * dotfiles repository) stays, and is made again if the turn replaced it: the bytes go back where it
 * leads, written aside in that folder and renamed over the file.
 */
async function restoreHomeFile(
  file: string,
  was: Buffer | null,
  before: GitSnapshot,
  changes: FileChange[],
): Promise<void> {
  await unplantLinks(path.dirname(file), before.homeLinks, before.homeDir, changes);
  // The file's own place, where its folder's way (the snapshot's again) leads.
  const own = path.join(wayTo(path.dirname(file)).end ?? path.dirname(file), path.basename(file));
  const undone = await unplantLinks(file, before.homeLinks, before.homeDir, changes, own);
  const userLink = before.homeLinks.get(own);
  const relinked = userLink !== undefined && !lstatOr(own)?.isSymbolicLink();
  if (relinked) {
    await rm(own, { recursive: true, force: true });
    await mkdir(path.dirname(own), { recursive: true });
    await symlink(userLink, own);
  }
  const content = readRegular(file, was);
  const same = content === null ? was === null : was !== null && unchanged(content, was);
  const moved = relinked || undone.includes(own);
  if (same && !moved) return;
  const status = was === null ? 'added' : content === null && !moved ? 'deleted' : 'modified';
  changes.push({ path: `~/${path.relative(before.homeDir, file)}`, status });
  if (same) return;
  const at = wayTo(file).end ?? file;
  if (was === null) await rm(at, { recursive: true, force: true });
  else await putBack(at, was);
}

function lstatOr(file: string) {
  try {
    return lstatSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** Puts `.git` (and git's global files) back as the snapshot had them; returns what had changed. */
export async function restoreGit(ws: GitWorkspace, before: GitSnapshot): Promise<FileChange[]> {
  const changes: FileChange[] = [];
  // A guarded name the user linked elsewhere, still that link: what the turn planted on its way is
  // undone (the links only). Where it then leads anywhere but where it led, the walk takes the link
  // itself for the change, so that nothing is read or removed through it.
  for (const [rel, top] of before.tops) {
    const full = path.join(ws.gitDir, rel);
    if (topLink(full)?.target === top.target) await unplantLinks(full, top.way, before.homeDir, changes);
  }
  const now = new Map<string, Buffer>();
  // The snapshot's names: a `.git` file pointed at another git directory since is put back below.
  for (const rel of before.guarded) walk(ws.gitDir, rel, now, 0, { tops: before.tops, files: before.files });
  /** Guarded folders whose link was the change: what the snapshot had under them is put back with them. */
  const replaced: string[] = [];
  for (const [rel, content] of now) {
    const was = before.files.get(rel);
    if (was === undefined) {
      changes.push({ path: `.git/${rel}`, status: before.tops.has(rel) ? 'modified' : 'added' });
      if (before.guarded.includes(rel)) replaced.push(`${rel}/`);
      await rm(path.join(ws.gitDir, rel), { recursive: true, force: true });
    } else if (!unchanged(content, was)) {
      changes.push({ path: `.git/${rel}`, status: 'modified' });
      await putBack(path.join(ws.gitDir, rel), was);
    }
  }
  for (const [rel, content] of before.files) {
    if (now.has(rel)) continue;
    if (!replaced.some((folder) => rel.startsWith(folder))) changes.push({ path: `.git/${rel}`, status: 'deleted' });
    await putBack(path.join(ws.gitDir, rel), content);
  }
  if (before.dotGit !== null) {
    const file = path.join(ws.top, '.git');
    const content = readRegular(file, before.dotGit);
    if (content === null || !unchanged(content, before.dotGit)) {
      changes.push({ path: '.git', status: 'modified' });
      await putBack(file, before.dotGit);
    }
  }
  for (const [file, was] of before.home) await restoreHomeFile(file, was, before, changes);
  await restoreObjects(ws, before, changes);
  return changes.sort((a, b) => (a.path < b.path ? -1 : 1));
}
