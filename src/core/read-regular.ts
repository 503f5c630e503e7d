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
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';

/** The file's bytes; null when it is missing, unreadable or not a regular file (links are followed). */
export function readRegularFile(file: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
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
