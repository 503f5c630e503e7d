/**
 * `git commit` without the process: the index `git add` just wrote becomes tree objects, a commit
 * object and a ref update, written from here as git writes them. The conductor commits once per
 * turn, and the `git commit` process was 30–65 ms of it on a 2-core box; this is a few ms.
 *
 * Only the plain case is done here, and everything else answers `fallback` (the caller then runs
 * `git commit` exactly as before): index versions 2 and 3 without a split or sparse index,
 * unmerged or intent-to-add entries; SHA-1 repositories with the files ref backend (no
 * `extensions.*` but `worktreeConfig`); an identity configured explicitly (name and email, which
 * git would not alter); no lock file, no merge, cherry-pick, revert or rebase in progress; a HEAD
 * that is a branch under `refs/heads/` or detached, whose commit is a loose object; no
 * `core.sharedRepository`, `core.fsync*`, `commit.cleanup` or non-UTF-8 `i18n.commitEncoding`.
 *
 * Trust: nothing read from `.git` is run, and the index's cache-tree extension is not trusted —
 * every tree is computed from the index's entries, whose paths are checked as git checks them
 * (no `.git`, `.` or `..` component). A new tree's blobs must exist (loose or in a pack), as `git
 * commit` requires. Files are created exclusively (`wx`: never through a planted symlink), and
 * every folder written in below the git directories must be a real folder, not a symlink. A link
 * where a commit writes is refused, not left to `git commit`, which would write through it (see
 * commitPlaces). The `.git` guard (guard.ts) still compares git's control files around every turn.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import { git } from './exec.js';
import { parseConfigList } from './pinned-config.js';
import { gitEnv } from './safe.js';
import { ownGitDir, type GitWorkspace } from './workspace.js';

export type CommitOutcome =
  | { kind: 'committed'; commit: string }
  | { kind: 'nothing' }
  | { kind: 'fallback'; reason: string }
  /** A link where a commit writes (see commitPlaces), an index git would commit as a broken tree: nobody may commit. */
  | { kind: 'refused'; reason: string };

export interface CommitOptions {
  /** Rewrite HEAD (same message and author, HEAD's parents), even when the tree is unchanged. */
  amend?: boolean;
  /** Seconds since the epoch and the offset in minutes east of UTC (default: now, local time as git reads it). */
  date?: { seconds: number; offset: number };
}

/** Thrown inside to give up before the ref is moved; caught in commitIndex. */
class Fallback extends Error {}
const give = (reason: string): never => {
  throw new Fallback(reason);
};

/** Thrown inside when giving up to `git commit` would not do either: it would write through a link, or a broken tree. */
class Refusal extends Error {}
const refuse = (reason: string): never => {
  throw new Refusal(reason);
};

const ID = /^[0-9a-f]{40}$/;

/**
 * Commit the worktree's index on HEAD as `git commit --no-verify -m message` would (or `--amend
 * --no-edit --allow-empty` with `amend`). `fallback`: nothing was changed, run git.
 */
