#!/usr/bin/env node
/**
 * npm run bench:faults — the PR lane under concurrency and kill -9, measured (not a timed test).
 *
 * 1. N concurrent `consort check --pr <n>` processes (distinct pull requests, default 20) on one
 *    embedded server, on the example shop's real history: half the clean change (expected
 *    success), half the bad down migration (expected failure in reversibility). Every verdict is
 *    compared with the expected one; checks/minute is N over the wall time.
 * 2. `kill -9` of a check at five points — PR branch create, apply, reversibility, suite, cleanup —
 *    then a re-run of the same pull request: its verdict must be right and nothing may leak.
 * 3. Leaks, counted on the server: temporary branches (`-rev`, `-suite`), catalog rows in a
 *    transitional state, catalog rows without a database (drift), databases no row knows, and
 *    scratch directories of dead runs.
 *
 * Prints a table and writes bench/results/faults.json.
 *   --prs N          concurrent checks (default 20)
 *   --data-dir DIR   where the embedded server lives (default: a temp dir)
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createLocalProvider } from '../lib/src/branches/local/provider.js';
import { EmbeddedServer } from '../lib/src/branches/local/server.js';
import { scenarioRepo } from '../lib/src/demo/scenarios.js';
import { withDatabase } from '../lib/src/db/sql.js';
import { benchArgs } from './lib/args.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const BIN = path.join(ROOT, 'bin', 'consort.js');
const values = benchArgs(import.meta.url, { prs: { type: 'integer', default: 20 }, 'data-dir': { type: 'string' } });
const prs = values.prs;
const log = (m) => process.stderr.write(`${m}\n`);

const dataDir = values['data-dir'] ?? (await mkdtemp(path.join(os.tmpdir(), 'consort-bench-faults-')));
await mkdir(dataDir, { recursive: true });
await chmod(dataDir, 0o755); // as root, the postgres OS user must reach it
const ownsDataDir = !values['data-dir'];
// A slow migration, so "apply" and "reversibility" last long enough to be killed in the middle.
const slow = {
  file: 'migrations/1730000500000_backfill_customer_notes.sql',
  content:
    '-- Up Migration\nALTER TABLE customers ADD COLUMN notes text;\nSELECT pg_sleep(1.5);\n\n-- Down Migration\nALTER TABLE customers DROP COLUMN notes;\n',
};
const repos = {
  clean: await scenarioRepo('clean'),
  badDown: await scenarioRepo('bad-down'),
  killed: await scenarioRepo('clean', { extraMigrations: [slow] }),
};
const env = { PATH: process.env.PATH, HOME: process.env.HOME, CONSORT_DATA_DIR: dataDir, NO_COLOR: '1' };

async function config(repo, name, suite) {
  const file = path.join(repo.dir, `${name}.consort.yml`);
  await writeFile(
    file,
    [
      'database: { seed: { file: seed.sql } }',
      'migrations: { dir: migrations }',
      `suite: { command: ${JSON.stringify(suite)}, reports: [], timeout: 2m }`,
    ].join('\n'),
  );
  return file;
}
// The suite proves it runs against the migrated branch: the PR's column is there.
const suiteOk = 'test "$(psql "$DATABASE_URL" -Atc "select count(*) > 100 from customers")" = t';
const configs = {
  clean: await config(repos.clean, 'bench', suiteOk),
  badDown: await config(repos.badDown, 'bench', suiteOk),
  killedSlow: await config(repos.killed, 'slow', `echo suite-started; sleep 5; ${suiteOk}`),
  killedFast: await config(repos.killed, 'fast', suiteOk),
};

/** `consort check` in a process of its own; `onLine` may kill it. */
function check(repo, cfg, pr, onStderr) {
  const json = path.join(repo.dir, `report-${pr}.json`);
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [BIN, '-C', repo.dir, 'check', '--base', 'main', '--pr', String(pr), '--config', cfg, '--json', json, '--verbose'],
    {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d.toString();
    onStderr?.(stderr, child);
  });
  return new Promise((resolve) =>
    child.on('close', async (code, signal) => {
      const report = await readFile(json, 'utf8').then(JSON.parse, () => null);
      resolve({ code, signal, report, stderr, ms: performance.now() - t0 });
    }),
  );
}

