#!/usr/bin/env node
/**
 * Branch benchmark (`npm run bench:branch`): how long does `provider.create()` take in clone
 * mode (PostgreSQL 18 `file_copy_method = clone` on a reflink XFS) and copy mode (ext4), on
 * parents of ~10 MB, 100 MB and 1 GB, next to what users do today on the same data:
 * `pg_dump -Fc | pg_restore` into a new database, and a fresh database plus all migrations.
 *
 * Progress goes to stderr, the table to stdout, raw samples to bench/results/branch.json.
 * Everything it creates (embedded servers, data directories, databases, a scratch XFS it had to
 * mount) is removed at the end, on failure and on Ctrl-C. See `node bench/branch.js --help`.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { mountLoopXfs, runTeardown } from '../lib/src/branches/local/loop-xfs.js';
import { createLocalProvider } from '../lib/src/branches/local/provider.js';
import { EmbeddedServer } from '../lib/src/branches/local/server.js';
import { cleanup, installSignalHandlers, onCleanup, wasInterrupted } from './lib/cleanup.js';
import { cloneBytesNeeded, ensureReflinkScratch, filesystemOf, freeBytes, gb } from './lib/disk.js';
import { bash, run } from './lib/exec.js';
import { parseOptions } from './lib/options.js';
import { renderReport, verdicts } from './lib/report.js';
import { round, summarize } from './lib/stats.js';
import {
  applyMigrations,
  connect,
  eventsForSize,
  migrations,
  sql,
  waitForNoSessions,
  withDatabase,
} from './lib/workload.js';

const GiB = 1024 ** 3;
const started = performance.now();
let partial; // what has been measured so far, written as JSON if the run fails
const log = (message) =>
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)}s] ${message}\n`);

main().then(
  (code) => process.exit(code),
  async (e) => {
    if (wasInterrupted()) return cleanup(log); // the signal handler exits once cleanup is done
    log(`FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    if (partial) {
      partial.error = e instanceof Error ? e.message : String(e);
      await mkdir(path.dirname(partial.options.out), { recursive: true })
        .then(() => writeFile(partial.options.out, `${JSON.stringify(partial, null, 2)}\n`))
        .then(
          () => log(`partial results: ${partial.options.out}`),
          () => undefined,
        );
    }
    await cleanup(log);
    process.exit(1);
  },
);

async function main() {
  let opts;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`bench/branch.js: ${e.message}\n`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(opts.help);
    return 0;
  }
  await installSignalHandlers(log);
  const id = randomBytes(4).toString('hex');
  const maxMb = Math.max(...opts.sizes);
  const notes = [];
  log(
    `sizes ${opts.sizes.join(', ')} MB; ${opts.runs} creates per size and mode, ${opts.baselineRuns} baseline runs${opts.quick ? ' (--quick)' : ''}`,
  );

  // ------------------------------------------------------------------ preflight: disk
  // Copy mode (parent + a full copy + fresh database + WAL) and the dump/restore server (source +
  // restored copy + WAL) and the sparse XFS image all land on the local disk.
  const estimate = Math.ceil((maxMb * 1024 * 1024 * 8 + 3 * GiB) / GiB);
  const minFreeGb = opts.minFreeGb ?? Math.max(8, estimate);
  const free = await freeBytes(opts.copyDir);
  if (free < minFreeGb * GiB) {
    throw new Error(
      `not enough disk: ${gb(free)} free under ${opts.copyDir}, this run needs ${minFreeGb} GB ` +
        `(largest parent ${maxMb} MB; lower --sizes or pass --min-free-gb to override)`,
    );
  }
  log(`disk: ${gb(free)} free under ${opts.copyDir} (need ${minFreeGb} GB)`);

  const environment = {
    embeddedServerSettings: opts.pgSettings.map(({ name, value }) => `${name}=${value}`),
    host: {
      cpus: os.cpus().length,
      memoryGb: Math.round(os.totalmem() / GiB),
      kernel: os.release(),
      node: process.version,
      busy: {},
    },
    clone: { available: false, reason: 'not set up' },
    copy: null,
    dumpRestore: null,
    notes,
  };

  const sizes = [];
  const result = {
    benchmark: 'branch-create',
    startedAt: new Date().toISOString(),
    finishedAt: null,
    options: { ...opts, skip: [...opts.skip] },
    methods: {
      clone:
        'provider.create({ name, parent }) on the local provider, data dir on a reflink XFS (CREATE DATABASE ... STRATEGY FILE_COPY with file_copy_method = clone); the branch is deleted after each timed create',
      copy: 'the same, data dir on ext4 (file_copy_method = copy: full file copies)',
      clonePooled:
        'provider.create({ name, parent }) with a warm pool of the parent (branch pool --size N): a rename of a ready copy plus a catalog row; refilled in the background between runs',
      copyPooled: 'the same on the copy-mode server',
      dumpRestore:
        'createdb new && pg_dump -Fc src | pg_restore -d new, on the dump/restore server with its own client tools (includes index builds)',
      freshMigrations:
        'CREATE DATABASE + every migration from scratch (one transaction each) on the copy-mode embedded server',
      parent: 'branch parent-<size> of main, migrations applied, then VACUUM (ANALYZE) and CHECKPOINT before timing',
      percentiles: 'median; p95 by nearest rank (with few runs it is the slowest run)',
    },
    environment,
    sizes,
    targets: { cloneMedianMs: 100, flatnessMax: 2, speedupMin: 50, pooledMedianMs: 25 },
  };
  partial = result;
  environment.host.busy.start = await hostBusy();

  // ------------------------------------------------------------------ environments
  let clone;
  if (opts.skip.has('clone')) {
    environment.clone = { available: false, reason: 'skipped (--skip clone)' };
  } else {
    clone = await setupClone(opts, id, maxMb, environment);
  }
  let copy;
  if (!opts.skip.has('copy') || !opts.skip.has('fresh')) {
    const dataDir = path.join(opts.copyDir, `consort-bench-${id}`);
    copy = await setupLocal('copy', dataDir, opts.pgSettings);
    const fs = await filesystemOf(dataDir);
    environment.copy = {
      available: true,
      dataDir,
      filesystem: fs.fstype,
      mode: copy.caps.mode,
      serverVersion: copy.caps.serverVersion,
      modeReason: copy.caps.modeReason,
    };
    if (copy.caps.mode !== 'copy')
      notes.push(`copy-mode data dir ${dataDir} reported mode ${copy.caps.mode} (${copy.caps.modeReason})`);
  }
  let dump;
  if (!opts.skip.has('dump')) {
    dump = await setupDumpRestore(opts);
    environment.dumpRestore = dump.info;
  }

  // ------------------------------------------------------------------ per size
  for (const sizeMb of opts.sizes) {
    const list = migrations(sizeMb, { extraTables: opts.extraTables });
    const entry = {
      targetMb: sizeMb,
      events: eventsForSize(sizeMb),
      extraTables: opts.extraTables,
      accounts: list.find((m) => m.name === '002_seed_accounts').rows,
      parentBytes: {},
      load: {},
      results: {},
      diagnostics: {},
    };
    sizes.push(entry);
    log(`=== parent ~${sizeMb} MB (${entry.events.toLocaleString('en-US')} events) ===`);

    entry.hostLoad = { before: await hostBusy() };
    if (clone?.provider) {
      await benchCreates(clone, 'clone', entry, list, opts);
    } else if (!opts.skip.has('clone')) {
      entry.results.clone = { unavailable: environment.clone.reason };
    }
    if (copy && !opts.skip.has('copy')) await benchCreates(copy, 'copy', entry, list, opts);
    if (copy && !opts.skip.has('fresh')) entry.results.freshMigrations = await benchFresh(copy, entry, list, opts);
    if (dump)
      entry.results.dumpRestore = dump.info.available
        ? await benchDumpRestore(dump, id, entry, list, opts)
        : { unavailable: dump.info.reason };
  }

  // ------------------------------------------------------------------ report
  result.finishedAt = new Date().toISOString();
  environment.host.busy.end = await hostBusy();
  // Only the reading taken before we started is free of our own load.
  const { load1 } = environment.host.busy.start;
  if (load1 > environment.host.cpus * 0.5) {
    notes.push(
      `the host was already busy when the run started (1-min load average ${load1} on ${environment.host.cpus} CPUs): fsync-bound timings are noisy, rerun on a quiet machine`,
    );
  }
  result.verdicts = verdicts(sizes);
  await mkdir(path.dirname(opts.out), { recursive: true });
  await writeFile(opts.out, `${JSON.stringify(result, null, 2)}\n`);
  log('cleaning up');
  await cleanup(log);
  process.stdout.write(`${renderReport(result)}\n\nJSON: ${opts.out}\n`);
  return 0;
}

// -------------------------------------------------------------------- environments

/** Other work on the machine skews fsync-bound timings: record the load average and pressure (PSI). */
async function hostBusy() {
  const [load1, load5] = os.loadavg();
  const psi = async (kind) => {
    const text = await readFile(`/proc/pressure/${kind}`, 'utf8').catch(() => null);
    const m = text && /some avg10=([\d.]+) avg60=([\d.]+)/.exec(text);
    return m ? { someAvg10: Number(m[1]), someAvg60: Number(m[2]) } : null;
  };
  return {
    at: new Date().toISOString(),
    load1: round(load1, 2),
    load5: round(load5, 2),
    cpuPressure: await psi('cpu'),
    ioPressure: await psi('io'),
  };
}

