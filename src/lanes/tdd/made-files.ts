/**
 * Harness files a proof's suite makes in the tree it proves, even ones it removes again before it
 * ends. The code under test runs in the runner's process: a module an early test imports can write
 * `tests/b/c/conftest.py` before pytest collects `tests/b/c/` (the hook there passes every test
 * below it) and delete it at exit, leaving nothing to compare afterwards. Each folder that holds a
 * committed test or harness file, and every folder above one, is watched (inotify) while the suite
 * runs; a name made there that the harness globs match and the commit does not hold is reported.
 * Past MAX_EVENTS events (a flood that could overflow the kernel's queue and hide one) the answer is
 * `null`: nothing can be said.
 */
import { randomBytes } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_HARNESS } from '../../conductor/roles.js';
import { matchesAny } from '../../core/glob.js';

/**
 * The loop reads the queue as the suite fills it (the conductor waits, idle, meanwhile), so only a
 * burst far past what honest suites make beside their tests (a compile in place writes thousands)
 * could overflow it.
 */
const MAX_EVENTS = 100_000;

export interface MadeFiles {
  /** After the suite: the harness files it made (sorted), or null when too much happened to tell. */
  stop(): Promise<string[] | null>;
}

/**
 * What runners write beside the files they load as a matter of course, not files a runner loads
 * unbidden: Python's bytecode caches (`__pycache__/`, `.pyc`: a fixtures package imported writes
 * one) and the config Vite bundles next to `vitest.config.ts` and removes again
 * (`vitest.config.ts.timestamp-1700000000000-9f2c1a.mjs`).
 */
/**
 * The harness a runner loads without being told: everything DEFAULT_HARNESS names but the data
 * folders, where a test reads only the files it names (committed ones, which the stamps cover) and
 * a suite may write output of its own. A `conftest.py` made in one is still caught by its own glob.
 */
const DATA_FOLDERS = new Set(['**/__fixtures__/**', '**/fixtures/**', '**/testdata/**']);
/**
 * Plus a `node_modules` folder (or link) made in a watched folder: node and every JS runner resolve
 * a test's bare import (`import pg from 'pg'`) in `test/node_modules` before the pristine install
 * above it, so one made beside the tests — by a migration's code before the suite, or by the code
 * under test before a later test file loads — is a package no install holds. The proof's own
 * `node_modules` is in place before the watch starts.
 */
const LOADED_UNBIDDEN = [
  ...DEFAULT_HARNESS.filter((g) => !DATA_FOLDERS.has(g)),
  '**/node_modules',
  '**/node_modules/**',
];

function isRunnerCache(rel: string): boolean {
  return rel.split('/').includes('__pycache__') || rel.endsWith('.pyc') || /\.timestamp-\d+-[0-9a-f]+\.mjs$/.test(rel);
}

export function watchMadeFiles(dir: string, committed: readonly string[], tests: readonly string[]): MadeFiles {
  const held = new Set(committed);
  const folders = new Set<string>(['.']);
  for (const file of committed) {
    if (!matchesAny(file, tests) && !matchesAny(file, DEFAULT_HARNESS)) continue;
    for (let folder = path.posix.dirname(file); folder !== '.'; folder = path.posix.dirname(folder))
      folders.add(folder);
  }
  const made = new Set<string>();
  const moved = new Set<string>();
  let events = 0;
  let failed = false;
  const watchers: FSWatcher[] = [];
  /** A file stop() makes in the tree's top folder once the suite is over, and the wait for its event. */
  const marker = `.consort-watched-${randomBytes(6).toString('hex')}`;
  let markerSeen: (() => void) | undefined;
  for (const folder of folders) {
    try {
      const watcher = watch(path.join(dir, folder), { persistent: false }, (type, name) => {
        if (folder === '.' && name === marker) {
          markerSeen?.();
          return;
        }
        events++;
        if (name === null) return;
        const rel = folder === '.' ? String(name) : `${folder}/${String(name)}`;
        // A watched folder made, removed or renamed (swapped for a copy holding a conftest.py or an
        // edited test, its files untouched, then swapped back): the watch follows the old folder,
        // so what the runner read there was never seen.
        if (folders.has(rel)) {
          if (type === 'rename') moved.add(`${rel}/`);
        } else if (!held.has(rel) && !isRunnerCache(rel) && matchesAny(rel, LOADED_UNBIDDEN)) made.add(rel);
      });
      watcher.on('error', () => {
        failed = true;
      });
      watchers.push(watcher);
    } catch {
      // A folder the commit holds only through a link, or no watch left (fs.inotify.max_user_watches).
      failed = true;
    }
  }
  let stopped: Promise<string[] | null> | undefined;
  return {
    // Once: the proof stops it after the suite, and again (to no effect) when it ends.
    stop: () => (stopped ??= stop()),
  };

  async function stop(): Promise<string[] | null> {
    // The kernel queued what the suite did before it ended, and every watch of this process reads
    // one queue in order (libuv keeps one inotify descriptor per loop): once the event of a file
    // made now in the top folder arrives, everything before it has been read. Elsewhere (another
    // platform's watches) a short wait stands in for it.
    const seen = new Promise<void>((resolve) => {
      markerSeen = resolve;
    });
    const file = path.join(dir, marker);
    const wrote = await writeFile(file, '').then(
      () => true,
      () => false,
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([seen, new Promise((resolve) => (timer = setTimeout(resolve, wrote ? 500 : 20)))]);
    clearTimeout(timer);
    await rm(file, { force: true }).catch(() => undefined);
    for (const watcher of watchers) watcher.close();
    if (failed || events > MAX_EVENTS) return null;
    return [...made, ...moved].sort();
  }
}
