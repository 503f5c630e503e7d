/**
 * After the run: stop every embedded cluster still running in the run directory (the shared one,
 * the system stand-in, any a test left behind) and remove the directory, so no run leaves a
 * postgres behind. Plain JS, like global-setup.mjs: a fast shutdown is SIGINT to the postmaster.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

async function stop(dataDir) {
  const text = await readFile(path.join(dataDir, 'pgdata', 'postmaster.pid'), 'utf8').catch(() => null);
  const pid = Number(text?.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 300 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
}

export default async function globalTeardown() {
  const dir = process.env.CONSORT_TEST_RUN_DIR;
  if (!dir) return;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  await Promise.all(entries.filter((e) => e.isDirectory()).map((e) => stop(path.join(dir, e.name))));
  await rm(dir, { recursive: true, force: true });
}