export async function commitIndex(
  ws: GitWorkspace,
  message: string,
  options: CommitOptions = {},
): Promise<CommitOutcome> {
  try {
    const own = commitPlaces(ws);
    const config = await repoConfig(ws, own);
    return commitWith(ws, own, config, message, options);
  } catch (e) {
    if (e instanceof Refusal) return { kind: 'refused', reason: e.message };
    // Any failure (a file that cannot be read, a full disk) leaves the ref where it was: the only
    // step after its rename cannot throw. Objects already written are harmless; git tries then.
    return { kind: 'fallback', reason: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * The worktree's own git directory, once nothing a commit writes leads out of the git directory;
 * throws a Refusal when something does. Without bubblewrap an agent can plant links in `.git`
 * that the guard does not compare (it compares git's control files, and objects by content): a
 * reflog hard-linked to a file outside, or a symlink in place of a reflog, of `COMMIT_EDITMSG`, of
 * a folder of loose objects (or of `objects/pack`, where `git add` streams a big file), refs or
 * reflogs, or of `.git` itself. This module writes nothing through a symlink, but `git commit`,
 * where it gives up, appends its reflog lines, writes its objects and ref locks and overwrites
 * `COMMIT_EDITMSG` through every one of them (and `git add` its blobs); a hard link O_NOFOLLOW
 * does not see. So these are looked at before anything else, for both.
 */
function commitPlaces(ws: GitWorkspace): string {
  const common = ws.gitDir;
  if (lstatSync(path.join(ws.top, '.git'), { throwIfNoEntry: false })?.isSymbolicLink())
    refuse('.git is a symbolic link');
  const own = ownGitDir(ws) ?? give('no git directory');
  const name = (p: string): string => path.relative(common, p) || '.';
  /** The folders of `rel` under `base` that exist (the rest is made): none a symlink. */
  const folders = (base: string, rel: string): void => {
    let at = base;
    for (const part of rel.split(/[\\/]/).filter((p) => p !== '' && p !== '.')) {
      at = path.join(at, part);
      const stat = lstatSync(at, { throwIfNoEntry: false });
      if (stat === undefined) return;
      if (stat.isSymbolicLink()) refuse(`${name(at)} is a symbolic link`);
    }
  };
  /** A file a commit appends to or rewrites in place: no symlink, no other hard link. */
  const file = (p: string): void => {
    const stat = lstatSync(p, { throwIfNoEntry: false });
    if (stat?.isSymbolicLink()) refuse(`${name(p)} is a symbolic link`);
    if (stat !== undefined && stat.nlink > 1)
      refuse(`${name(p)} is hard-linked to another file (it has ${stat.nlink} links)`);
  };
  const inside = path.relative(common, own);
  if (inside !== '' && !inside.startsWith('..') && !path.isAbsolute(inside)) folders(common, inside);
  folders(common, 'objects');
  for (const entry of readdirSync(path.join(common, 'objects'), { withFileTypes: true }))
    if (/^([0-9a-f]{2}|pack)$/.test(entry.name) && entry.isSymbolicLink())
      refuse(`objects/${entry.name} is a symbolic link`);
  const ref = /^ref: (refs\/\S+)\s*$/.exec(readFileSync(path.join(own, 'HEAD'), 'latin1'))?.[1];
  if (ref !== undefined && !ref.split('/').some((c) => c === '..' || c === '.' || c === '')) {
    folders(common, path.dirname(ref));
    folders(common, path.join('logs', path.dirname(ref)));
    file(path.join(common, 'logs', ref));
  }
  folders(own, 'logs');
  file(path.join(own, 'logs', 'HEAD'));
  file(path.join(own, 'COMMIT_EDITMSG'));
  return own;
}

/** Why nothing may commit in the workspace (a link where a commit writes, see commitPlaces); null when something may. */
export function commitRefusal(ws: GitWorkspace): string | null {
  try {
    commitPlaces(ws);
    return null;
  } catch (e) {
    return e instanceof Refusal ? e.message : null;
  }
}

interface RepoConfig {
  author: string;
  committer: string;
  logAll: boolean;
}

/** The config keys' values that matter, checked; read by one `git config --list`, kept while its files are unchanged. */
const configs = new Map<string, { signature: string; config: RepoConfig }>();

async function repoConfig(ws: GitWorkspace, own: string): Promise<RepoConfig> {
  const env = gitEnv();
  const home = env.HOME ?? '';
  const files = [
    path.join(ws.gitDir, 'config'),
    path.join(own, 'config.worktree'),
    ...(env.GIT_CONFIG_GLOBAL
      ? [env.GIT_CONFIG_GLOBAL]
      : [path.join(home, '.gitconfig'), path.join(home, '.config/git/config')]),
  ];
  const signature = [
    ...ws.identity,
    ...files.map((f) => {
      const s = statSync(f, { throwIfNoEntry: false, bigint: true });
      return s === undefined ? `${f}:-` : `${f}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    }),
  ].join('\0');
  const key = `${ws.gitDir}\0${own}`;
  const known = configs.get(key);
  if (known?.signature === signature) return known.config;
  const listed = await git(ws.top, [...ws.identity, 'config', '--list', '-z']);
  if (listed.code !== 0) give('git config failed');
  const values = new Map<string, string>();
  let includes = false;
  for (const [k, v] of parseConfigList(listed.stdout)) {
    const lower = k.toLowerCase();
    if (lower === 'include.path' || lower.startsWith('includeif.')) includes = true;
    values.set(lower, v);
  }
  const config = checkedConfig(values);
  // A file an include names is not in the signature: read again every time then.
  if (includes) configs.delete(key);
  else configs.set(key, { signature, config });
  return config;
}

function checkedConfig(values: Map<string, string>): RepoConfig {
  for (const key of values.keys()) {
    if (key.startsWith('extensions.') && key !== 'extensions.worktreeconfig') give(`${key} is set`);
    if (/^core\.(sharedrepository|fsync|fsyncobjectfiles|fsyncmethod)$/.test(key)) give(`${key} is set`);
    if (key === 'commit.cleanup') give(`${key} is set`);
  }
  if (!['0', '1', undefined].includes(values.get('core.repositoryformatversion'))) give('repository format');
  const encoding = values.get('i18n.commitencoding')?.toLowerCase();
  if (encoding !== undefined && encoding !== 'utf-8' && encoding !== 'utf8') give('commit encoding');
  const ident = (role: 'author' | 'committer'): string => {
    const name = values.get(`${role}.name`) ?? values.get('user.name');
    const email = values.get(`${role}.email`) ?? values.get('user.email');
    if (name === undefined || email === undefined || !plain(name) || !plain(email)) give(`no plain ${role} identity`);
    return `${name} <${email}>`;
  };
  const logAll = (values.get('core.logallrefupdates') ?? 'true').toLowerCase();
  let log: boolean;
  if (['true', 'yes', 'on', 'always', ''].includes(logAll)) log = logAll !== '';
  else if (['false', 'no', 'off'].includes(logAll)) log = false;
  else if (/^-?\d+$/.test(logAll)) log = Number(logAll) !== 0;
  else return give('core.logAllRefUpdates');
  return { author: ident('author'), committer: ident('committer'), logAll: log };
}

/** A name or email git's ident code would write as it is: no crud at either end, no `<`, `>` or newline. */
function plain(text: string): boolean {
  if (text === '' || /[<>\n\0]/.test(text)) return false;
  const crud = (c: number): boolean => c <= 32 || '.,:;<>"\\\''.includes(String.fromCharCode(c));
  const bytes = Buffer.from(text);
  return !crud(bytes[0]!) && !crud(bytes[bytes.length - 1]!);
}

/** `git commit -m`'s default cleanup (whitespace): lines right-trimmed, blank runs to one, none at either end. */
export function cleanMessage(message: string): string {
  const kept: string[] = [];
  let blank = false;
  for (const line of message.split('\n')) {
    const trimmed = line.replace(/[ \t\n\r]+$/, '');
    if (trimmed === '') {
      blank = true;
      continue;
    }
    if (blank && kept.length > 0) kept.push('');
    blank = false;
    kept.push(trimmed);
  }
  return kept.map((l) => `${l}\n`).join('');
}

/** A reflog message as git's copy_reflog_msg makes it: whitespace runs to one space, none at the ends. */
function reflogMessage(text: string): string {
  return text.replace(/[ \t\n\r]+/g, ' ').trim();
}

function dateNow(): { seconds: number; offset: number } {
  const now = new Date();
  return { seconds: Math.floor(now.getTime() / 1000), offset: -now.getTimezoneOffset() };
}

function formatDate(d: { seconds: number; offset: number }): string {
  const abs = Math.abs(d.offset);
  const hhmm = String(Math.floor(abs / 60) * 100 + (abs % 60)).padStart(4, '0');
  return `${d.seconds} ${d.offset < 0 ? '-' : '+'}${hhmm}`;
}

function commitWith(
  ws: GitWorkspace,
  own: string,
  config: RepoConfig,
  message: string,
  options: CommitOptions,
): CommitOutcome {
  const common = ws.gitDir;
  for (const name of [
    'MERGE_HEAD',
    'CHERRY_PICK_HEAD',
    'REVERT_HEAD',
    'MERGE_MSG',
    'MERGE_MODE',
    'SQUASH_MSG',
    'AUTO_MERGE',
    'rebase-merge',
    'rebase-apply',
    'sequencer',
  ])
    if (exists(path.join(own, name))) give(`${name} exists`);
  for (const lock of [path.join(own, 'index.lock'), path.join(own, 'HEAD.lock'), path.join(common, 'packed-refs.lock')])
    if (exists(lock)) give(`${path.basename(lock)} exists`);

  // HEAD: a branch's ref or a detached id.
  const headText = readFileSync(path.join(own, 'HEAD'), 'latin1');
  const detached = /^([0-9a-f]{40})\n?$/.exec(headText)?.[1];
  const ref = detached === undefined ? /^ref: (refs\/heads\/\S+)\n?$/.exec(headText)?.[1] : undefined;
  if (detached === undefined && (ref === undefined || !saneRef(ref))) give('HEAD is neither a branch nor detached');
  const parent = detached ?? refValue(common, ref!) ?? give('the branch has no commit yet');
  if (ref !== undefined && exists(path.join(common, `${ref}.lock`))) give(`${ref}.lock exists`);

  const objects = new ObjectStore(path.join(common, 'objects'));
  try {
    const head = parseCommit(objects.readLoose(parent, 'commit') ?? give('HEAD is not a loose commit'));
    const entries = readIndex(path.join(own, 'index'));
    const trees = buildTrees(entries);
    const root = trees[trees.length - 1]!;
    if (!options.amend && root.id === head.tree) return { kind: 'nothing' };

    let body: string;
    if (options.amend) {
      if (head.extra) give('HEAD has other headers');
      const author = /^(.+ <[^<>]*>) (\d+ [+-]\d{4})$/.exec(head.author);
      if (author === null || !plain(/^(.*) </.exec(author[1]!)![1]!)) give('HEAD has no plain author');
      body = cleanMessage(head.message);
    } else {
      body = cleanMessage(message);
    }
    if (body === '' || body.includes('\0')) give('empty message');

    // Every new tree's blobs must exist, as git commit checks.
    const fresh = trees.filter((t) => !objects.has(t.id));
    for (const t of fresh) for (const blob of t.blobs) if (!objects.has(blob)) give(`blob ${blob} is missing`);

    const when = formatDate(options.date ?? dateNow());
    const parents = options.amend ? head.parents : [parent];
    const text =
      `tree ${root.id}\n` +
      parents.map((p) => `parent ${p}\n`).join('') +
      `author ${options.amend ? head.author : `${config.author} ${when}`}\n` +
      `committer ${config.committer} ${when}\n\n` +
      body;
    const commit = Buffer.from(text, 'utf8');
    const id = hashObject('commit', commit);

    checkRefPaths(common, own, ref);
    for (const t of fresh) objects.write(t.id, 'tree', t.body);
    objects.write(id, 'commit', commit);

    const subject = body.slice(0, body.indexOf('\n'));
    const logLine = `${parent} ${id} ${config.committer} ${when}\t${reflogMessage(`commit${options.amend ? ' (amend)' : ''}: ${subject}`)}\n`;
    updateRef(common, own, ref, parent, id, logLine, config.logAll);
    return { kind: 'committed', commit: id };
  } finally {
    objects.close();
  }
}

function exists(p: string): boolean {
  return lstatSync(p, { throwIfNoEntry: false }) !== undefined;
}

/** A branch name git would write as a loose ref: plain components, none hidden or a lock. */
function saneRef(ref: string): boolean {
  return ref
    .slice('refs/heads/'.length)
    .split('/')
    .every(
      (c) => /^[A-Za-z0-9_][A-Za-z0-9._+-]*$/.test(c) && !c.endsWith('.lock') && !c.endsWith('.') && !c.includes('..'),
    );
}

/** A ref's value: its loose file, else its `packed-refs` line; null when it has none. */
function refValue(common: string, ref: string): string | null {
  const file = path.join(common, ref);
  const stat = lstatSync(file, { throwIfNoEntry: false });
  if (stat !== undefined) {
    if (!stat.isFile()) give(`${ref} is not a plain file`);
    const value = readFileSync(file, 'latin1').trim();
    return ID.test(value) ? value : give(`${ref} holds no id`);
  }
  const packed = lstatSync(path.join(common, 'packed-refs'), { throwIfNoEntry: false });
  if (packed === undefined) return null;
  if (!packed.isFile()) give('packed-refs is not a plain file');
  // git reads the last of several lines for one ref (an agent's forged first line would make the
  // commit's parent a commit git does not see): the plain case has one.
  let found: string | null = null;
  for (const line of readFileSync(path.join(common, 'packed-refs'), 'latin1').split('\n')) {
    const [value, name] = line.split(' ');
    if (name !== ref) continue;
    if (found !== null) give(`packed-refs names ${ref} more than once`);
    found = value !== undefined && ID.test(value) ? value : give(`packed-refs holds no id for ${ref}`);
  }
  return found;
}

/** The folders of the ref and of the reflogs are real folders (made when missing), the reflogs plain files or none. */
function checkRefPaths(common: string, own: string, ref: string | undefined): void {
  if (ref !== undefined) realFolders(common, path.dirname(ref));
  const logs = [
    ...(ref !== undefined ? [[common, path.join('logs', ref)] as const] : []),
    [own, path.join('logs', 'HEAD')] as const,
  ];
  for (const [base, rel] of logs) {
    realFolders(base, path.dirname(rel));
    const stat = lstatSync(path.join(base, rel), { throwIfNoEntry: false });
    if (stat !== undefined && !stat.isFile()) give(`${rel} is not a plain file`);
  }
}

/**
 * Point the branch (or detached HEAD) from `old` at `id` as git's files backend does: `<ref>.lock`
 * (and `HEAD.lock` while HEAD is read through) created exclusively, the old value compared once
 * locked, the reflogs appended, the lock renamed over the ref.
 */
function updateRef(
  common: string,
  own: string,
  ref: string | undefined,
  old: string,
  id: string,
  logLine: string,
  logAll: boolean,
): void {
  const headLock = path.join(own, 'HEAD.lock');
  closeSync(createExclusive(headLock) ?? give('HEAD.lock exists'));
  let refLock: string | null = null;
  let renamed = false;
  try {
    const headNow = readFileSync(path.join(own, 'HEAD'), 'latin1');
    if (ref === undefined ? headNow.trim() !== old : headNow.trim() !== `ref: ${ref}`) give('HEAD moved');
    if (ref !== undefined) {
      const fd = createExclusive(path.join(common, `${ref}.lock`)) ?? give(`${ref}.lock exists`);
      refLock = path.join(common, `${ref}.lock`);
      try {
        writeSync(fd, `${id}\n`);
      } finally {
        closeSync(fd);
      }
      if (refValue(common, ref) !== old) give(`${ref} moved`);
      appendLog(common, path.join('logs', ref), logLine, logAll);
      appendLog(own, path.join('logs', 'HEAD'), logLine, logAll);
      renameSync(refLock, path.join(common, ref));
      renamed = true;
    } else {
      // Detached: HEAD itself is the ref, and HEAD.lock its lock.
      writeFileExclusiveContent(headLock, `${id}\n`);
      appendLog(own, path.join('logs', 'HEAD'), logLine, logAll);
      renameSync(headLock, path.join(own, 'HEAD'));
      renamed = true;
    }
  } finally {
    // Only our own locks (a lock another process held made us give up before it was ours).
    try {
      if (refLock !== null && !renamed) rmSync(refLock, { force: true });
      if (ref !== undefined || !renamed) rmSync(headLock, { force: true });
    } catch {
      // A lock that cannot be removed is git's to report next time; the ref is as the rename left it.
    }
  }
}

/** The lock we hold (created empty just before) given its content. */
function writeFileExclusiveContent(lock: string, content: string): void {
  const fd = openSync(lock, constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW);
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
}

/** A new file opened for writing, or null when the name is taken (by anything: a symlink too). */
function createExclusive(file: string, mode = 0o666): number | null {
  try {
    return openSync(file, 'wx', mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw e;
  }
}

/** Every folder of `rel` under `base` a real folder (made when missing); a symlink or file on the way gives up. */
function realFolders(base: string, rel: string): void {
  let at = base;
  for (const part of rel.split(/[\\/]/).filter((p) => p !== '' && p !== '.')) {
    at = path.join(at, part);
    const stat = lstatSync(at, { throwIfNoEntry: false });
    if (stat === undefined) mkdirSync(at, { mode: 0o777 });
    else if (!stat.isDirectory()) give(`${path.relative(base, at)} is not a folder`);
  }
}

/** Append a reflog line; a log that does not exist is made only when core.logAllRefUpdates says so. */
function appendLog(base: string, rel: string, line: string, logAll: boolean): void {
  const file = path.join(base, rel);
  if (!logAll && !exists(file)) return;
  const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o666);
  try {
    // Looked at before (commitPlaces); again on the open file, for a link made since.
    if (fstatSync(fd).nlink > 1) refuse(`${rel} is hard-linked to another file`);
    writeSync(fd, line);
  } finally {
    closeSync(fd);
  }
}

function hashObject(type: string, body: Buffer): string {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/** Loose objects read and written, and the packs' indexes asked whether they hold an id. */
class ObjectStore {
  private packs: { fd: number; count: number; fanout: Buffer }[] | null = null;
  constructor(private readonly dir: string) {
    const stat = lstatSync(dir, { throwIfNoEntry: false });
    if (!stat?.isDirectory()) give('objects is not a folder');
  }

  private loosePath(id: string): string {
    return path.join(this.dir, id.slice(0, 2), id.slice(2));
  }

  /** A loose object's body, checked against its id and type; null when it is not loose. */
  readLoose(id: string, type: string): Buffer | null {
    let raw: Buffer;
    try {
      raw = inflateSync(readFileSync(this.loosePath(id)));
    } catch {
      return null;
    }
    const nul = raw.indexOf(0);
    const header = raw.subarray(0, nul).toString('latin1');
    const body = raw.subarray(nul + 1);
    if (header !== `${type} ${body.length}` || hashObject(type, body) !== id)
      give(`object ${id} does not match its name`);
    return body;
  }

  has(id: string): boolean {
    return exists(this.loosePath(id)) || this.packed(id);
  }

  /** Whether a pack's index (version 2) lists the id: a binary search on its sorted names. */
  private packed(id: string): boolean {
    const want = Buffer.from(id, 'hex');
    for (const pack of this.openPacks()) {
      const first = want[0]!;
      let lo = first === 0 ? 0 : pack.fanout.readUInt32BE((first - 1) * 4);
      let hi = pack.fanout.readUInt32BE(first * 4);
      const name = Buffer.alloc(20);
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (readSync(pack.fd, name, 0, 20, 8 + 1024 + mid * 20) !== 20) break;
        const c = name.compare(want);
        if (c === 0) return true;
        if (c < 0) lo = mid + 1;
        else hi = mid;
      }
    }
    return false;
  }

  private openPacks(): { fd: number; count: number; fanout: Buffer }[] {
    if (this.packs !== null) return this.packs;
    this.packs = [];
    const dir = path.join(this.dir, 'pack');
    let names: string[] = [];
    try {
      names = readdirSync(dir).filter((n) => /^pack-[0-9a-f]{40}\.idx$/.test(n));
    } catch {
      return this.packs;
    }
    for (const n of names) {
      let fd: number;
      try {
        fd = openSync(path.join(dir, n), constants.O_RDONLY | constants.O_NOFOLLOW);
      } catch {
        continue;
      }
      const head = Buffer.alloc(8 + 1024);
      // Version 2 only (magic \377tOc, version 2); an older index is never asked: its objects are then written loose again, which is harmless.
      if (
        readSync(fd, head, 0, head.length, 0) !== head.length ||
        head.readUInt32BE(0) !== 0xff744f63 ||
        head.readUInt32BE(4) !== 2
      ) {
        closeSync(fd);
        continue;
      }
      const fanout = head.subarray(8);
      this.packs.push({ fd, count: fanout.readUInt32BE(255 * 4), fanout });
    }
    return this.packs;
  }

  /** A loose object written as git does: deflated into a temporary file of its folder, then linked to its name. */
  write(id: string, type: string, body: Buffer): void {
    if (exists(this.loosePath(id))) return;
    realFolders(this.dir, id.slice(0, 2));
    const data = deflateSync(Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]), { level: 1 });
    const temp = path.join(this.dir, id.slice(0, 2), `tmp_obj_${randomBytes(6).toString('hex')}`);
    const fd = openSync(temp, 'wx', 0o444);
    try {
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temp, this.loosePath(id));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
        unlinkSync(temp);
        throw e;
      }
    }
    unlinkSync(temp);
  }

  close(): void {
    for (const p of this.packs ?? []) closeSync(p.fd);
    this.packs = null;
  }
}

interface HeadCommit {
  tree: string;
  parents: string[];
  author: string;
  /** Headers besides tree, parent, author and committer (gpgsig, encoding, mergetag). */
  extra: boolean;
  message: string;
}

function parseCommit(body: Buffer): HeadCommit {
  const text = body.toString('utf8');
  // Re-encoded by the amend: only bytes that survive the round trip.
  if (!Buffer.from(text, 'utf8').equals(body)) give('HEAD commit is not UTF-8');
  const split = text.indexOf('\n\n');
  if (split < 0) give('HEAD commit has no message');
  const headers = text.slice(0, split).split('\n');
  const out: HeadCommit = { tree: '', parents: [], author: '', extra: false, message: text.slice(split + 2) };
  for (const h of headers) {
    const sp = h.indexOf(' ');
    const [key, value] = [h.slice(0, sp), h.slice(sp + 1)];
    if (key === 'tree') out.tree = value;
    else if (key === 'parent') out.parents.push(value);
    else if (key === 'author') out.author = value;
    else if (key !== 'committer') out.extra = true;
  }
  if (!ID.test(out.tree) || !out.parents.every((p) => ID.test(p))) give('HEAD commit unreadable');
  return out;
}

interface IndexEntry {
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

interface Tree {
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