/** An embedded PostgreSQL 18 with its own data directory, removed at the end. */
async function setupLocal(label, dataDir, settings) {
  await mkdir(dataDir, { recursive: true, mode: 0o755 });
  await chmod(dataDir, 0o755); // the postgres OS user must reach pgdata inside it
  onCleanup(`remove ${dataDir}`, () => rm(dataDir, { recursive: true, force: true }));
  onCleanup(`stop embedded server in ${dataDir}`, () => new EmbeddedServer(dataDir).stop());
  log(`${label}: starting an embedded PostgreSQL in ${dataDir}`);
  const { provider, server } = await createLocalProvider({ dataDir, log: (m) => log(`${label}: ${m}`) });
  // Registered after the stop step, so it runs first: end the pools while the server is still up.
  onCleanup(`close ${label} provider`, () => Promise.race([provider.close(), new Promise((r) => setTimeout(r, 5000))]));
  const caps = await provider.capabilities();
  for (const { name, value } of settings) {
    await sql(server.url, `ALTER SYSTEM SET ${name} = ${quoteLiteral(value)}`);
    log(`${label}: ALTER SYSTEM SET ${name} = ${value}`);
  }
  if (settings.length > 0) await sql(server.url, 'SELECT pg_reload_conf()');
  log(`${label}: mode ${caps.mode} — ${caps.modeReason}`);
  return { label, provider, server, caps, dataDir };
}

