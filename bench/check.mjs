#!/usr/bin/env node
/**
 * npm run bench:check — the PR lane's own work against the naive setup, side by side in one run, on
 * three histories:
 *
 * - `shop-51`: the example shop grown to 51 migrations (all SQL; the change adds one);
 * - `billing-ts-7x`: test/fixtures/histories/billing-ts-7x, a TypeScript history deployed with the
 *   project's node-pg-migrate 7.9.1 and tsx (base holds two migrations, the change adds two, one of
 *   them `noTransaction` and declared irreversible), so every migration runs in a child process;
 * - `saas-ts-7x`: test/fixtures/histories/saas-ts-7x, the same setup with a history the size of a real
 *   project's after a couple of years (31 TypeScript migrations: base holds 28, among them a declared
 *   irreversible enum label and two concurrent indexes; the change adds 3, a feature-flag table pair,
 *   a column and a concurrent partial index).
 *
 * Lane work = a warm check's total time (the baseline already exists, as for every push after the
 * first on a base) with the project's suite replaced by a no-op: plan, baseline reuse, the PR branch,
 * apply, lint, reversibility and schema diff — the work that would otherwise overlap the suite and
 * compete with it for the CPU. Naive = what CI setups do without Consort: a fresh database, every
 * migration from scratch (through the same node-pg-migrate the check uses), the seed. Neither counts
 * the suite, which both then run once. Each warm check is followed by a naive setup, so a pair shares
 * the load of the moment (on a shared box it drifts within a minute). Two naive setups are timed:
 * through Consort's own migration child (the engine's API, as the check applies), and as a project's
 * CI script does it — node-pg-migrate's own CLI (`node-pg-migrate up`, with `--tsx
 * --migration-file-language ts` for a TypeScript history, as billing-ts-7x's `migrate` script says);
 * for a TypeScript history that CLI twice: as on a developer's machine (tsx's on-disk transform cache
 * holds every file from the run before) and as a CI job on a fresh runner (`TSX_DISABLE_CACHE=1`).
 * Prints a table (with the median of the pairs' ratios against each) and writes
 * bench/results/check.json.
 *
 *   --runs N          warm checks (each followed by a naive setup) to time per history (default 7)
 *   --history LIST    comma-separated: shop-51, billing-ts-7x, saas-ts-7x (default all)
 *   --data-dir DIR    where the embedded server lives (default: a temp dir; an XFS mount gives clone mode)
 *   --verbose         print each check's stage log
 */
import { chmod, cp, mkdir, mkdtemp, readFile, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../lib/src/config/load.js';
import { createLocalProvider } from '../lib/src/branches/local/provider.js';
import { EmbeddedServer } from '../lib/src/branches/local/server.js';
import { scenarioRepo, PACKAGE_ROOT } from '../lib/src/demo/scenarios.js';
import { resolveSides } from '../lib/src/cli/commands/check.js';
import { check } from '../lib/src/lanes/check/run.js';
import { localAdapters } from '../lib/src/runtime/local-adapters.js';
import { lineLog } from '../lib/src/runtime/log.js';
import { applyMigrations } from '../lib/src/migrations/runner.js';
import { resolveEngine } from '../lib/src/migrations/engine.js';
import { prepareTypeScript } from '../lib/src/migrations/ts-loader.js';
import { readMigrationSet } from '../lib/src/migrations/files.js';
import { withClient, withDatabase, quoteIdent } from '../lib/src/db/sql.js';
import { benchArgs } from './lib/args.js';

const values = benchArgs(import.meta.url, {
  runs: { type: 'integer', default: 7 },
  history: { type: 'string', default: 'shop-51,billing-ts-7x,saas-ts-7x' },
  'data-dir': { type: 'string' },
  verbose: { type: 'boolean', default: false },
});
const runs = values.runs;
const log = (m) => process.stderr.write(`${m}\n`);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : Math.round((s[m - 1] + s[m]) / 2);
};
const p95 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)];
};
const exec = promisify(execFile);

