#!/usr/bin/env node
/**
 * npm run bench:isolation — the example shop's jest suite (3 files, 2 workers) on the embedded
 * PostgreSQL 18 with
 *   shared  one database for every file and every run (migrated and seeded once),
 *   lease   a database per file: consort-db/jest, a pooled branch of the migrated, seeded template,
 *   fresh   a database per file made the usual way: CREATE DATABASE, every migration, the seed,
 * each for two versions of the suite: as written (every test in a transaction rolled back, the
 * concurrency test deleting its rows) and "committing" (the same tests, each transaction committed:
 * what tests look like when nobody has to clean up). Reports wall time per run and how many runs
 * failed, plus what one file's database costs (lease + return vs create + migrate + seed + drop).
 * Writes bench/results/isolation.json.
 *
 *   --runs N        suite runs per mode and version (default 5)
 *   --samples N     per-file database samples (default 15)
 *   --data-dir DIR  where the embedded server lives (default: a temp dir; an XFS mount gives clone mode)
 */
import { chmod, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import { createLocalProvider } from '../lib/src/branches/local/provider.js';
import { EmbeddedServer } from '../lib/src/branches/local/server.js';
import { withClient, withDatabase } from '../lib/src/db/sql.js';
import { sweepLeases } from '../lib/src/isolation/lease.js';
import { leaseForFile, startTestDatabases } from '../lib/src/isolation/run.js';
import { cleanup, installSignalHandlers, onCleanup } from './lib/cleanup.js';
import { run } from './lib/exec.js';
import { summarize } from './lib/stats.js';
import { benchArgs } from './lib/args.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const values = benchArgs(import.meta.url, {
  runs: { type: 'integer', default: 5 },
  samples: { type: 'integer', default: 15 },
  'data-dir': { type: 'string' },
});
const { runs, samples } = values;
const started = performance.now();
const log = (m) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)}s] ${m}\n`);

main().then(
  async (code) => {
    await cleanup(log);
    process.exit(code);
  },
  async (e) => {
    log(`FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    await cleanup(log);
    process.exit(1);
  },
);

/** The shop in a temp directory, with consort-db and its tools installed as npm would link them. */
async function shopProject(dir) {
  await cp(path.join(REPO, 'examples/shop'), dir, {
    recursive: true,
    filter: (src) => !src.includes(`${path.sep}scenarios`),
  });
  await mkdir(path.join(dir, 'node_modules/@jest'), { recursive: true });
  await symlink(REPO, path.join(dir, 'node_modules/consort-db'));
  for (const dep of ['pg', 'jest', 'jest-environment-node', 'node-pg-migrate', '@jest/globals'])
    await symlink(path.join(REPO, 'node_modules', dep), path.join(dir, 'node_modules', dep));
  await cp(path.join(REPO, 'bench/lib/fresh-db-environment.mjs'), path.join(dir, 'fresh-environment.mjs'));
  const base = "transform: {}, testMatch: ['<rootDir>/test/**/*.test.js'], testTimeout: 30000";
  await writeFile(path.join(dir, 'jest.shared.config.js'), `export default { testEnvironment: 'node', ${base} };\n`);
  await writeFile(
    path.join(dir, 'jest.lease.config.js'),
    `export default {
  testEnvironment: 'consort-db/jest', globalSetup: 'consort-db/jest/global-setup', globalTeardown: 'consort-db/jest/global-teardown',
  testEnvironmentOptions: { consortDb: { poolSize: 3 } }, ${base} };\n`,
  );
  await writeFile(
    path.join(dir, 'jest.fresh.config.js'),
    `export default { testEnvironment: '<rootDir>/fresh-environment.mjs', ${base} };\n`,
  );
}

/** The same tests, each transaction committed instead of rolled back. */
async function committing(dir) {
  const file = path.join(dir, 'test/helpers.js');
  const text = await readFile(file, 'utf8');
  const changed = text.replace("await client.query('ROLLBACK');", "await client.query('COMMIT');");
  if (changed === text) throw new Error('the shop helpers changed: cannot make the committing version');
  await writeFile(file, changed);
}

