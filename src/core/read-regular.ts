/**
 * A small file's bytes, read synchronously: one system call each, where the promise-based read
 * makes four trips through libuv's thread pool (1-3 ms apiece while the conductor's other work
 * runs). For git's control files, the index and the feature's records, read on the TDD lane's
 * critical path.
 *
 * Only a regular file is read: a FIFO or a device planted where one is expected (by an agent or a
 * suite, in a folder they can write) would otherwise block this process's one thread for good. It
 * is opened without blocking and checked on the open descriptor, so a swap after a check cannot
 * get one in either.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

/**
 * The file's bytes; null when it is missing, unreadable or not a regular file. A link at its name
 * is followed unless `follow` is false (then it reads as missing: what an agent or a suite can write,
 * a link to /proc/self/environ among it, is not read through).
 */
export function readRegularFile(file: string, options: { follow?: boolean } = {}): Buffer | null {
  let fd: number;
  try {
    fd = openSync(
      file,
      constants.O_RDONLY | constants.O_NONBLOCK | (options.follow === false ? constants.O_NOFOLLOW : 0),
    );
  } catch {
    return null;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd) : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Where `file` leads once every link is resolved, when that is inside `root` (links resolved too);
 * null when it is outside, is `root` itself, or either cannot be resolved. A repository's files —
 * the configuration, the migrations, the seed — are read only through this check: a pull request
 * or an agent can make one a link to /proc/self/environ, whose text an error would then quote.
 */
/** What to do about a file that `resolvedInside` refused. */
export const INSIDE_HINT = 'Make it a regular file in the repository (a link may point only to a file inside it).';

export function resolvedInside(root: string, file: string): string | null {
  let real: string;
  let top: string;
  try {
    real = realpathSync(file);
    top = realpathSync(root);
  } catch {
    return null;
  }
  const relative = path.relative(top, real);
  const outside =
    relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
  return outside ? null : real;
}
