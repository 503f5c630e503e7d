/**
 * The git operations the TDD lane's scope check rests on: what a turn changed since the commit it
 * started from (tracked edits, deletions, untracked files, even commits the agent made itself),
 * throwing a refused turn away, and committing an accepted one. The workspace may be a folder
 * inside the repository; paths are reported relative to it, with `../` for anything outside.
 */
import { lstatSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { lstat, rm } from 'node:fs/promises';
import path from 'node:path';
import { ConsortError } from '../core/errors.js';
import { readRegularFile as readOr } from '../core/read-regular.js';
import type { FileChange } from '../conductor/events.js';
import { contentHash, sha256 } from '../conductor/gates.js';
import { commitIndex, commitRefusal } from './commit-objects.js';
import { git, type GitResult } from './exec.js';
import { packedRefIds } from './ref-update.js';
import { headCommit } from './repo.js';

export interface GitWorkspace {
  /** The workspace folder (absolute). */
  dir: string;
  /** The repository's top-level folder. */
  top: string;
  /** The workspace relative to the top, with a trailing `/` ('' at the top). */
  prefix: string;
  /** `-c user.name=… -c user.email=…` when the repository has no identity configured. */
  identity: string[];
  /** The repository's common git directory (for lock files nobody commits). */
  gitDir: string;
}

function exec(cwd: string, args: string[], input?: string): Promise<GitResult> {
  return git(cwd, args, input !== undefined ? { input } : {});
}

function failure(args: string[], r: GitResult): ConsortError {
  return new ConsortError(
    'internal',
    `git ${args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? ''} failed: ${r.stderr.trim() || `exit ${r.code}`}`,
    {
      hint: 'Check that the workspace is a healthy git checkout (git status).',
    },
  );
}

async function run(cwd: string, args: string[], input?: string): Promise<string> {
  const r = await exec(cwd, args, input);
  if (r.code !== 0) throw failure(args, r);
  return r.stdout;
}

export async function openWorkspace(dir: string): Promise<GitWorkspace> {
  let facts: string[];
  try {
    // One git for the three: rev-parse prints a line per option, in order (the prefix's is empty at the
    // top); a relative common dir is relative to `dir`. Every lane run and proof opens a workspace.
    facts = (await run(dir, ['rev-parse', '--show-toplevel', '--show-prefix', '--git-common-dir'])).split('\n');
  } catch (e) {
    throw new ConsortError('invalid-input', `${dir} is not inside a git repository.`, {
      hint: 'The TDD lane keeps its state in git: run it in a repository (git init, and commit once).',
      cause: e,
    });
  }
  const [top, prefix, common] = facts.map((l) => l.trim()) as [string, string, string];
  const email = await run(top, ['config', 'user.email']).then(
    (o) => o.trim(),
    () => '',
  );
  const identity = email ? [] : ['-c', 'user.name=Consort', '-c', 'user.email=consort@localhost'];
  return { dir, top, prefix, identity, gitDir: path.resolve(dir, common) };
}

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * The worktree's own git directory: `.git`, or the folder a linked worktree's `.git` file names.
 * Read synchronously: the guard reads all it compares on the main thread (src/git/guard.ts).
 */
export function ownGitDir(ws: GitWorkspace): string | null {
  const dotGit = path.join(ws.top, '.git');
  const stat = lstatSync(dotGit, { throwIfNoEntry: false });
  if (stat?.isDirectory()) return dotGit;
  if (!stat?.isFile()) return null;
  const text = readOr(dotGit)?.toString('utf8') ?? '';
  const named = /^gitdir: (.+)\n?$/.exec(text)?.[1];
  return named === undefined ? null : path.resolve(ws.top, named);
}

/**
 * HEAD read from git's files, as git reads them — a detached id, or a branch's loose ref or its
 * line in `packed-refs` — without starting git (the lane asks before every turn and proof). Null
 * whenever anything is not that plain (a symbolic ref to a ref, reftable, no commit yet): git answers then.
 */
export async function headFromFiles(ws: GitWorkspace): Promise<string | null> {
  const own = ownGitDir(ws);
  if (own === null) return null;
  const head = (readOr(path.join(own, 'HEAD'))?.toString('utf8') ?? '').trim();
  if (OBJECT_ID.test(head)) return head;
  const ref = /^ref: (refs\/heads\/\S+)$/.exec(head)?.[1];
  if (ref === undefined || ref === 'refs/heads/.invalid' || ref.split('/').includes('..')) return null;
  const loose = readOr(path.join(ws.gitDir, ref))?.toString('utf8') ?? null;
  if (loose !== null) return OBJECT_ID.test(loose.trim()) ? loose.trim() : null;
  const packed = readOr(path.join(ws.gitDir, 'packed-refs'))?.toString('utf8') ?? '';
  // One line for the ref, or git answers: it reads the last of several, and a forged first one
  // would name a commit git does not see.
  const ids = packedRefIds(packed, ref);
  return ids.length === 1 && OBJECT_ID.test(ids[0]!) ? ids[0]! : null;
}

/** The worktree's index as bytes (null when there is none, or it cannot be read). */
export async function indexBytes(ws: GitWorkspace): Promise<Buffer | null> {
  const own = ownGitDir(ws);
  return own === null ? null : readOr(path.join(own, 'index'));
}

/**
 * `bytes` written aside at `temp` and renamed over `file`. The temp file is made afresh: without
 * bubblewrap a suite can write `.git`, and a link left at that name (the process id is in every
 * proof folder's name) would be written through, a FIFO would block this thread for good.
 */
function replaceWith(temp: string, file: string, bytes: Buffer): void {
  rmSync(temp, { force: true });
  writeFileSync(temp, bytes, { flag: 'wx' });
  renameSync(temp, file);
}

/** Put the worktree's index back as `bytes` (written aside, then renamed over it, as git does). */
export async function writeIndexBytes(ws: GitWorkspace, bytes: Buffer): Promise<void> {
  const own = ownGitDir(ws);
  if (own === null) return;
  replaceWith(path.join(own, `index.consort-${process.pid}`), path.join(own, 'index'), bytes);
}

/** Put the worktree's HEAD file back as `bytes` when it differs; whether it did. */
export async function restoreHeadFile(ws: GitWorkspace, bytes: Buffer): Promise<boolean> {
  const own = ownGitDir(ws);
  if (own === null) return false;
  const file = path.join(own, 'HEAD');
  const now = readOr(file);
  if (now !== null && now.equals(bytes)) return false;
  replaceWith(path.join(own, `HEAD.consort-${process.pid}`), file, bytes);
  return true;
}

/** The workspace's HEAD commit, which the lane needs (a repository without commits is refused). */
export async function workspaceHead(ws: GitWorkspace): Promise<string> {
  const head = (await headFromFiles(ws)) ?? (await headCommit(ws.top));
  if (head !== null) return head;
  throw new ConsortError('invalid-input', 'The repository has no commit yet.', {
    hint: 'Commit the project once before running the TDD lane.',
  });
}

/** A path relative to the top, as seen from the workspace. */
function fromTop(ws: GitWorkspace, p: string): string {
  if (p.startsWith(ws.prefix)) return p.slice(ws.prefix.length);
  return path.posix.relative(ws.prefix.replace(/\/$/, '') || '.', p);
}

function toTop(ws: GitWorkspace, p: string): string {
  return path.posix.normalize(path.posix.join(ws.prefix, p));
}

/**
 * HEAD and every path that differs from it (index or working tree, untracked included, ignored
 * excluded); `gone`: new files staged and deleted again (top-relative), which no change reports.
 */
async function status(ws: GitWorkspace): Promise<{ head: string; changes: FileChange[]; gone: string[] }> {
  const out = (
    await run(ws.top, [
      'status',
      '--porcelain=v2',
      '--branch',
      '-z',
      '--untracked-files=all',
      '--no-renames',
      // A gitlink's "is it dirty?" is a `git status` run inside it, with its own config (a clean
      // filter is a command): never asked. A repository an agent made shows as `? dir/` all the
      // same, and the scope check refuses it (src/conductor/scope.ts).
      '--ignore-submodules=all',
    ])
  ).split('\0');
  let head = '';
  const changes: FileChange[] = [];
  const gone: string[] = [];
  for (const entry of out) {
    if (entry.startsWith('# branch.oid ')) head = entry.slice('# branch.oid '.length);
    else if (entry.startsWith('? ')) changes.push({ path: fromTop(ws, entry.slice(2)), status: 'added' });
    else if (entry.startsWith('1 ') || entry.startsWith('u ')) {
      const fields = entry.split(' ');
      const [x, y] = [fields[1]![0], fields[1]![1]];
      const file = fields.slice(entry.startsWith('1 ') ? 8 : 10).join(' ');
      // Staged as new and then deleted again: nothing changed relative to HEAD — but the index
      // still holds it, and the next commit would carry it (see unstageGone).
      if (x === 'A' && y === 'D') {
        gone.push(file);
        continue;
      }
      changes.push({
        path: fromTop(ws, file),
        status: x === 'A' ? 'added' : x === 'D' || y === 'D' ? 'deleted' : 'modified',
      });
    }
  }
  return { head, changes: changes.sort((a, b) => (a.path < b.path ? -1 : 1)), gone };
}

/**
 * Take new files staged and deleted again out of the index: the scope check hears of no change
 * there, and until 2026-12-03 the conductor's next commit (which commits the whole index) carried
 * such a file — a test an agent staged and removed went into the branch unjudged.
 */
async function unstageGone(ws: GitWorkspace, gone: readonly string[]): Promise<void> {
  for (let i = 0; i < gone.length; i += 500)
    await run(ws.top, ['update-index', '--force-remove', '--', ...gone.slice(i, i + 500)]);
}

/**
 * `skip-worktree` and `assume-unchanged` make git stop looking at a file: an edited test behind
 * either flag is invisible to `git status` (so to the scope check) and cannot be reverted. The
 * conductor sets neither, so every flag found is an agent's, and is cleared before git is asked.
 */
export async function clearIndexFlags(ws: GitWorkspace): Promise<string[]> {
  const flagged = await indexFlags(ws);
  await clearFlags(ws, flagged);
  return flagged;
}

/** Paths the index flags `skip-worktree` or `assume-unchanged`. */
async function indexFlags(ws: GitWorkspace): Promise<string[]> {
  return (await run(ws.top, ['ls-files', '-v', '-z']))
    .split('\0')
    .filter((e) => /^([a-z]|S) /.test(e))
    .map((e) => e.slice(2));
}

async function clearFlags(ws: GitWorkspace, flagged: readonly string[]): Promise<void> {
  // One flag per call (update-index applies only the last flag option to the paths), paths on the
  // command line (it ignores flag options for paths read with --stdin).
  for (let i = 0; i < flagged.length; i += 500) {
    const chunk = flagged.slice(i, i + 500);
    await run(ws.top, ['update-index', '--no-skip-worktree', '--', ...chunk]);
    await run(ws.top, ['update-index', '--no-assume-unchanged', '--', ...chunk]);
  }
}

/**
 * `git status` with no index flag hiding a file: both are asked at once, and status again only
 * when a flag was found (and cleared), since a flagged file is invisible to the first answer.
 */
async function unflaggedStatus(ws: GitWorkspace): Promise<{ head: string; changes: FileChange[]; gone: string[] }> {
  const [flagged, first] = await Promise.all([indexFlags(ws), status(ws)]);
  if (flagged.length === 0) return first;
  await clearFlags(ws, flagged);
  return status(ws);
}

/**
 * Everything that differs from `base` in the working tree, repository-wide (ignored files
 * excepted). Commits made since `base` (an agent's own) are undone first, their changes kept;
 * index flags that hide a file from git are cleared first.
 */
export async function changesSince(
  ws: GitWorkspace,
  base: string,
  options: { indexUntouched?: boolean } = {},
): Promise<FileChange[]> {
  // The flags live in the index: an index byte for byte as it was before the agent's turn holds no
  // flag the agent set (and none from before: each is cleared when found, and the run starts by clearing them).
  const first = options.indexUntouched ? await status(ws) : await unflaggedStatus(ws);
  if (first.head === base) {
    await unstageGone(ws, first.gone);
    return first.changes;
  }
  // The reset puts the whole index back to `base`, staged files included; it appends to the reflogs too.
  refuseLinks(ws);
  await run(ws.top, ['reset', '-q', '--mixed', base]);
  return (await status(ws)).changes;
}

/** Undo commits made since `base` but keep their changes in the working tree (an agent's own commits). */
export async function uncommitSince(ws: GitWorkspace, base: string): Promise<void> {
  if ((await workspaceHead(ws)) === base) return;
  refuseLinks(ws);
  await run(ws.top, ['reset', '-q', '--mixed', base]);
}

/** Back to `base` exactly: tracked files reset, the listed new files removed. */
export async function restore(ws: GitWorkspace, base: string, added: readonly string[]): Promise<void> {
  refuseLinks(ws);
  await run(ws.top, ['reset', '-q', '--hard', base]);
  for (const p of added) {
    // `.git/…` and `~/…` (git's global files) changes were put back by the guard (src/git/guard.ts), never removed here.
    if (p.startsWith('../') || p.startsWith('~/') || p === '.git' || p.startsWith('.git/')) continue;
    const inBase = await run(ws.top, ['cat-file', '-e', `${base}:${toTop(ws, p)}`]).then(
      () => true,
      () => false,
    );
    if (!inBase) await rm(path.join(ws.dir, p), { force: true, recursive: true });
  }
}

/**
 * Back to `base`, keeping what happened since (an interrupted turn's changes, and whatever a person
 * changed after the interruption: the two cannot be told apart) as one entry of git's stash, named
 * `message`: `git stash list` shows it, `git stash apply` brings it back. Returns the entry's commit,
 * or null when nothing differed. Ignored files stay where they are, as before.
 */
export async function setAsideSince(ws: GitWorkspace, base: string, message: string): Promise<string | null> {
  await uncommitSince(ws, base);
  refuseLinks(ws);
  const stashed = async () => (await exec(ws.top, ['rev-parse', '-q', '--verify', 'refs/stash'])).stdout.trim();
  const before = await stashed();
  await run(ws.top, [...ws.identity, 'stash', 'push', '--include-untracked', '-q', '-m', message]);
  const after = await stashed();
  // Whatever the stash did not take is thrown away, as a discard always did.
  await discardSince(ws, base);
  return after !== '' && after !== before ? after : null;
}

/** Throw away whatever happened since `base` (an interrupted turn): tracked files reset, new ones removed. */
export async function discardSince(ws: GitWorkspace, base: string): Promise<void> {
  await uncommitSince(ws, base);
  const added = (await changesSince(ws, base)).filter((c) => c.status === 'added').map((c) => c.path);
  await restore(ws, base, added);
}

/**
 * Every commit of the conductor's: unsigned; the summary line carries the full commit id, which
 * saves a rev-parse (core.abbrev=40); no `git maintenance run --auto` started after it (a process
 * per commit, and now and then a gc in the middle of a turn: the user's own git does that upkeep).
 */
const COMMIT_ARGS = ['-c', 'commit.gpgsign=false', '-c', 'core.abbrev=40', '-c', 'maintenance.auto=false'];

/** Nothing may commit (commit-objects.ts: a link where a commit writes, an index git would commit as a broken tree). */
function refusedCommit(reason: string): ConsortError {
  return new ConsortError(
    'internal',
    `Git's directory is not as git leaves it, and the conductor stops before git writes there: ${reason}.`,
    {
      hint: "Without bubblewrap an agent or a suite can leave this in git's directory, and git would write through it (outside the repository) or write a broken tree: remove it, look at what the last turn ran, then run again.",
    },
  );
}

/**
 * Before every git call of the conductor's that writes where a commit does: `git add` (its blobs
 * through a linked folder of loose objects), `git reset` (its reflog lines) and `git commit`.
 */
function refuseLinks(ws: GitWorkspace): void {
  const refusal = commitRefusal(ws);
  if (refusal !== null) throw refusedCommit(refusal);
}

/** Stage the paths and commit them; returns the new commit, or null when there was nothing to commit. */
export async function commitPaths(ws: GitWorkspace, paths: readonly string[], message: string): Promise<string | null> {
  const inside = paths.filter((p) => !p.startsWith('../'));
  if (inside.length === 0) return null;
  refuseLinks(ws);
  await run(
    ws.dir,
    ['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'],
    inside.map((p) => `:(literal)${p}`).join('\0'),
  );
  // The commit written from here (commit-objects.ts); git commits only what that leaves to it.
  const made = await commitIndex(ws, message);
  if (made.kind === 'committed') return made.commit;
  if (made.kind === 'nothing') return null;
  if (made.kind === 'refused') throw refusedCommit(made.reason);
  const args = [...ws.identity, ...COMMIT_ARGS, 'commit', '--no-verify', '-m', message];
  const r = await exec(ws.top, args);
  if (r.code !== 0) {
    if (/nothing to commit|nothing added to commit|no changes added to commit/.test(r.stdout)) return null;
    throw failure(args, r);
  }
  return /^\[[^\]]*?([0-9a-f]{40})\]/m.exec(r.stdout)?.[1] ?? workspaceHead(ws);
}