async function migrateAndSeed(url, project) {
  await runner({
    databaseUrl: url,
    dir: path.join(project, 'migrations'),
    direction: 'up',
    migrationsTable: 'pgmigrations',
    log: () => undefined,
  });
  const seed = await readFile(path.join(project, 'seed.sql'), 'utf8');
  await withClient(url, (db) => db.query(seed));
}

async function main() {
  await installSignalHandlers(log);
  const dataDir = values['data-dir']
    ? path.resolve(values['data-dir'], `isolation-${process.pid}`)
    : await mkdtemp(path.join(os.tmpdir(), 'consort-bench-isolation-'));
  await mkdir(dataDir, { recursive: true });
  await chmod(dataDir, 0o755); // as root, postgres runs as its own OS user and must reach it
  onCleanup('data dir', () => rm(dataDir, { recursive: true, force: true }));
  onCleanup('server', () => new EmbeddedServer(dataDir).stop());
  const { provider, server } = await createLocalProvider({ dataDir, log });
  onCleanup('provider', () => provider.close());
  const caps = await provider.capabilities();
  log(`server: PostgreSQL ${caps.serverVersion}, ${caps.mode} mode (${caps.modeReason})`);

  const work = await mkdtemp(path.join(os.tmpdir(), 'consort-bench-shop-'));
  onCleanup('projects', () => rm(work, { recursive: true, force: true }));
  const versions = { 'as written': path.join(work, 'as-written'), committing: path.join(work, 'committing') };
  for (const dir of Object.values(versions)) await shopProject(dir);
  await committing(versions.committing);

  const childBase = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: os.tmpdir(), CI: 'true', NO_COLOR: '1' };
  const jest = path.join(REPO, 'node_modules/jest/bin/jest.js');
  async function suite(project, mode, env) {
    const t0 = performance.now();
    const out = await run(
      process.execPath,
      ['--experimental-vm-modules', jest, '--ci', '--maxWorkers=2', '-c', `jest.${mode}.config.js`],
      { cwd: project, env: { ...childBase, ...env } },
    ).then(
      (r) => ({ ok: true, text: r.stdout + r.stderr }),
      (e) => ({ ok: false, text: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
    );
    const ms = performance.now() - t0;
    const tests = /Tests:\s+(.*)/.exec(out.text)?.[1]?.trim() ?? 'no summary';
    return { ms, ok: out.ok, tests };
  }

  // Per-file database cost, outside any runner.
  log(`per-file database: ${samples} leases vs ${samples} fresh databases`);
  const leaseEnv = { CONSORT_DATA_DIR: dataDir };
  const setup = await startTestDatabases({ root: versions['as written'], poolSize: 3, processEnv: leaseEnv });
  const perFile = { lease: [], leaseReturn: [], fresh: [], freshDrop: [] };
  try {
    for (let i = 0; i < samples; i++) {
      let t = performance.now();
      const f = await leaseForFile(setup.spec);
      perFile.lease.push(performance.now() - t);
      t = performance.now();
      await f.done();
      perFile.leaseReturn.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 150)); // a file's run: the setup refills meanwhile
    }
  } finally {
    await setup.stop();
  }
  for (let i = 0; i < samples; i++) {
    const name = `fresh_sample_${i}`;
    let t = performance.now();
    await withClient(server.url, (db) => db.query(`CREATE DATABASE ${name}`));
    await migrateAndSeed(withDatabase(server.url, name), versions['as written']);
    perFile.fresh.push(performance.now() - t);
    t = performance.now();
    await withClient(server.url, (db) => db.query(`DROP DATABASE ${name} WITH (FORCE)`));
    perFile.freshDrop.push(performance.now() - t);
  }

  // Whole-suite runs: one cold lease run first (it built the template above: the pool is warm).
  const sharedUrl = async (version) => {
    const name = `shared-${version === 'committing' ? 'c' : 'w'}`;
    await provider.create({ name });
    const url = await provider.connectionUri(name);
    await migrateAndSeed(url, versions[version]);
    return url;
  };
  const results = [];
  for (const [version, project] of Object.entries(versions)) {
    const shared = await sharedUrl(version);
    const modes = {
      shared: { DATABASE_URL: shared },
      lease: leaseEnv,
      fresh: { BENCH_ADMIN_URL: server.url, BENCH_PROJECT: project },
    };
    const byMode = Object.fromEntries(Object.keys(modes).map((m) => [m, []]));
    for (let i = 0; i < runs; i++) {
      for (const [mode, env] of Object.entries(modes)) {
        const r = await suite(project, mode === 'shared' ? 'shared' : mode, env);
        byMode[mode].push(r);
        log(`${version} / ${mode} run ${i + 1}: ${Math.round(r.ms)} ms, ${r.ok ? 'passed' : 'FAILED'} (${r.tests})`);
      }
    }
    for (const [mode, list] of Object.entries(byMode)) {
      results.push({
        version,
        mode,
        wall: summarize(list.map((r) => r.ms)),
        failedRuns: list.filter((r) => !r.ok).length,
        runs: list.length,
        tests: list.map((r) => r.tests),
      });
    }
  }
  // A run leaves its last leases expired (dropping a database costs a checkpoint, so nobody waits for
  // it); the next sweep drops them. Live leases left behind would be a leak.
  const now = new Date();
  const leftovers = (await provider.list())
    .filter((b) => b.name.startsWith('lease-') && !(b.expiresAt && b.expiresAt <= now))
    .map((b) => b.name);
  const expiredSwept = (await sweepLeases(provider)).length;

  const report = {
    when: new Date().toISOString(),
    machine: `${os.cpus().length} vCPU, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
    server: caps,
    runs,
    samples,
    perFile: Object.fromEntries(Object.entries(perFile).map(([k, v]) => [k, summarize(v)])),
    suites: results,
    leasesLeft: leftovers,
    expiredLeasesSwept: expiredSwept,
  };
  await mkdir(path.join(REPO, 'bench/results'), { recursive: true });
  await writeFile(path.join(REPO, 'bench/results/isolation.json'), `${JSON.stringify(report, null, 2)}\n`);

  const f = report.perFile;
  const lines = [
    `A database per test file on the example shop (PostgreSQL ${caps.serverVersion}, ${caps.mode} mode, ${report.machine})`,
    '',
    "one file's database            median ms   p95 ms",
    `lease (pooled branch)          ${String(f.lease.median).padStart(9)}  ${String(f.lease.p95).padStart(7)}`,
    `  return it                    ${String(f.leaseReturn.median).padStart(9)}  ${String(f.leaseReturn.p95).padStart(7)}`,
    `fresh: create+migrate+seed     ${String(f.fresh.median).padStart(9)}  ${String(f.fresh.p95).padStart(7)}`,
    `  drop it                      ${String(f.freshDrop.median).padStart(9)}  ${String(f.freshDrop.p95).padStart(7)}`,
    '',
    `whole suite (3 files, 2 workers), ${runs} runs each    wall median  min–max         failed runs`,
    ...results.map(
      (r) =>
        `${`${r.version} / ${r.mode}`.padEnd(40)} ${`${(r.wall.median / 1000).toFixed(2)} s`.padStart(11)}  ${`${(r.wall.min / 1000).toFixed(2)}–${(r.wall.max / 1000).toFixed(2)} s`.padEnd(14)}  ${r.failedRuns}/${r.runs}`,
    ),
    '',
    `live leases left behind: ${leftovers.length} (expired ones swept at the end: ${expiredSwept})`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return leftovers.length === 0 ? 0 : 1;
}
