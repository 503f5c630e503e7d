/**
 * A branch (or a detached HEAD) moved to the in-process commit (commit-objects.ts) as git's files
 * backend moves it: ref values read from loose files and `packed-refs`, locks, reflogs.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { exists, give, ID, realFolders, refuse } from './in-process.js';

/** A branch name git would write as a loose ref: plain components, none hidden or a lock. */
export function saneRef(ref: string): boolean {
  return ref
    .slice('refs/heads/'.length)
    .split('/')
    .every(
      (c) => /^[A-Za-z0-9_][A-Za-z0-9._+-]*$/.test(c) && !c.endsWith('.lock') && !c.endsWith('.') && !c.includes('..'),
    );
}

/** A ref's value: its loose file, else its `packed-refs` line; null when it has none. */
export function refValue(common: string, ref: string): string | null {
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
  const ids = packedRefIds(readFileSync(path.join(common, 'packed-refs'), 'latin1'), ref);
  if (ids.length > 1) give(`packed-refs names ${ref} more than once`);
  if (ids.length === 0) return null;
  return ID.test(ids[0]!) ? ids[0]! : give(`packed-refs holds no id for ${ref}`);
}

/**
 * What each line of a `packed-refs` file naming `ref` gives as its id, in order. git takes the last
 * of several; Consort's readers take only the plain case, exactly one.
 */
export function packedRefIds(text: string, ref: string): string[] {
  return text
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields[1] === ref)
    .map((fields) => fields[0]!);
}

/** The folders of the ref and of the reflogs are real folders (made when missing), the reflogs plain files or none. */
export function checkRefPaths(common: string, own: string, ref: string | undefined): void {
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
export function updateRef(
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
