/* global fetch */
/**
 * The App's /dashboard at size: one pull request whose head holds a feature with 1,000 turns (and
 * its cycles and events), indexed by the real indexer from an in-memory GitHub, and 10,000 finished
 * checks in the store. A signed-in person (a sealed session cookie; the permission answer cached
 * after the first request) asks for each page; prints the first and the median time, measured around
 * the request on the same machine. Needs a PostgreSQL it may create a database on:
 * CONSORT_BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres). TURNS and CHECKS override the sizes.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import pg from 'pg';
import { createAppDashboard } from '../lib/app/dashboard/host.js';
import { indexPull } from '../lib/app/dashboard/indexer.js';
import { migrateStore, openStore } from '../lib/app/store/db.js';
import { upsertPull } from '../lib/app/store/pulls.js';
import { newSession, signSession } from '../lib/src/dashboard/session.js';
import { bigFeature, checkReport, T0 } from './lib/big-feature.mjs';
import { liveLatency } from './lib/live.js';
import { benchArgs, envInteger } from './lib/args.js';

benchArgs(import.meta.url); // --help; no options (settings come from the environment, see above)

const TURNS = envInteger('TURNS', 1000);
const CHECKS = envInteger('CHECKS', 10000);
const REPEAT = 10;
const ADMIN = process.env.CONSORT_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECRET = randomBytes(24).toString('hex');
const feature = '001-big';
const dir = `.consort/features/${feature}`;

// ---- the head's files, as GitHub would list them ----
const files = new Map();
const big = bigFeature(feature, TURNS);
const { items, turns } = big;
files.set(`${dir}/turns.jsonl`, turns);
files.set(`${dir}/events.jsonl`, big.events);
for (const cycle of big.cycles)
  files.set(`${dir}/cycles/cycle-${String(cycle.cycle).padStart(3, '0')}.json`, JSON.stringify(cycle));
files.set(
  `${dir}/state.json`,
  JSON.stringify({ version: 1, state: big.state, baseCommit: 'a'.repeat(40), pending: [], done: 0, inFlight: null }),
);
files.set(`${dir}/test-list.json`, JSON.stringify({ version: 1, items }));
for (let i = 0; i < 200; i++) files.set(`src/module-${i}.js`, `export const x${i} = ${i};\n`);
const blobSha = (text) =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(text)}\0`)
    .update(text)
    .digest('hex');
const blobs = new Map([...files.values()].map((t) => [blobSha(t), t]));
let blobCalls = 0;
const records = {
  tree: async () => ({
    truncated: false,
    entries: [...files].map(([p, t]) => ({ path: p, mode: '100644', type: 'blob', sha: blobSha(t) })),
  }),
  blob: async (_repo, sha) => {
    blobCalls++;
    return blobs.get(sha);
  },
  permission: async () => 'write',
};

// ---- the store ----
const name = `consort_bench_dash_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(ADMIN);
url.pathname = `/${name}`;
const storeUrl = url.toString();
let server;
let dashboard;
let store;
try {
  await migrateStore(storeUrl);
  store = openStore(storeUrl);
  const head = {
    repositoryId: 1,
    installationId: 1,
    owner: 'bench',
    repo: 'shop',
    pr: 7,
    headSha: 'f'.repeat(40),
    headRef: 'feature/big',
  };
  await upsertPull(store.pool, {
    ...head,
    number: head.pr,
    baseSha: 'b'.repeat(40),
    baseRef: 'main',
    fork: false,
    state: 'open',
  });
  let t = performance.now();
  await indexPull(store, records, head);
  const indexMs = performance.now() - t;
  const calls = blobCalls;
  t = performance.now();
  files.set(`${dir}/turns.jsonl`, turns + turns.split('\n')[0].replace('turn-0000', `turn-${TURNS}`) + '\n');
  blobs.set(blobSha(files.get(`${dir}/turns.jsonl`)), files.get(`${dir}/turns.jsonl`));
  await indexPull(store, records, head);
  const reindexMs = performance.now() - t;
  await store.pool.query(
    `INSERT INTO consort_app.runs (kind, subject, repository_id, installation_id, owner, repo, pr, head_sha, head_ref, base_sha, base_ref, state, conclusion, started_at, finished_at)
     SELECT 'check', '1:pr:' || (g % 300), 1, 1, 'bench', 'shop', g % 300, lpad(g::text, 40, '0'), 'x', 'b', 'main', 'completed', 'success', now(), now() FROM generate_series(1, $1) g`,
    [CHECKS],
  );
  await store.pool.query(
    `INSERT INTO consort_app.check_history (run_id, repository_id, pr, head_sha, conclusion, started_at, duration_ms, report)
     SELECT r.id, 1, r.pr, r.head_sha, 'success', $2::timestamptz + (r.id * interval '10 minutes'), 30000, $1::jsonb FROM consort_app.runs r`,
    [JSON.stringify(checkReport(1)), new Date(T0).toISOString()],
  );
  await store.pool.query('ANALYZE');

  // ---- the App's HTTP server with the dashboard, and a GitHub that answers the permission question ----
  const github = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(req.url.includes('/permission') ? { permission: 'write', role_name: 'write' } : {}));
  });
  await new Promise((r) => github.listen(0, '127.0.0.1', r));
  const githubUrl = `http://127.0.0.1:${github.address().port}`;
  server = http.createServer((req, res) => {
    if (!dashboard.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const { restClient } = await import('../lib/app/dashboard/rest-client.js');
  dashboard = createAppDashboard({
    store,
    storeUrl,
    settings: { clientId: 'x', clientSecret: 'y', publicUrl: origin, sessionSecret: SECRET },
    github: { apiUrl: githubUrl, webUrl: githubUrl },
    installation: async () => restClient(githubUrl, 'ghs_bench'),
  });
  const cookie = `consort_session=${signSession(newSession('bench', 'gho_bench', Date.now()), SECRET)}`;
  const base = '/dashboard/bench/shop';
  const pages = [
    ['repositories', '/dashboard/'],
    ['features', `${base}/`],
    ['feature (timeline, turns 1-200)', `${base}/features/${feature}`],
    ['feature, last page of turns', `${base}/features/${feature}?page=${Math.ceil(TURNS / 200)}`],
    ['turn detail', `${base}/features/${feature}/turns/turn-0500`],
    ['gates (merge gate)', `${base}/features/${feature}/gates`],
    ['checks (trend of 500, page 1)', `${base}/checks`],
    ['checks, page 100', `${base}/checks?page=100`],
    ['api: feature', `${base}/api/features/${feature}`],
    ['api: checks', `${base}/api/checks`],
  ];
  async function time(path) {
    const t0 = performance.now();
    const res = await fetch(origin + path, { headers: { cookie } });
    await res.text();
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    return performance.now() - t0;
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    `App dashboard bench: ${TURNS} turns in one feature, ${CHECKS} checks; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${os.cpus().length} CPUs`,
  );
  console.log(
    `indexing the head: ${indexMs.toFixed(0)} ms (${calls} blobs fetched); after one more turn: ${reindexMs.toFixed(0)} ms (${blobCalls - calls} blob fetched)`,
  );
  console.log('page'.padEnd(40), 'first ms'.padStart(10), 'median ms'.padStart(10), 'max ms'.padStart(8));
  let worst = 0;
  for (const [label, path] of pages) {
    const first = await time(path);
    const runs = [];
    for (let i = 0; i < REPEAT; i++) runs.push(await time(path));
    worst = Math.max(worst, median(runs));
    console.log(
      label.padEnd(40),
      first.toFixed(0).padStart(10),
      median(runs).toFixed(0).padStart(10),
      Math.max(...runs)
        .toFixed(0)
        .padStart(8),
    );
  }
  console.log(`worst median: ${worst.toFixed(0)} ms (target ≤ 200 ms)`);
  // A push with a new turn while the feature page is open: index the head → NOTIFY → change event → the page's new HTML.
  const lives = [];
  for (let i = 1; i <= 5; i++) {
    lives.push(
      await liveLatency({
        eventsUrl: `${origin}${base}/events`,
        pageUrl: `${origin}${base}/features/${feature}`,
        headers: { cookie },
        change: async () => {
          const text =
            files.get(`${dir}/turns.jsonl`) + turns.split('\n')[0].replace('turn-0000', `turn-${TURNS + i}`) + '\n';
          files.set(`${dir}/turns.jsonl`, text);
          blobs.set(blobSha(text), text);
          await indexPull(store, records, head);
        },
      }),
    );
  }
  console.log(
    `live update, median of 5: push indexed → event ${median(lives.map((l) => l.eventMs)).toFixed(0)} ms, → refreshed page ${median(lives.map((l) => l.pageMs)).toFixed(0)} ms (target ≤ 1000 ms)`,
  );
  github.close();
} finally {
  await dashboard?.close();
  server?.close();
  await store?.close();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
