/**
 * Once per jest run, before any worker starts (plain JS: jest loads this file outside its module
 * system): a run directory for the run's embedded clusters (test/setup/clusters.ts), and the
 * answer to "which PostgreSQL plays the system server?". Workers inherit both through the
 * environment; the one variable is CONSORT_TEST_POSTGRES_URL (see system-postgres.ts).
 */
import { chmod, mkdir, mkdtemp } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { claimRunDir, RUN_DIR_PREFIX, scratchBase, sweepDeadRuns } from './run-dirs.mjs';

const SYSTEM_PG_ENV = 'CONSORT_TEST_POSTGRES_URL';
const DEFAULT_SYSTEM_PG_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

async function answers(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export default async function globalSetup() {
  await sweepDeadRuns();
  // What outlives a run (the browser tests' Chromium, decompressed once per machine; the editor's
  // last screenshot for whoever reads a failure): the system temp directory, as the workers' own
  // temp directory goes with the run.
  process.env.CONSORT_TEST_KEEP_DIR ??= path.join(os.tmpdir(), 'consort-test-keep');
  await mkdir(process.env.CONSORT_TEST_KEEP_DIR, { recursive: true });
  const runDir = await mkdtemp(path.join(await scratchBase(), RUN_DIR_PREFIX));
  await claimRunDir(runDir);
  await chmod(runDir, 0o755); // the postgres OS user must reach the clusters when tests run as root
  process.env.CONSORT_TEST_RUN_DIR = runDir;
  // The workers' temporary folder (and so every repository, worktree and proof tree a test makes)
  // lies in the run directory too: beside the clusters, and removed with them by the teardown.
  // Sticky and open to all, as /tmp is: tests run commands as other users (postgres, sandboxes).
  const tmp = path.join(runDir, 'tmp');
  await mkdir(tmp);
  await chmod(tmp, 0o1777);
  process.env.TMPDIR = tmp;
  const wanted = process.env[SYSTEM_PG_ENV] ?? DEFAULT_SYSTEM_PG_URL;
  if (await answers(wanted)) {
    process.env[SYSTEM_PG_ENV] = wanted;
    return;
  }
  // Nothing there (a laptop without PostgreSQL, a CI job without the service): rather than fail by
  // the hundred, the tests use an embedded stand-in on this port, which the first worker that
  // imports test/setup/system-postgres.ts starts (its code is TypeScript, this file is not).
  const port = await freePort();
  process.env.CONSORT_TEST_SYSTEM_STANDIN_PORT = String(port);
  process.env[SYSTEM_PG_ENV] = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  process.stderr.write(
    `\nNo PostgreSQL answers at ${wanted.replace(/:[^:@/]*@/, ':***@')}: the tests use an embedded PostgreSQL 18 stand-in at ${process.env[SYSTEM_PG_ENV]} instead.\n`,
  );
}