/** Stage the paths into the last commit (same message); returns the rewritten commit. Only for a commit not yet pushed. */
export async function amendPaths(ws: GitWorkspace, paths: readonly string[]): Promise<string> {
  const inside = paths.filter((p) => !p.startsWith('../'));
  refuseLinks(ws);
  if (inside.length > 0)
    await run(
      ws.dir,
      ['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'],
      inside.map((p) => `:(literal)${p}`).join('\0'),
    );
  const made = await commitIndex(ws, '', { amend: true });
  if (made.kind === 'committed') return made.commit;
  if (made.kind === 'refused') throw refusedCommit(made.reason);
  const out = await run(ws.top, [
    ...ws.identity,
    ...COMMIT_ARGS,
    'commit',
    '--amend',
    '--no-edit',
    '--no-verify',
    '--allow-empty',
  ]);
  return /^\[[^\]]*?([0-9a-f]{40})\]/m.exec(out)?.[1] ?? workspaceHead(ws);
}

/** Dirty paths (relative to the workspace) outside the given folders. */
export async function dirtyOutside(ws: GitWorkspace, allowed: readonly string[]): Promise<string[]> {
  await clearIndexFlags(ws);
  const out = (
    await run(ws.top, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=all'])
  )
    .split('\0')
    .filter(Boolean);
  const paths: string[] = [];
  for (let i = 0; i < out.length; i++) {
    const entry = out[i]!;
    const file = entry.slice(3);
    if (entry[0] === 'R' || entry[0] === 'C') i += 1; // the source path follows
    const rel = fromTop(ws, file);
    if (!allowed.some((a) => rel === a || rel.startsWith(`${a}/`))) paths.push(rel);
  }
  return paths.sort();
}

/** Files in the workspace git knows of or would add (tracked and untracked, not ignored). */
export async function listFiles(ws: GitWorkspace): Promise<string[]> {
  const out = await run(ws.dir, ['ls-files', '--cached', '--others', '--exclude-standard', '-z']);
  return [...new Set(out.split('\0').filter(Boolean))].sort();
}

/** sha256 of each file's normalized content; null when it does not exist. */
export async function hashFiles(ws: GitWorkspace, paths: readonly string[]): Promise<Record<string, string | null>> {
  const texts = paths.map((p) => readOr(path.join(ws.dir, p))?.toString('utf8') ?? null);
  const hashes: Record<string, string | null> = {};
  paths.forEach((p, i) => {
    const text = texts[i] ?? null;
    hashes[p] = text === null ? null : contentHash(text);
  });
  return hashes;
}

/** Identity of the committed code: the workspace's tree at HEAD, outside `.consort/`. */
export async function codeTreeHash(ws: GitWorkspace): Promise<string> {
  const listing = await run(ws.dir, ['ls-tree', '-r', 'HEAD']);
  const lines = listing.split('\n').filter((l) => l && !l.split('\t')[1]?.startsWith('.consort/'));
  return sha256(lines.join('\n'));
}

/**
 * The repository a workspace belongs to, by its common git directory: an experiment's attempt is a
 * worktree with a top of its own, and what it does to `.git/worktrees` is the repository's.
 */
const repositoryKey = (ws: GitWorkspace): string => path.resolve(ws.gitDir);

/**
 * Worktree changes of one repository: a `worktree prune` or `remove` that empties `.git/worktrees`
 * deletes the folder while a concurrent `worktree add` (a proof next to an experiment's attempt) is
 * creating its entry in it, and the add fails. So a removal (or a clean-up) runs alone; adds run
 * side by side with each other (git picks a free entry name under `.git/worktrees` itself, and each
 * checks out into its own folder and index): the two fresh trees of a proof and RED's tree beside
 * it are made at once. Keyed by the repository (until 2026-12-03 by the top, which let an attempt's
 * proof and the workspace's run side by side).
 */
interface WorktreeQueue {
  /** Settles when everything queued so far has. */
  tail: Promise<void>;
  /** The adds queued since the last removal: they start together, once what came before them ends. */
  adds?: { after: Promise<void>; running: Promise<void>[] };
}
const worktreeQueues = new Map<string, WorktreeQueue>();

const settledOf = (p: Promise<unknown>): Promise<void> =>
  p.then(
    () => undefined,
    () => undefined,
  );

function queueOf(ws: GitWorkspace): { key: string; queue: WorktreeQueue } {
  const key = repositoryKey(ws);
  let queue = worktreeQueues.get(key);
  if (queue === undefined) worktreeQueues.set(key, (queue = { tail: Promise.resolve() }));
  return { key, queue };
}

function forget(key: string, queue: WorktreeQueue, tail: Promise<void>): void {
  void tail.then(() => {
    if (queue.tail === tail && worktreeQueues.get(key) === queue) worktreeQueues.delete(key);
  });
}

/** A removal or clean-up of worktrees: after everything queued before it, and before anything after. */
function alone<T>(ws: GitWorkspace, fn: () => Promise<T>): Promise<T> {
  const { key, queue } = queueOf(ws);
  const next = queue.tail.then(fn, fn);
  queue.adds = undefined;
  queue.tail = settledOf(next);
  forget(key, queue, queue.tail);
  return next;
}

/** A `worktree add`: beside the other adds queued since the last removal. */
function besideAdds<T>(ws: GitWorkspace, fn: () => Promise<T>): Promise<T> {
  const { key, queue } = queueOf(ws);
  queue.adds ??= { after: queue.tail, running: [] };
  const next = queue.adds.after.then(fn, fn);
  queue.adds.running.push(settledOf(next));
  queue.tail = Promise.all(queue.adds.running).then(() => undefined);
  forget(key, queue, queue.tail);
  return next;
}

/**
 * Folders of removed worktrees still being deleted, per repository (removeWorktree with
 * `folderLater`): a proof's tree is a few hundred files that the next step need not wait for.
 * A run that ends waits for them (settleRemovals); one killed first leaves folders that the next
 * run's clean-up of dead runs' trees removes (src/lanes/tdd/clean-tree.ts removeStaleTrees).
 * Keyed by the repository (repositoryKey): an experiment's attempt removes its proof's tree through
 * its own workspace, while the run's end settles the repository's.
 */
const removals = new Map<string, { pending: Set<Promise<void>>; failed: unknown[] }>();

function inBackground(ws: GitWorkspace, work: Promise<void>): void {
  const key = repositoryKey(ws);
  let entry = removals.get(key);
  if (entry === undefined) removals.set(key, (entry = { pending: new Set(), failed: [] }));
  const { pending, failed } = entry;
  const tracked: Promise<void> = work.catch((e: unknown) => void failed.push(e)).finally(() => pending.delete(tracked));
  pending.add(tracked);
}

/** Waits for the worktree folders still being removed; throws the first removal that failed. */
export async function settleRemovals(ws: GitWorkspace): Promise<void> {
  const key = repositoryKey(ws);
  const entry = removals.get(key);
  if (entry === undefined) return;
  while (entry.pending.size > 0) await Promise.all(entry.pending);
  const [first] = entry.failed.splice(0);
  if (entry.failed.length === 0 && entry.pending.size === 0) removals.delete(key);
  if (first !== undefined) throw first;
}

/** A detached worktree of `base` at `dir` (one left over by a crashed run is replaced). */
export async function addWorktree(ws: GitWorkspace, dir: string, base: string): Promise<void> {
  // A fresh name (every proof's) needs one git, beside other adds: the clean-up below, alone, only
  // for a leftover, or a registration whose folder is gone (add refuses a path registered as a
  // missing worktree).
  const added = await besideAdds(ws, async () => {
    if ((await lstat(dir).catch(() => undefined)) !== undefined) return false;
    if ((await exec(ws.top, ['worktree', 'add', '--detach', '-q', dir, base])).code === 0) return true;
    await rm(dir, { recursive: true, force: true });
    return false;
  });
  if (added) return;
  await alone(ws, async () => {
    await exec(ws.top, ['worktree', 'remove', '--force', dir]);
    await rm(dir, { recursive: true, force: true });
    await run(ws.top, ['worktree', 'prune']);
    await run(ws.top, ['worktree', 'add', '--detach', '-q', dir, base]);
  });
}

/** A detached worktree of `base` in the empty folder `dir` (made ahead, see prepared-worktree.ts); whether git made it. */
export async function addWorktreeInto(ws: GitWorkspace, dir: string, base: string): Promise<boolean> {
  return besideAdds(ws, async () => (await exec(ws.top, ['worktree', 'add', '--detach', '-q', dir, base])).code === 0);
}

/**
 * The administrative folder git keeps for the worktree at `dir` (`<common dir>/worktrees/<id>`),
 * as its `.git` file names it; null unless that is exactly such a folder of this repository (the
 * file is in a tree a suite wrote to, so it is not trusted to name anything else).
 */
export async function worktreeAdminDir(ws: GitWorkspace, dir: string): Promise<string | null> {
  const text = readOr(path.join(dir, '.git'))?.toString('utf8') ?? null;
  const named = text === null ? undefined : /^gitdir: (.+)\n?$/.exec(text)?.[1];
  if (named === undefined) return null;
  const admin = path.resolve(dir, named);
  const worktrees = path.join(ws.gitDir, 'worktrees');
  if (path.dirname(admin) !== worktrees || !/^[^/\\]+$/.test(path.basename(admin))) return null;
  // Registered for this folder: its `gitdir` file points back at `dir/.git`.
  const back = readOr(path.join(admin, 'gitdir'))?.toString('utf8') ?? null;
  return back !== null && path.resolve(back.trim()) === path.resolve(dir, '.git') ? admin : null;
}

export async function removeWorktree(
  ws: GitWorkspace,
  dir: string,
  options: { folderLater?: boolean } = {},
): Promise<void> {
  await alone(ws, async () => {
    // What `worktree remove --force` and `prune` do, without starting git: the folder, then its registration.
    const admin = await worktreeAdminDir(ws, dir);
    if (admin !== null && options.folderLater) {
      // git forgets the worktree now; its files, which no git call reads any more, go in the background.
      await rm(admin, { recursive: true, force: true });
      inBackground(ws, rm(dir, { recursive: true, force: true }));
      return;
    }
    if (admin !== null) {
      await rm(dir, { recursive: true, force: true });
      await rm(admin, { recursive: true, force: true });
      return;
    }
    await exec(ws.top, ['worktree', 'remove', '--force', dir]);
    await rm(dir, { recursive: true, force: true });
    await exec(ws.top, ['worktree', 'prune']);
  });
}

/** The change since `base` to the given paths, staged: a binary-safe patch and its size in lines. */
export async function stagedPatch(
  ws: GitWorkspace,
  base: string,
  paths: readonly string[],
): Promise<{ patch: string; changedLines: number }> {
  const inside = paths.filter((p) => !p.startsWith('../')).map((p) => `:(literal)${p}`);
  if (inside.length === 0) return { patch: '', changedLines: 0 };
  refuseLinks(ws);
  await run(ws.dir, ['add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'], inside.join('\0'));
  const [patch, numstat] = await Promise.all([
    run(ws.dir, ['diff', '--cached', '--binary', '--full-index', base, '--', ...inside]),
    run(ws.dir, ['diff', '--cached', '--numstat', base, '--', ...inside]),
  ]);
  // Binary files show "-": count each as one line.
  const changedLines = numstat
    .split('\n')
    .filter(Boolean)
    .reduce((n, line) => {
      const [added, removed] = line.split('\t');
      return n + (added === '-' ? 1 : Number(added)) + (removed === '-' ? 0 : Number(removed));
    }, 0);
  return { patch, changedLines };
}

/** Apply a patch made by `stagedPatch` to the index and working tree, and commit it (idempotent by message). */
export async function applyAndCommit(ws: GitWorkspace, patchFile: string, message: string): Promise<string | null> {
  const subject = (await run(ws.top, ['log', '-1', '--format=%s'])).trim();
  if (subject === message) return null;
  refuseLinks(ws);
  const forward = await exec(ws.top, ['apply', '--check', '--index', '--binary', patchFile]);
  if (forward.code === 0) await run(ws.top, ['apply', '--index', '--binary', patchFile]);
  else if ((await exec(ws.top, ['apply', '--check', '--reverse', '--index', '--binary', patchFile])).code !== 0)
    throw failure(['apply', patchFile], forward);
  const args = [...ws.identity, ...COMMIT_ARGS, 'commit', '--no-verify', '-m', message];
  const r = await exec(ws.top, args);
  if (r.code !== 0) throw failure(args, r);
  return /^\[[^\]]*?([0-9a-f]{40})\]/m.exec(r.stdout)?.[1] ?? null;
}

