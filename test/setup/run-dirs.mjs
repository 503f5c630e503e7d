/**
 * Run directories of jest runs (plain JS, shared by global-setup.mjs and global-teardown.mjs):
 * stopping their embedded clusters, and sweeping those of runs that died without a teardown
 * (Ctrl-C, a killed CI job), so no run leaves a postgres behind for long.
 */
import { readdir, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const RUN_DIR_PREFIX = 'consort-test-run-';

/** Where a run's directory goes when the machine has room in memory for it (see scratchBase). */
export const MEMORY_BASE = '/dev/shm';
const TMPFS_MAGIC = 0x01021994;
/** A run's clusters, repositories and proof trees peak at well under this; a smaller tmpfs (a container's 64 MB /dev/shm) is not used. */
const MEMORY_NEEDED = 4 * 1024 ** 3;

/**
 * The folder a run's directory is made in: /dev/shm when it is a tmpfs with room to spare,
 * otherwise the system's temporary folder. On ext4 the suite's own file churn — every branch a
 * directory of a few hundred files copied and deleted again, repositories and proof trees made
 * and removed by the thousand — costs the kernel more than the tests: creating an inode scans the
 * group's recently deleted ones (`recently_deleted` in a profile of the suite). In memory those
 * files cost nothing to make or remove. CONSORT_TEST_TMPFS=0 keeps everything on disk.
 */
export async function scratchBase() {
  if (process.env.CONSORT_TEST_TMPFS === '0') return os.tmpdir();
  const fs = await statfs(MEMORY_BASE).catch(() => null);
  if (fs === null || Number(fs.type) !== TMPFS_MAGIC) return os.tmpdir();
  return Number(fs.bavail) * Number(fs.bsize) >= MEMORY_NEEDED ? MEMORY_BASE : os.tmpdir();
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

async function pidIn(file) {
  const pid = Number((await readFile(file, 'utf8').catch(() => '')).split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** A fast shutdown is SIGINT to the postmaster; wait up to 30 s for it to go. */
async function stopCluster(dataDir) {
  const pid = await pidIn(path.join(dataDir, 'pgdata', 'postmaster.pid'));
  if (pid === null || !alive(pid)) return;
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 300 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
}

/** Stop every cluster in a run directory and remove it. */
export async function removeRunDir(dir) {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  await Promise.all(entries.filter((e) => e.isDirectory()).map((e) => stopCluster(path.join(dir, e.name))));
  await rm(dir, { recursive: true, force: true });
}

/** Record which process owns a run directory. */
export function claimRunDir(dir) {
  return writeFile(path.join(dir, 'owner.pid'), `${process.pid}\n`);
}

/** Remove the run directories of jest processes that are gone (in memory and on disk). */
export async function sweepDeadRuns() {
  for (const base of new Set([os.tmpdir(), MEMORY_BASE])) {
    const names = (await readdir(base).catch(() => [])).filter((n) => n.startsWith(RUN_DIR_PREFIX));
    await Promise.all(
      names.map(async (name) => {
        const owner = await pidIn(path.join(base, name, 'owner.pid'));
        if (owner !== null && !alive(owner)) await removeRunDir(path.join(base, name));
      }),
    );
  }
}