/** The Action's way (`reflink: auto`): a sparse image under --copy-dir, loop-mounted, the data dir inside. */
async function actionMount(opts) {
  const dir = await mkdtemp(path.join(opts.copyDir, 'consort-bench-reflink-'));
  await chmod(dir, 0o755); // as root the server runs as the postgres OS user
  onCleanup(`remove ${dir}`, () => rm(dir, { recursive: true, force: true }));
  const paths = { image: path.join(dir, 'consort-xfs.img'), mountPoint: path.join(dir, 'consort-xfs') };
  const result = await mountLoopXfs('auto', paths, (m) => log(`clone: ${m}`));
  if (result.kind === 'skipped') return { ok: false, reason: `${result.reason} (${result.hint ?? 'nothing to do'})` };
  if (result.kind === 'reused') return { ok: false, reason: `${paths.mountPoint} was already mounted` };
  onCleanup(`unmount ${paths.mountPoint}`, async () => {
    const failed = await runTeardown(result.teardown, () => undefined);
    if (failed.length > 0) throw new Error(failed.join('; '));
  });
  return {
    ok: true,
    dir: result.dataDir,
    created: true,
    note: `clone mode on the Action's loop XFS: a ${gb(result.sizeBytes)} sparse image under ${dir} (lib/src/branches/local/loop-xfs.js)`,
  };
}

