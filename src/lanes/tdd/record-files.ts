/**
 * The feature store's files on disk (src/lanes/tdd/store.ts): written whole and atomically, journals
 * appended, read back, never through anything planted on the way.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { ConsortError } from '../../core/errors.js';
import { readRegularFile } from '../../core/read-regular.js';

/*
 * The records are small files written and read many times per cycle on the conductor's critical
 * path, so they use the synchronous calls: one system call each, where the promise-based ones make
 * a trip through libuv's thread pool per open, write and close (1-3 ms a record under load, 20-30
 * ms a cycle in bench:conductor).
 *
 * They live in the workspace, which an agent's turn and a proof's suite can write: nothing there is
 * followed. A link in place of a folder on the way (the feature's, `cycles/`, `transcripts/`) is
 * removed, the link only, and the folder made; the agent's change is git's to see and refuse.
 */
function ownFolders(root: string, rel: string): void {
  let at = root;
  for (const part of path.dirname(rel).split(/[/\\]/)) {
    if (part === '' || part === '.') continue;
    at = path.join(at, part);
    const info = lstatSync(at, { throwIfNoEntry: false });
    if (info?.isDirectory()) continue;
    if (info?.isSymbolicLink()) unlinkSync(at);
    // Anything else that is not a folder makes mkdir fail (EEXIST): the run stops.
    mkdirSync(at);
  }
}

/** `rel` under `root`, written whole: aside, then renamed over whatever is at its name (never through it). */
export function writeAtomic(root: string, rel: string, text: string): void {
  ownFolders(root, rel);
  const file = path.join(root, rel);
  const temp = `${file}.${process.pid}.tmp`;
  // Created afresh (never through whatever was left at that name, a link among them).
  rmSync(temp, { force: true });
  writeFileSync(temp, text, { flag: 'wx' });
  renameSync(temp, file);
}

/**
 * Append `line` to `rel` under `root`, a regular file of its own or none: never through a link, a
 * hard link (which O_NOFOLLOW does not see) or a FIFO (which would block this thread). Anything
 * else at its name is replaced by `known + line` when the store knows the journal whole; otherwise
 * the run stops (what it took the place of, a journal HEAD holds, is not the store's to tell).
 */
export function appendOwn(root: string, rel: string, line: string, known: string | undefined): void {
  ownFolders(root, rel);
  const file = path.join(root, rel);
  const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = constants;
  let fd: number | undefined;
  try {
    fd = openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o666);
    const info = fstatSync(fd);
    if (!info.isFile() || info.nlink !== 1) {
      closeSync(fd);
      fd = undefined;
    }
  } catch (e) {
    // A link (ELOOP), a FIFO nobody reads (ENXIO), a folder (EISDIR); anything else is an error.
    if (!['ELOOP', 'EMLINK', 'ENXIO', 'EISDIR'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
    fd = undefined;
  }
  if (fd !== undefined) {
    try {
      writeSync(fd, line);
    } finally {
      closeSync(fd);
    }
    return;
  }
  if (known === undefined || lstatSync(file, { throwIfNoEntry: false })?.isDirectory())
    throw new ConsortError('internal', `${rel} is not a regular file of its own: the record was not appended to it.`, {
      hint: 'Something the run ran (an agent, a suite) put a link or a FIFO there. Remove it, restore the file from git (git checkout -- .consort) and run again.',
    });
  writeAtomic(root, rel, known + line);
}

/**
 * A record's or an artifact's text; null when it is missing, not a regular file (a FIFO would block
 * the conductor) or a link. Agents write these folders: an artifact linked to /proc/self/environ
 * would otherwise put the conductor's environment (the Action's token among it) into the next
 * context pack and the pull request's comments, and a record linked to a file that matches it would
 * pass the audit and then read whatever that file becomes.
 */
export async function readText(file: string): Promise<string | null> {
  return readRegularFile(file, { follow: false })?.toString('utf8') ?? null;
}