const verdict = (r) =>
  r.report === null
    ? `no report (exit ${r.code ?? r.signal})`
    : r.report.conclusion === 'failure'
      ? `failure (${Object.entries(r.report.stages)
          .filter(([, s]) => s.status === 'failed' && s.blocking)
          .map(([k]) => k)
          .join(', ')})`
      : r.report.conclusion;

const server = new EmbeddedServer(dataDir, log);
const { provider } = await createLocalProvider({ dataDir, log });
const result = { prs, concurrent: null, kills: [], leaks: null };
try {
  const caps = await provider.capabilities();
  log(
    `local provider, PostgreSQL ${caps.serverVersion}, mode ${caps.mode} (${caps.modeReason}); ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`,
  );
  // Baselines first (as after the first push on a base): the figure is the check, not the one-off build.
  for (const [name, repo] of Object.entries(repos)) {
    const r = await check(
      repo,
      name === 'killed' ? configs.killedFast : configs[name],
      900 + Object.keys(repos).indexOf(name),
    );
    log(`  warm-up ${name}: ${verdict(r)} in ${(r.ms / 1000).toFixed(1)} s`);
  }

  log(`${prs} concurrent checks…`);
  const t0 = performance.now();
  const runs = await Promise.all(
    Array.from({ length: prs }, (_, i) => {
      const bad = i % 2 === 1;
      return check(bad ? repos.badDown : repos.clean, bad ? configs.badDown : configs.clean, i + 1).then((r) => ({
        pr: i + 1,
        expected: bad ? 'failure (reversibility)' : 'success',
        got: verdict(r),
        ms: r.ms,
        ...(r.report?.error
          ? {
              error: r.report.error,
              stages: Object.fromEntries(
                Object.entries(r.report.stages).map(([k, v]) => [k, `${v.status}: ${v.summary}`]),
              ),
            }
          : {}),
      }));
    }),
  );
  const wallMs = performance.now() - t0;
  const correct = runs.filter((r) => r.expected === r.got).length;
  result.concurrent = {
    wallMs: Math.round(wallMs),
    correct,
    checksPerMinute: Number(((prs / wallMs) * 60_000).toFixed(1)),
    medianMs: Math.round(runs.map((r) => r.ms).sort((a, b) => a - b)[Math.floor(prs / 2)]),
    wrong: runs.filter((r) => r.expected !== r.got),
  };
  log(
    `  ${correct}/${prs} correct in ${(wallMs / 1000).toFixed(1)} s: ${result.concurrent.checksPerMinute} checks/minute`,
  );

  // kill -9 at five points, each followed by a re-run of the same pull request.
  const points = [
    { point: 'branch create', at: (s) => /▸ migrations…/.test(s), delayMs: 0 },
    { point: 'apply', at: (s) => /▸ migrations…/.test(s), delayMs: 700 },
    { point: 'reversibility', at: (s) => /▸ reversibility…/.test(s), delayMs: 500 },
    { point: 'suite', at: (s) => s.includes('suite-started'), delayMs: 0 },
    { point: 'cleanup', at: (s) => /Removing temporary branches/.test(s), delayMs: 0 },
  ];
  for (const [i, p] of points.entries()) {
    const pr = 100 + i;
    let killedAt = null;
    const killed = await check(repos.killed, configs.killedSlow, pr, (stderr, child) => {
      if (killedAt !== null || !p.at(stderr)) return;
      killedAt = stderr.trim().split('\n').at(-1);
      setTimeout(() => child.kill('SIGKILL'), p.delayMs);
    });
    const rerun = await check(repos.killed, configs.killedFast, pr);
    const left = (await provider.list()).map((b) => b.name).filter((n) => n.startsWith(`pr-${pr}-`));
    const removed = /Removed (.*): left by an earlier run/.exec(rerun.stderr)?.[1] ?? '';
    const entry = {
      point: p.point,
      killed: killed.signal === 'SIGKILL',
      lastLine: killedAt,
      rerun: verdict(rerun),
      correct: verdict(rerun) === 'success',
      removedByRerun: removed,
      leakedAfterRerun: left,
    };
    result.kills.push(entry);
    log(
      `  kill -9 at ${p.point}: ${entry.killed ? 'killed' : `not killed (${killed.code})`}; re-run ${entry.rerun}; leaked ${left.length}`,
    );
  }

  // Leaks over the whole run.
  const branches = await provider.list();
  const catalog = new pg.Client({ connectionString: withDatabase((await server.start()).url, 'consort_catalog') });
  await catalog.connect();
  let rows;
  let databases;
  try {
    rows = (
      await catalog.query(
        'SELECT name, database, state, pending_database, EXISTS (SELECT 1 FROM pg_database d WHERE d.datname = database) AS present FROM consort.branches',
      )
    ).rows;
    const pooled = await catalog
      .query("SELECT to_regclass('consort.pool_members') IS NOT NULL AS ok")
      .then((r) =>
        r.rows[0].ok
          ? catalog.query('SELECT database FROM consort.pool_members').then((q) => q.rows.map((x) => x.database))
          : [],
      );
    databases = (
      await catalog.query(
        "SELECT datname FROM pg_database WHERE datname NOT IN ('postgres', 'template0', 'template1', 'consort_catalog')",
      )
    ).rows
      .map((r) => r.datname)
      .filter((d) => !rows.some((r) => r.database === d || r.pending_database === d) && !pooled.includes(d));
  } finally {
    await catalog.end();
  }
  const scratch = (await readdir(os.tmpdir()))
    .filter((n) => /^consort-check-\d+-/.test(n))
    .filter((n) => {
      try {
        process.kill(Number(n.split('-')[2]), 0);
        return false;
      } catch {
        return true;
      }
    });
  result.leaks = {
    temporaryBranches: branches.map((b) => b.name).filter((n) => /-(rev|suite)$/.test(n)),
    transitionalRows: rows.filter((r) => r.state !== 'ready').map((r) => `${r.name} (${r.state})`),
    drift: rows.filter((r) => !r.present).map((r) => r.name),
    unknownDatabases: databases,
    deadScratchDirs: scratch,
  };
  const leakCount = Object.values(result.leaks).reduce((n, xs) => n + xs.length, 0);

  const out = [
    '',
    `concurrent checks (distinct PRs, one server): ${result.concurrent.correct}/${prs} correct, wall ${(result.concurrent.wallMs / 1000).toFixed(1)} s, median ${(result.concurrent.medianMs / 1000).toFixed(1)} s per check, ${result.concurrent.checksPerMinute} checks/minute`,
    '',
    'KILL -9 AT       KILLED  RE-RUN     LEAKED  THE RE-RUN REMOVED FIRST',
    ...result.kills.map(
      (k) =>
        `${k.point.padEnd(16)} ${String(k.killed).padEnd(7)} ${k.rerun.padEnd(10)} ${String(k.leakedAfterRerun.length).padEnd(7)} ${k.removedByRerun || '-'}`,
    ),
    '',
    `leaks after everything: ${leakCount}${leakCount ? ` ${JSON.stringify(result.leaks)}` : ' (temporary branches, transitional rows, drift, unknown databases, dead scratch dirs)'}`,
  ];
  console.log(out.join('\n'));
  await mkdir(path.join(ROOT, 'bench', 'results'), { recursive: true });
  await writeFile(
    path.join(ROOT, 'bench', 'results', 'faults.json'),
    `${JSON.stringify({ at: new Date().toISOString(), load: os.loadavg(), mode: caps.mode, ...result }, null, 2)}\n`,
  );
  if (
    result.concurrent.correct !== prs ||
    result.kills.some((k) => !k.correct || k.leakedAfterRerun.length) ||
    leakCount
  )
    process.exitCode = 1;
} finally {
  await provider.close();
  for (const repo of Object.values(repos)) await repo.dispose();
  if (ownsDataDir) {
    await server.stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}