/** 47 more migrations on top of the shop's 4: tables, indexes, columns and a view, each reversible. */
function syntheticMigrations() {
  const files = [];
  for (let i = 1; i <= 46; i++) {
    const ts = 1730000300000 + i * 1000;
    const up =
      i % 3 === 0
        ? `ALTER TABLE customers ADD COLUMN IF NOT EXISTS attr_${i} text;`
        : i % 3 === 1
          ? `CREATE TABLE IF NOT EXISTS audit_${i} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, customer_id bigint REFERENCES customers (id), note text NOT NULL DEFAULT '', at timestamptz NOT NULL DEFAULT now());\nCREATE INDEX IF NOT EXISTS audit_${i}_customer ON audit_${i} (customer_id);`
          : `CREATE OR REPLACE VIEW recent_orders_${i} AS SELECT id, customer_id, placed_at FROM orders WHERE placed_at > now() - interval '${i} days';`;
    const down =
      i % 3 === 0
        ? `ALTER TABLE customers DROP COLUMN IF EXISTS attr_${i};`
        : i % 3 === 1
          ? `DROP TABLE IF EXISTS audit_${i};`
          : `DROP VIEW IF EXISTS recent_orders_${i};`;
    files.push({
      file: `migrations/${ts}_synthetic_${String(i).padStart(2, '0')}.sql`,
      content: `-- Up Migration\nSET LOCAL lock_timeout = '1s';\n${up}\n\n-- Down Migration\n${down}\n`,
    });
  }
  return files;
}

