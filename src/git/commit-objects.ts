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
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { plain, repoConfig, type RepoConfig } from './commit-config.js';
import { exists, give, ID, refuse, Refusal } from './in-process.js';
import { buildTrees, readIndex } from './index-file.js';
import { hashObject, ObjectStore } from './loose-objects.js';
import { checkRefPaths, refValue, saneRef, updateRef } from './ref-update.js';
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
