/**
 * readRegularFile (src/core/read-regular.ts): the conductor's synchronous reads of small files. A
 * FIFO planted where a file is expected must not block the process's one thread.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readRegularFile } from '../../src/core/read-regular.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'consort-read-regular-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('reads a regular file, and one a link points to', () => {
  writeFileSync(path.join(dir, 'HEAD'), 'ref: refs/heads/main\n');
  symlinkSync('HEAD', path.join(dir, 'link'));
  expect(readRegularFile(path.join(dir, 'HEAD'))?.toString()).toBe('ref: refs/heads/main\n');
  expect(readRegularFile(path.join(dir, 'link'))?.toString()).toBe('ref: refs/heads/main\n');
});

it('answers null, without blocking, for a FIFO, a folder, a missing file and a dangling link', () => {
  execFileSync('mkfifo', [path.join(dir, 'fifo')]);
  mkdirSync(path.join(dir, 'folder'));
  symlinkSync('nowhere', path.join(dir, 'dangling'));
  for (const name of ['fifo', 'folder', 'missing', 'dangling'])
    expect(readRegularFile(path.join(dir, name))).toBeNull();
});