const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: os.tmpdir(),
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@consort.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@consort.invalid',
};
const git = (cwd, ...args) =>
  exec('git', ['-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args], { cwd, env: GIT_ENV });

/** A fixture history as a git repository (as test/lanes/check-histories.test.ts makes it). */
async function historyRepo(name, baseCount, links) {
  const root = await mkdtemp(path.join(os.tmpdir(), `consort-bench-${name}-`));
  await cp(path.join(PACKAGE_ROOT, 'test/fixtures/histories', name), root, { recursive: true });
  await writeFile(path.join(root, '.gitignore'), 'node_modules/\n');
  await mkdir(path.join(root, 'node_modules'));
  for (const [as, pkg] of Object.entries(links))
    await symlink(path.join(PACKAGE_ROOT, 'node_modules', pkg), path.join(root, 'node_modules', as), 'dir');
  const later = (await readdir(path.join(root, 'migrations'))).sort().slice(baseCount);
  const aside = path.join(root, '.later');
  await mkdir(aside);
  for (const f of later) await rename(path.join(root, 'migrations', f), path.join(aside, f));
  await git(root, 'init', '-q');
  await git(root, 'add', '-A');
  await git(root, 'commit', '-qm', 'base');
  await git(root, 'checkout', '-qb', 'feature');
  for (const f of later) await rename(path.join(aside, f), path.join(root, 'migrations', f));
  await rm(aside, { recursive: true });
  await git(root, 'add', '-A');
  await git(root, 'commit', '-qm', 'the pull request');
  return { dir: root, dispose: () => rm(root, { recursive: true, force: true }) };
}

const HISTORIES = {
  'shop-51': {
    about: 'example shop, 51 SQL migrations (1 new)',
    make: async () => {
      const r = await scenarioRepo('clean', { baseFiles: syntheticMigrations() });
      return { dir: r.dir, dispose: r.dispose };
    },
  },
  'billing-ts-7x': {
    about: 'billing-ts-7x: 4 TypeScript migrations (2 new), node-pg-migrate 7.9.1 + tsx',
    make: () => historyRepo('billing-ts-7x', 2, { 'node-pg-migrate': 'node-pg-migrate-7', tsx: 'tsx' }),
  },
  'saas-ts-7x': {
    about: 'saas-ts-7x: 31 TypeScript migrations (3 new), node-pg-migrate 7.9.1 + tsx',
    make: () => historyRepo('saas-ts-7x', 28, { 'node-pg-migrate': 'node-pg-migrate-7', tsx: 'tsx' }),
  },
};

async function benchHistory(key, provider, server) {
  const h = await HISTORIES[key].make();
  try {
    const { config: loaded, source } = await loadConfig(h.dir);
    // The suite is the project's own time, the same with or without Consort: a no-op here.
    const config = { ...loaded, suite: { ...loaded.suite, command: 'true', reports: [] } };
    const { base, head } = await resolveSides(localAdapters.git, h.dir, config, { base: 'main' }, () => undefined);
    log(`${key}: ${head.migrations.length} migrations (${head.migrations.length - base.migrations.length} new)`);
    const lines = [];
    // --verbose: every provider call the check makes, timed.
    const t0 = performance.now();
    const traced = values.verbose
      ? new Proxy(provider, {
          get(target, prop) {
            const v = Reflect.get(target, prop, target);
            if (typeof v !== 'function') return v;
            if (prop === 'holdBackground') return v.bind(target); // not a provider call: returns its release
            return async (...args) => {
              const t = performance.now();
              try {
                return await v.apply(target, args);
              } finally {
                const what = typeof args[0] === 'string' ? args[0] : (args[0]?.name ?? '');
                log(`    @${Math.round(t - t0)} ${String(prop)}(${what}) ${Math.round(performance.now() - t)} ms`);
              }
            };
          },
        })
      : provider;
    // --verbose: the catalog reads and every migration request (one child's, in turn) too.
    const timed =
      (what, fn) =>
      async (...args) => {
        const t = performance.now();
        try {
          return await fn(...args);
        } finally {
          const db = typeof args[0] === 'string' ? new URL(args[0]).pathname.slice(1) : (args[0]?.databaseUrl ?? '');
          const at = typeof db === 'string' && db.includes('/') ? new URL(db).pathname.slice(1) : db;
          const dir = args[0]?.direction ? ` ${args[0].direction}${args[0].count ? ` ×${args[0].count}` : ''}` : '';
          log(`    @${Math.round(t - t0)} ${what}(${at}${dir}) ${Math.round(performance.now() - t)} ms`);
        }
      };
    const adapters = values.verbose
      ? {
          ...localAdapters,
          schemas: {
            snapshot: timed('snapshot', localAdapters.schemas.snapshot),
            relations: timed('relations', localAdapters.schemas.relations),
            open: () => {
              const session = localAdapters.schemas.open();
              return {
                snapshot: timed('snapshot', session.snapshot),
                relations: timed('relations', session.relations),
                release: session.release,
              };
            },
          },
          migrations: {
            ...localAdapters.migrations,
            open: () => {
              const session = localAdapters.migrations.open();
              return {
                ...session,
                apply: timed('apply', session.apply.bind(session)),
                warm: session.warm.bind(session),
                release: session.release.bind(session),
                close: session.close.bind(session),
              };
            },
          },
        }
      : localAdapters;
    const input = {
      ...adapters,
      workspace: h.dir,
      config,
      configSource: source,
      base,
      head,
      pr: 1,
      provider: traced,
      env: process.env,
      toolVersion: 'bench',
      log: lineLog((l) => (values.verbose ? log(`    ${l}`) : lines.push(l))),
    };
    log('  cold check (builds the baseline)…');
    const cold = await check(input);
    if (cold.conclusion === 'error' || cold.stages.migrations.status !== 'passed')
      throw new Error(`the check did not run: ${JSON.stringify(cold.error ?? cold.stages, null, 1).slice(0, 2000)}`);
    // Background pool refills, if any, are not the next check's time.
    await provider.settled?.();
    // Naive: a fresh database and every migration, with the engine (and TypeScript loader) the check used.
    const dir = path.join(h.dir, config.migrations.dir);
    const engine = await resolveEngine(h.dir, { env: process.env, log: () => undefined });
    const files = (await readMigrationSet(dir, { relativeTo: h.dir })).map((m) => m.file);
    const ts = await prepareTypeScript(engine, h.dir, files, { env: process.env, log: () => undefined });
    const naive = [];
    // Each timed item starts from a clean checkpoint: what the one before left to write (the
    // pool's refills are copies) is flushed first, not during the next item's commits.
    const quiesce = () => withClient(server.url, (c) => c.query('CHECKPOINT'));
    let setups = 0;
    /** One naive setup, timed: a fresh database, `migrate(url)`, the seed; then the database is dropped. */
    const timedSetup = async (label, into, i, migrate) => {
      await quiesce();
      const db = `naive_${++setups}_${Date.now()}`;
      const t0 = performance.now();
      await withClient(server.url, (c) => c.query(`CREATE DATABASE ${quoteIdent(db)}`));
      const url = withDatabase(server.url, db);
      await migrate(url);
      const seed = config.database.seed;
      if (seed?.kind === 'file')
        await withClient(url, async (c) => c.query(await readFile(path.join(h.dir, seed.path), 'utf8')));
      const total = Math.round(performance.now() - t0);
      into.push({ total });
      await withClient(server.url, (c) => c.query(`DROP DATABASE ${quoteIdent(db)} WITH (FORCE)`));
      log(`  ${label} ${i + 1}/${runs}: ${total} ms`);
    };
    const naiveSetup = (i) =>
      timedSetup('naive', naive, i, async (url) => {
        const applied = await applyMigrations({
          databaseUrl: url,
          dir,
          relativeTo: h.dir,
          direction: 'up',
          migrationsTable: config.migrations.table,
          engine: ts.engine,
        });
        if (!applied.ok) throw new Error(`naive migrations failed: ${applied.failed.error.message}`);
      });
    // Naive as a project's CI runs it: node-pg-migrate's own CLI, from the engine the check resolved.
    const cliBin = path.join(engine.dir, 'bin', 'node-pg-migrate.js');
    const cliArgs = [
      cliBin,
      'up',
      '--migrations-dir',
      config.migrations.dir,
      '--migrations-table',
      config.migrations.table,
      ...(ts.engine.tsLoader ? ['--tsx', '--migration-file-language', 'ts'] : []),
    ];
    const naiveCli = [];
    const cliEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir() };
    const naiveCliSetup = (i) =>
      timedSetup('naive (node-pg-migrate CLI)', naiveCli, i, (url) =>
        exec(process.execPath, cliArgs, { cwd: h.dir, env: { ...cliEnv, DATABASE_URL: url } }),
      );
    // The same CLI as a CI job on a fresh runner runs it: tsx's on-disk transform cache empty (every
    // run here would otherwise find the files it compiled the run before, as a developer's machine does).
    const coldCache = ts.engine.tsLoader?.name === 'tsx';
    const naiveCliCold = [];
    const naiveCliColdSetup = (i) =>
      timedSetup('naive (node-pg-migrate CLI, cold tsx cache)', naiveCliCold, i, (url) =>
        exec(process.execPath, cliArgs, { cwd: h.dir, env: { ...cliEnv, DATABASE_URL: url, TSX_DISABLE_CACHE: '1' } }),
      );
    // Each warm check is followed by a naive setup, so the two share the box's load of the moment
    // (on a shared machine it drifts within a minute); the ratio of each pair is reported too.
    const warm = [];
    try {
      for (let i = 0; i < runs; i++) {
        await quiesce();
        const w0 = performance.now();
        const r = await check(input);
        const wall = Math.round(performance.now() - w0);
        if (r.conclusion !== cold.conclusion) {
          const why = Object.entries(r.stages)
            .filter(([, st]) => st.status !== 'passed')
            .map(([k, st]) => `  ${k}: ${st.status}: ${st.summary}`);
          throw new Error(
            `a warm check concluded ${r.conclusion}${r.error ? ` (${r.error.message})` : ''}\n${why.join('\n')}`,
          );
        }
        warm.push({
          total: r.durationMs,
          wall,
          stages: Object.fromEntries(Object.entries(r.stages).map(([k, v]) => [k, v.durationMs])),
        });
        log(`  warm ${i + 1}/${runs}: ${r.durationMs} ms (${wall} ms with the temporary branches' removal)`);
        await provider.settled?.();
        await naiveSetup(i);
        await naiveCliSetup(i);
        if (coldCache) await naiveCliColdSetup(i);
      }
    } finally {
      ts.dispose();
    }

    const stageMedians = Object.fromEntries(
      Object.keys(warm[0].stages).map((k) => [k, median(warm.map((w) => w.stages[k]))]),
    );
    return {
      key,
      about: HISTORIES[key].about,
      migrations: head.migrations.length,
      newMigrations: head.migrations.length - base.migrations.length,
      conclusion: cold.conclusion,
      cold: { total: cold.durationMs, baseline: cold.stages.baseline.durationMs },
      warm,
      naive,
      stageMedians,
      laneMedian: median(warm.map((w) => w.total)),
      laneP95: p95(warm.map((w) => w.total)),
      wallMedian: median(warm.map((w) => w.wall)),
      wallP95: p95(warm.map((w) => w.wall)),
      naiveMedian: median(naive.map((n) => n.total)),
      pairRatioMedian: median(warm.map((w, i) => w.total / naive[i].total)),
      naiveP95: p95(naive.map((n) => n.total)),
      naiveCli,
      naiveCliMedian: median(naiveCli.map((n) => n.total)),
      naiveCliP95: p95(naiveCli.map((n) => n.total)),
      cliPairRatioMedian: median(warm.map((w, i) => w.total / naiveCli[i].total)),
      ...(coldCache
        ? {
            naiveCliCold,
            naiveCliColdMedian: median(naiveCliCold.map((n) => n.total)),
            naiveCliColdP95: p95(naiveCliCold.map((n) => n.total)),
            cliColdPairRatioMedian: median(warm.map((w, i) => w.total / naiveCliCold[i].total)),
          }
        : {}),
    };
  } finally {
    await h.dispose();
  }
}

const dataDir = values['data-dir'] ?? (await mkdtemp(path.join(os.tmpdir(), 'consort-bench-check-')));
await mkdir(dataDir, { recursive: true });
await chmod(dataDir, 0o755);
const ownsDataDir = !values['data-dir'];
const { provider, server } = await createLocalProvider({ dataDir, log });
try {
  const caps = await provider.capabilities();
  const results = [];
  for (const key of values.history.split(',').map((s) => s.trim())) {
    if (!HISTORIES[key]) throw new Error(`unknown history ${key} (known: ${Object.keys(HISTORIES).join(', ')})`);
    results.push(await benchHistory(key, provider, server));
  }
  const load = os.loadavg().map((l) => l.toFixed(1));
  console.log(
    `\nPR lane's own work vs the naive setup (local provider, ${caps.mode} mode, ${runs} runs each, median / p95 ms, load ${load.join(' ')})\n`,
  );
  const widths = [76, 16, 20, 16, 8, 12, 16, 12, 22, 12];
  const fmt = (cells) =>
    cells
      .map((c, i) =>
        String(c)
          .padStart(i === 0 ? 0 : widths[i])
          .padEnd(i === 0 ? widths[0] : 0),
      )
      .join('');
  console.log(
    fmt([
      'history',
      'consort check',
      'with its cleanup',
      'naive setup',
      'ratio',
      'pair ratio',
      'naive via CLI',
      'pair ratio',
      'CLI, cold tsx cache',
      'pair ratio',
    ]),
  );
  for (const r of results)
    console.log(
      fmt([
        r.about,
        `${r.laneMedian} / ${r.laneP95}`,
        `${r.wallMedian} / ${r.wallP95}`,
        `${r.naiveMedian} / ${r.naiveP95}`,
        (r.laneMedian / r.naiveMedian).toFixed(2),
        r.pairRatioMedian.toFixed(2),
        `${r.naiveCliMedian} / ${r.naiveCliP95}`,
        r.cliPairRatioMedian.toFixed(2),
        r.naiveCliColdMedian === undefined ? '—' : `${r.naiveCliColdMedian} / ${r.naiveCliColdP95}`,
        r.cliColdPairRatioMedian === undefined ? '—' : r.cliColdPairRatioMedian.toFixed(2),
      ]),
    );
  for (const r of results) {
    console.log(
      `\n${r.key}: warm check stage medians (ms): ${Object.entries(r.stageMedians)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}; cold check ${r.cold.total} ms (baseline ${r.cold.baseline} ms); conclusion ${r.conclusion}`,
    );
    console.log(
      `  target: check <= naive setup: through Consort's child ${r.laneMedian <= r.naiveMedian ? 'PASS' : 'FAIL'}, through node-pg-migrate's CLI ${r.laneMedian <= r.naiveCliMedian ? 'PASS' : 'FAIL'}${r.naiveCliColdMedian === undefined ? '' : `, through the CLI with a cold tsx cache (a fresh CI job) ${r.laneMedian <= r.naiveCliColdMedian ? 'PASS' : 'FAIL'}`}`,
    );
  }
  const out = path.resolve('bench/results/check.json');
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify({ mode: caps.mode, runs, load: os.loadavg(), results }, null, 2)}\n`);
  console.log(`\nwrote ${out}`);
} finally {
  await provider.close();
  if (ownsDataDir) {
    await new EmbeddedServer(dataDir).stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
