#!/usr/bin/env node
/**
 * npm run bench:check — the PR lane's own overhead on the example shop grown to 50 migrations.
 *
 * Overhead = a warm check's total time minus the project's suite time (the baseline already
 * exists, as it does for every push after the first on a base). Compared with the naive approach
 * CI setups use today: a fresh database, every migration from scratch, the seed, then the suite.
 * Prints a table and writes bench/results/check.json.
 *
 *   --runs N        warm checks to time (default 7)
 *   --data-dir DIR  where the embedded server lives (default: a temp dir; an XFS mount gives clone mode)
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../lib/config/load.js';
import { createLocalProvider } from '../lib/branches/local/provider.js';
import { EmbeddedServer } from '../lib/branches/local/server.js';
import { scenarioRepo } from '../lib/demo/scenarios.js';
import { resolveSides } from '../lib/cli/commands/check.js';
import { runCheck } from '../lib/lanes/check/run.js';
import { applyMigrations } from '../lib/migrations/runner.js';
import { withClient, withDatabase, quoteIdent } from '../lib/db/sql.js';
import { childEnv } from '../lib/core/child-env.js';
import { localProcessRunner } from '../lib/process/runner.js';
import { branchEnv } from '../lib/suite/pg-env.js';
import { readFile } from 'node:fs/promises';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' }, 'data-dir': { type: 'string' } } });
const runs = Number(values.runs);
const log = (m) => process.stderr.write(`${m}\n`);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const p95 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)];
};

/** 46 more migrations on top of the shop's 4: tables, indexes, columns and a view, each reversible. */
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

const dataDir = values['data-dir'] ?? (await mkdtemp(path.join(os.tmpdir(), 'consort-bench-check-')));
await mkdir(dataDir, { recursive: true });
await chmod(dataDir, 0o755);
const ownsDataDir = !values['data-dir'];
const repo = await scenarioRepo('clean', { baseFiles: syntheticMigrations() });
const { provider, server } = await createLocalProvider({ dataDir, log });
try {
  const caps = await provider.capabilities();
  const { config, source } = await loadConfig(repo.dir);
  const { base, head } = await resolveSides(repo.dir, config, { base: 'main' }, () => undefined);
  log(
    `${head.migrations.length} migrations (${head.migrations.length - base.migrations.length} new in the change); provider local, mode ${caps.mode}`,
  );
  const input = {
    workspace: repo.dir,
    config,
    configSource: source,
    base,
    head,
    pr: 1,
    provider,
    env: process.env,
    toolVersion: 'bench',
  };

  log('cold check (builds the baseline)…');
  const cold = await runCheck(input);
  if (cold.conclusion !== 'success')
    throw new Error(`the check failed: ${JSON.stringify(cold.stages, null, 1).slice(0, 2000)}`);
  const warm = [];
  for (let i = 0; i < runs; i++) {
    const r = await runCheck(input);
    if (r.conclusion !== 'success') throw new Error('a warm check failed');
    const suite = r.stages.suite.durationMs;
    warm.push({
      total: r.durationMs,
      suite,
      overhead: r.durationMs - suite,
      stages: Object.fromEntries(Object.entries(r.stages).map(([k, v]) => [k, v.durationMs])),
    });
    log(`  warm ${i + 1}/${runs}: total ${r.durationMs} ms, suite ${suite} ms, overhead ${r.durationMs - suite} ms`);
  }

  log('naive: fresh database + all migrations + seed + suite…');
  const naive = [];
  const headDir = path.join(repo.dir, config.migrations.dir);
  for (let i = 0; i < Math.max(3, Math.ceil(runs / 2)); i++) {
    const db = `naive_${i}_${Date.now()}`;
    const t0 = performance.now();
    await withClient(server.url, (c) => c.query(`CREATE DATABASE ${quoteIdent(db)}`));
    const url = withDatabase(server.url, db);
    const applied = await applyMigrations({
      databaseUrl: url,
      dir: headDir,
      relativeTo: repo.dir,
      direction: 'up',
      migrationsTable: config.migrations.table,
    });
    if (!applied.ok) throw new Error(`naive migrations failed: ${applied.failed.error.message}`);
    await withClient(url, async (c) => c.query(await readFile(path.join(repo.dir, 'seed.sql'), 'utf8')));
    const t1 = performance.now();
    const suite = await localProcessRunner.run({
      command: config.suite.command,
      cwd: repo.dir,
      env: childEnv(branchEnv(url, [config.suite.env]), { pass: Object.keys(process.env) }),
      timeoutMs: 300_000,
      maxOutputBytes: 1 << 20,
    });
    if (suite.exitCode !== 0) throw new Error(`naive suite failed: ${suite.output.slice(-1000)}`);
    const total = performance.now() - t0;
    naive.push({ total: Math.round(total), suite: Math.round(suite.durationMs), overhead: Math.round(t1 - t0) });
    await withClient(server.url, (c) => c.query(`DROP DATABASE ${quoteIdent(db)} WITH (FORCE)`));
    log(`  naive ${i + 1}: total ${Math.round(total)} ms, setup ${Math.round(t1 - t0)} ms`);
  }

  const row = (label, xs) => [
    label,
    median(xs.map((x) => x.total)),
    median(xs.map((x) => x.suite)),
    median(xs.map((x) => x.overhead)),
    p95(xs.map((x) => x.overhead)),
    xs.length,
  ];
  const rows = [row('consort check (warm)', warm), row('naive: fresh db + 50 migrations + seed + suite', naive)];
  const stageMedians = Object.fromEntries(
    Object.keys(warm[0].stages).map((k) => [k, median(warm.map((w) => w.stages[k]))]),
  );
  const widths = [48, 10, 10, 10, 14, 6];
  const fmt = (cells) =>
    cells
      .map((c, i) =>
        String(c)
          .padStart(i === 0 ? 0 : widths[i])
          .padEnd(i === 0 ? widths[0] : 0),
      )
      .join('');
  console.log(
    `\nPR lane overhead on the example shop with ${head.migrations.length} migrations (local provider, ${caps.mode} mode, median ms)\n`,
  );
  console.log(fmt(['', 'total', 'suite', 'overhead', 'overhead p95', 'runs']));
  for (const r of rows) console.log(fmt(r));
  console.log(
    `\nwarm check stage medians (ms): ${Object.entries(stageMedians)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  console.log(
    `cold check (baseline built): ${cold.durationMs} ms total, baseline ${cold.stages.baseline.durationMs} ms`,
  );
  const overhead = median(warm.map((w) => w.overhead));
  console.log(`target: overhead <= 1500 ms median: ${overhead <= 1500 ? 'PASS' : 'FAIL'} (${overhead} ms)`);
  const out = path.resolve('bench/results/check.json');
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(
    out,
    `${JSON.stringify({ migrations: head.migrations.length, mode: caps.mode, cold: { total: cold.durationMs, baseline: cold.stages.baseline.durationMs }, warm, naive, stageMedians, overheadMedian: overhead, target: 1500 }, null, 2)}\n`,
  );
  console.log(`wrote ${out}`);
} finally {
  await provider.close();
  await repo.dispose();
  if (ownsDataDir) {
    await new EmbeddedServer(dataDir).stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
