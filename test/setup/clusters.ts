/**
 * The embedded PostgreSQL 18 clusters of one jest run, all under one run directory that
 * global-setup.mjs creates (CONSORT_TEST_RUN_DIR) and global-teardown.mjs stops and removes:
 *
 *   template/  initdb'd once per run (the slow part: ~10 s on a loaded 2-core box), never started
 *              by tests; every other cluster is a copy of it (`cp -a`, ~1 s).
 *   shared/    the one server test files share (localTestProvider), a namespace per file.
 *   system/    only when no PostgreSQL answers at CONSORT_TEST_POSTGRES_URL: a stand-in for the
 *              system server (trust auth on 127.0.0.1, like the one CI runs), see system-postgres.ts.
 *   scratch/   trust auth on 127.0.0.1 too: where tests that need *a* PostgreSQL (the cloud
 *              emulators' databases, the App's store) make their databases (scratchServerUrl);
 *              when system/ runs, it plays this part too (scratchPgUrl in system-postgres.ts).
 *   own-*      a test's own server, for tests about the local provider's lifecycle or that run
 *              the CLI/Action with CONSORT_DATA_DIR (they start and stop it themselves).
 *
 * Every cluster is started lazily and under a file lock, so any number of jest workers can ask at
 * once and the first one does the work. The template runs with fsync off: these clusters are
 * thrown away after the run, and what the tests check (branches, SQL, processes) does not depend
 * on data surviving a power cut.
 */
import { randomBytes } from 'node:crypto';
import { access, chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import lockfile from 'proper-lockfile';
import { EmbeddedServer, type ServerInfo } from '../../src/branches/local/server.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;

export const RUN_DIR_ENV = 'CONSORT_TEST_RUN_DIR';

export function runDir(): string {
  const dir = process.env[RUN_DIR_ENV];
  if (!dir) {
    throw new Error(
      `${RUN_DIR_ENV} is not set: run the tests through jest with the repository's jest.config.js (npm test), whose globalSetup creates it.`,
    );
  }
  return dir;
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** Run `fn` holding a lock named `name` in the run directory (shared by all workers). */
async function locked<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const target = path.join(runDir(), `${name}.lock-target`);
  await writeFile(target, '', { flag: 'a' });
  const release = await lockfile.lock(target, {
    retries: { retries: 600, minTimeout: 100, maxTimeout: 500 },
    stale: 120_000,
  });
  try {
    return await fn();
  } finally {
    await release();
  }
}

async function sql(url: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const s of statements) await client.query(s);
  } finally {
    await client.end();
  }
}

/** The initdb'd, stopped template every cluster of the run is copied from. */
async function template(): Promise<string> {
  const dir = path.join(runDir(), 'template');
  const ready = path.join(runDir(), 'template.ready');
  if (await exists(ready)) return dir;
  return locked('template', async () => {
    if (await exists(ready)) return dir;
    await mkdir(dir, { recursive: true, mode: 0o755 });
    const server = new EmbeddedServer(dir);
    const info = await server.start();
    await sql(info.url, [
      'ALTER SYSTEM SET fsync = off',
      'ALTER SYSTEM SET synchronous_commit = off',
      'ALTER SYSTEM SET full_page_writes = off',
    ]);
    await server.stop();
    await writeFile(ready, '');
    return dir;
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A new data directory holding an initialised, stopped cluster (a copy of the template, with a
 * port of its own). Whoever starts it (EmbeddedServer, the CLI, the Action) finds it initialised.
 */
export async function copyOfTemplate(name = `own-${randomBytes(4).toString('hex')}`): Promise<string> {
  const from = await template();
  const dir = path.join(runDir(), name);
  await mkdir(dir, { mode: 0o755 });
  await chmod(dir, 0o755); // the postgres OS user must reach it when tests run as root
  // cp -a keeps the postgres OS user's ownership of pgdata (tests run as root on CI).
  await exec('cp', ['-a', '--reflink=auto', `${from}/.`, dir]);
  const stateFile = path.join(dir, 'server.json');
  const state = JSON.parse(await readFile(stateFile, 'utf8')) as { port: number };
  await writeFile(stateFile, `${JSON.stringify({ ...state, port: await freePort() }, null, 2)}\n`, { mode: 0o600 });
  return dir;
}

/** A fresh, empty data directory in the run directory (removed with it): for a first-use initdb. */
export async function emptyDataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(runDir(), 'fresh-'));
  await chmod(dir, 0o755);
  return dir;
}

/** Start (once per run) the cluster `name`, copied from the template with `prepare` applied. */
async function runningCluster(name: string, prepare?: (dir: string) => Promise<void>): Promise<ServerInfo> {
  const dir = path.join(runDir(), name);
  const ready = path.join(runDir(), `${name}.ready`);
  if (!(await exists(ready))) {
    await locked(name, async () => {
      if (await exists(ready)) return;
      await rm(dir, { recursive: true, force: true });
      await copyOfTemplate(name);
      await prepare?.(dir);
      await writeFile(ready, '');
    });
  }
  return new EmbeddedServer(dir).start(); // returns at once when it already runs
}

/** The run's shared embedded server (scram-sha-256 auth, as the local provider sets it up). */
export function sharedServer(): Promise<ServerInfo> {
  return runningCluster('shared');
}

/** pg_hba.conf: trust on loopback ahead of the local provider's scram lines, as a system server's CI service has it. */
async function trustLoopback(dir: string): Promise<void> {
  const hba = path.join(dir, 'pgdata', 'pg_hba.conf');
  await writeFile(hba, `host all all 127.0.0.1/32 trust\n${await readFile(hba, 'utf8')}`);
}

/**
 * A stand-in for the system PostgreSQL at 127.0.0.1:5432, on the port global-setup.mjs chose:
 * trust auth on loopback, as the tests expect of the system server (the cloud emulators' proxy and
 * the postgres-provider tests connect as `postgres` without a password).
 */
export async function systemStandIn(port: number): Promise<void> {
  const info = await runningCluster('system', async (dir) => {
    await trustLoopback(dir);
    const stateFile = path.join(dir, 'server.json');
    const state = JSON.parse(await readFile(stateFile, 'utf8')) as { port: number };
    await writeFile(stateFile, `${JSON.stringify({ ...state, port }, null, 2)}\n`, { mode: 0o600 });
  });
  if (info.port !== port)
    throw new Error(
      `The embedded stand-in for the system PostgreSQL could not get port ${port} (it is on ${info.port}): run the tests again.`,
    );
}

/**
 * The run's scratch server: an embedded PostgreSQL 18 with trust auth on loopback (like the system
 * server) and fsync off (like every cluster of the run), for tests that need *a* PostgreSQL to make
 * databases on rather than a particular one: the cloud emulators' physical databases and the App's
 * store. A `CREATE DATABASE … STRATEGY FILE_COPY` fsyncs every file and checkpoints twice on a
 * durable server (5 s at load 15 on the system PostgreSQL 15 here, 0.5 s on this one). Returns its
 * passwordless URL as `postgres`.
 */
export async function scratchServerUrl(): Promise<string> {
  const info = await runningCluster('scratch', trustLoopback);
  return `postgresql://postgres@127.0.0.1:${info.port}/postgres`;
}