async function setupClone(opts, id, maxMb, environment) {
  const need = cloneBytesNeeded(maxMb);
  const scratch = opts.actionMount ? await actionMount(opts) : await ensureReflinkScratch(opts.xfsDir, need, log);
  if (!scratch.ok) {
    environment.clone = { available: false, reason: scratch.reason };
    log(`clone mode unavailable: ${scratch.reason}`);
    return undefined;
  }
  if (scratch.undo && !opts.keepXfs) onCleanup(`remove scratch XFS ${scratch.dir}`, scratch.undo);
  if (scratch.created)
    environment.notes.push(
      `${scratch.note}${opts.keepXfs && !opts.actionMount ? ' (kept: --keep-xfs)' : ' (removed at the end)'}`,
    );
  const dataDir = path.join(scratch.dir, `bench-${id}`);
  const env = await setupLocal('clone', dataDir, opts.pgSettings);
  const fs = await filesystemOf(dataDir);
  if (env.caps.mode !== 'clone') {
    environment.clone = {
      available: false,
      reason: `provider chose ${env.caps.mode} mode in ${dataDir}: ${env.caps.modeReason}`,
    };
    log(`clone mode unavailable: ${environment.clone.reason}`);
    return undefined;
  }
  environment.clone = {
    available: true,
    dataDir,
    filesystem: `${fs.fstype} reflink (${fs.source})`,
    mode: env.caps.mode,
    serverVersion: env.caps.serverVersion,
    modeReason: env.caps.modeReason,
    scratchFreeBytes: await freeBytes(dataDir),
  };
  return env;
}

async function setupDumpRestore(opts) {
  const url = new URL(opts.pgUrl);
  const pgEnv = {
    ...process.env,
    PGHOST: url.hostname || '127.0.0.1',
    PGPORT: url.port || '5432',
    PGUSER: decodeURIComponent(url.username || 'postgres'),
    ...(url.password ? { PGPASSWORD: decodeURIComponent(url.password) } : {}),
  };
  const server = `${pgEnv.PGHOST}:${pgEnv.PGPORT}`;
  try {
    const [{ v }] = await sql(opts.pgUrl, "SELECT current_setting('server_version') AS v");
    const serverMajor = Number.parseInt(v, 10);
    const tools = {};
    for (const tool of ['pg_dump', 'pg_restore', 'createdb']) {
      const { stdout } = await run(tool, ['--version']);
      tools[tool] = Number.parseInt(stdout.match(/(\d+)(\.\d+)?/)[1], 10);
      if (tools[tool] !== serverMajor) {
        throw new Error(
          `${tool} is version ${tools[tool]} but the server at ${server} is ${serverMajor} (install matching client tools)`,
        );
      }
    }
    log(`dump/restore: PostgreSQL ${v} at ${server}, client tools ${serverMajor}`);
    return {
      env: pgEnv,
      url: opts.pgUrl,
      info: { available: true, server, serverVersion: v, tools: `pg_dump/pg_restore ${serverMajor}` },
    };
  } catch (e) {
    const reason = `${server}: ${e.message}`;
    log(`dump/restore baseline unavailable: ${reason}`);
    return { info: { available: false, server, reason } };
  }
}

function quoteLiteral(value) {
  return `'${String(value).replace(/'/g, "''")}'`;
}

// -------------------------------------------------------------------- measurements

/**
 * Create `parent-<size>` from main, run the migrations in it, settle it (VACUUM ANALYZE +
 * CHECKPOINT, so neither autovacuum nor flushing the load lands in a timed run), then time
 * `provider.create()` of children, deleting each before the next.
 */
