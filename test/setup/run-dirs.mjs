/**
 * Run directories of jest runs (plain JS, shared by global-setup.mjs and global-teardown.mjs):
 * stopping their embedded clusters, and sweeping those of runs that died without a teardown
 * (Ctrl-C, a killed CI job), so no run leaves a postgres behind for long.
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const RUN_DIR_PREFIX = 'consort-test-run-';

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

/** Remove the run directories of jest processes that are gone. */
export async function sweepDeadRuns() {
  const tmp = os.tmpdir();
  const names = (await readdir(tmp).catch(() => [])).filter((n) => n.startsWith(RUN_DIR_PREFIX));
  await Promise.all(
    names.map(async (name) => {
      const owner = await pidIn(path.join(tmp, name, 'owner.pid'));
      if (owner !== null && !alive(owner)) await removeRunDir(path.join(tmp, name));
    }),
  );
}
