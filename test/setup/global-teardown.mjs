/**
 * After the run: stop every embedded cluster still running in the run directory (the shared one,
 * the system stand-in, any a test left behind) and remove the directory. A run that never gets
 * here (Ctrl-C) is swept by the next run's global-setup.mjs.
 */
import { removeRunDir } from './run-dirs.mjs';

export default async function globalTeardown() {
  const dir = process.env.CONSORT_TEST_RUN_DIR;
  if (dir) await removeRunDir(dir);
}