async function benchCreates(env, mode, entry, list, opts) {
  const { provider, server } = env;
  const tag = `${entry.targetMb} MB ${mode}`;
  const parent = `parent-${String(entry.targetMb).replace(/\./g, '-')}`;
  await provider.create({ name: parent });
  try {
    const parentDb = (await provider.get(parent)).database;
    const url = await provider.connectionUri(parent);
    const tLoad = performance.now();
    const steps = await applyMigrations(url, list, (m) =>
      log(`${tag}: parent ${parent}: ${m.name}${m.rows ? ` (${m.rows.toLocaleString('en-US')} rows)` : ''}`),
    );
    log(`${tag}: VACUUM ANALYZE + CHECKPOINT`);
    await sql(url, 'VACUUM (ANALYZE)');
    await sql(server.url, 'CHECKPOINT');
    entry.load[mode] = {
      totalMs: round(performance.now() - tLoad),
      steps: steps.map((s) => ({ ...s, ms: round(s.ms) })),
    };
    const [{ bytes, oid }] = await sql(
      server.url,
      'SELECT pg_database_size(oid)::bigint AS bytes, oid FROM pg_database WHERE datname = $1',
      [parentDb],
    );
    entry.parentBytes[mode] = Number(bytes);
    log(
      `${tag}: parent is ${(Number(bytes) / 1024 / 1024).toFixed(1)} MB (loaded in ${(entry.load[mode].totalMs / 1000).toFixed(1)} s)`,
    );
    await waitForNoSessions(server.url, parentDb);

    const samples = [];
    const warmup = [];
    const total = opts.warmup + opts.runs;
    for (let i = 0; i < total; i++) {
      const name = `${parent}-b${i}`;
      const t0 = performance.now();
      await provider.create({ name, parent });
      const ms = performance.now() - t0;
      await provider.delete(name);
      (i < opts.warmup ? warmup : samples).push(round(ms, 2));
      if (i === total - 1 || (i + 1) % 5 === 0) log(`${tag}: create ${i + 1}/${total}: ${ms.toFixed(1)} ms`);
    }
    entry.results[mode] = { ...summarize(samples), samples, ...(warmup.length ? { warmup } : {}) };
    log(`${tag}: create median ${entry.results[mode].median} ms, p95 ${entry.results[mode].p95} ms`);

    if (!opts.skip.has('pooled')) {
      // Warm pool: the same creates, each taking a ready copy; the pool is refilled in the background
      // between creates (as it is between a test file's setup and the next), so each run is a handout.
      const key = `${mode}Pooled`;
      await provider.pool(parent, opts.poolSize);
      const pooledSamples = [];
      let misses = 0;
      for (let i = 0; i < opts.runs; i++) {
        const name = `${parent}-p${i}`;
        const t0 = performance.now();
        const b = await provider.create({ name, parent });
        const ms = performance.now() - t0;
        if (!b.pooled) misses++;
        pooledSamples.push(round(ms, 2));
        await provider.settled();
        await provider.delete(name);
      }
      await provider.pool(parent, 0);
      entry.results[key] = { ...summarize(pooledSamples), samples: pooledSamples, misses };
      log(
        `${tag}: pooled handout median ${entry.results[key].median} ms, p95 ${entry.results[key].p95} ms, ${misses} miss(es)`,
      );
    }

    if (mode === 'clone') entry.diagnostics.clone = await cloneBreakdown(env, parentDb, oid, entry.results.clone, opts);
  } finally {
    // Frees the parent's disk before the next (bigger) size.
    await provider.delete(parent, { recursive: true, terminateConnections: true });
  }
}

/**
 * Where the clone time goes: the same CREATE DATABASE the provider issues, without the catalog
 * bookkeeping around it, and a CHECKPOINT on the idle server (FILE_COPY forces two of them).
 */
async function cloneBreakdown(env, parentDb, oid, providerResult, opts) {
  const runs = Math.min(5, opts.runs);
  const client = await connect(env.server.url);
  const rawCreate = [];
  const checkpoint = [];
  try {
    await client.query('SET file_copy_method = clone');
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await client.query(`CREATE DATABASE bench_raw_clone TEMPLATE "${parentDb}" STRATEGY FILE_COPY`);
      rawCreate.push(round(performance.now() - t0, 2));
      await client.query('DROP DATABASE bench_raw_clone');
    }
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await client.query('CHECKPOINT');
      checkpoint.push(round(performance.now() - t0, 2));
    }
  } finally {
    await client.query('DROP DATABASE IF EXISTS bench_raw_clone').catch(() => undefined);
    await client.end().catch(() => undefined);
  }
  const parentFiles = await readdir(path.join(env.server.pgdata, 'base', String(oid))).then(
    (f) => f.length,
    () => null,
  );
  const raw = { ...summarize(rawCreate), samples: rawCreate };
  return {
    rawCreate: raw,
    checkpoint: { ...summarize(checkpoint), samples: checkpoint },
    providerOverheadMs: round(providerResult.median - raw.median),
    parentFiles,
  };
}