/** A file's content at a commit (path relative to the workspace), or null when it is not there. */
export async function fileAt(ws: GitWorkspace, commit: string, p: string): Promise<string | null> {
  const r = await exec(ws.top, ['show', `${commit}:${toTop(ws, p)}`]);
  return r.code === 0 ? r.stdout : null;
}

/** Files under `dir` (relative to the workspace) at a commit, relative to the workspace. */
export async function filesUnder(ws: GitWorkspace, commit: string, dir: string): Promise<string[]> {
  const r = await exec(ws.dir, ['ls-tree', '-r', '-z', '--name-only', commit, '--', dir.replace(/\/+$/, '') || '.']);
  return r.code === 0 ? r.stdout.split('\0').filter(Boolean).sort() : [];
}

/** Lines added since `base` (committed, up to HEAD), with their file (relative to the workspace) and new line number. */
export async function diffAdded(
  ws: GitWorkspace,
  base: string,
): Promise<{ file: string; line: number; text: string }[]> {
  const out = await run(ws.dir, ['diff', '--unified=0', '--no-color', '--no-ext-diff', '--relative', base, 'HEAD']);
  const added: { file: string; line: number; text: string }[] = [];
  let file = '';
  let line = 0;
  for (const l of out.split('\n')) {
    if (l.startsWith('+++ ')) file = l.slice(4).replace(/^b\//, '');
    else if (l.startsWith('@@')) line = Number(/\+(\d+)/.exec(l)?.[1] ?? 0);
    else if (l.startsWith('+')) added.push({ file, line: line++, text: l.slice(1) });
  }
  return added;
}