/** What a naive CI does: a new empty database, then every migration from scratch. */
async function benchFresh(env, entry, list, opts) {
  const tag = `${entry.targetMb} MB fresh+migrations`;
  const samples = [];
  const admin = env.server.url;
  for (let i = 0; i < opts.baselineRuns; i++) {
    const db = `bench_fresh_${i}`;
    const undo = onCleanup(`drop ${db}`, () => sql(admin, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`));
    try {
      const t0 = performance.now();
      await sql(admin, `CREATE DATABASE ${db}`);
      await applyMigrations(withDatabase(admin, db), list);
      const ms = performance.now() - t0;
      samples.push(round(ms, 2));
      log(`${tag}: run ${i + 1}/${opts.baselineRuns}: ${ms.toFixed(0)} ms`);
    } finally {
      await waitForNoSessions(admin, db).catch(() => undefined);
      await sql(admin, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      undo();
    }
  }
  return {
    ...summarize(samples),
    samples,
    server: `embedded PostgreSQL ${env.caps.serverVersion} (${env.label} data dir)`,
  };
}

/** What users do today: `createdb new && pg_dump -Fc src | pg_restore -d new` on their server. */
async function benchDumpRestore(dump, id, entry, list, opts) {
  const tag = `${entry.targetMb} MB dump/restore`;
  const label = String(entry.targetMb).replace(/\./g, '_');
  const src = `consort_bench_${id}_src_${label}`;
  const admin = dump.url;
  const dropSrc = onCleanup(`drop ${src}`, () => sql(admin, `DROP DATABASE IF EXISTS ${src} WITH (FORCE)`));
  try {
    await sql(admin, `CREATE DATABASE ${src}`);
    const tLoad = performance.now();
    await applyMigrations(withDatabase(admin, src), list, (m) =>
      log(`${tag}: source ${src}: ${m.name}${m.rows ? ` (${m.rows.toLocaleString('en-US')} rows)` : ''}`),
    );
    await sql(withDatabase(admin, src), 'VACUUM (ANALYZE)');
    await sql(admin, 'CHECKPOINT');
    entry.load.dumpRestore = { totalMs: round(performance.now() - tLoad) };
    const [{ bytes }] = await sql(admin, 'SELECT pg_database_size($1)::bigint AS bytes', [src]);
    entry.parentBytes.pg15 = Number(bytes);
    log(`${tag}: source is ${(Number(bytes) / 1024 / 1024).toFixed(1)} MB`);

    const samples = [];
    let dumpBytes = null;
    for (let i = 0; i < opts.baselineRuns; i++) {
      const dst = `consort_bench_${id}_dst_${i}`;
      const undo = onCleanup(`drop ${dst}`, () => sql(admin, `DROP DATABASE IF EXISTS ${dst} WITH (FORCE)`));
      try {
        const t0 = performance.now();
        await bash('createdb "$2"\npg_dump -Fc -d "$1" | pg_restore -d "$2"', [src, dst], { env: dump.env });
        const ms = performance.now() - t0;
        samples.push(round(ms, 2));
        log(`${tag}: run ${i + 1}/${opts.baselineRuns}: ${ms.toFixed(0)} ms`);
      } finally {
        await sql(admin, `DROP DATABASE IF EXISTS ${dst} WITH (FORCE)`);
        undo();
      }
    }
    // Size of the custom-format archive, for context (not timed).
    dumpBytes = Number((await bash('pg_dump -Fc -d "$1" | wc -c', [src], { env: dump.env })).stdout.trim());
    return { ...summarize(samples), samples, server: dump.info.server, dumpBytes };
  } finally {
    await sql(admin, `DROP DATABASE IF EXISTS ${src} WITH (FORCE)`);
    dropSrc();
  }
}
