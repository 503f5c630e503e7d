/* global fetch */
/**
 * The dashboard at size: one feature with 1,000 turns (and its cycles and events) and 10,000
 * check reports, served by the local host. Prints each page's time (the first request, which
 * reads and parses everything, and the median of the next ones), measured around the request
 * on the same machine. `npm run bench:dashboard`; TURNS and CHECKS override the sizes.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createFeature } from '../lib/src/lanes/tdd/feature.js';
import { FeatureStore } from '../lib/src/lanes/tdd/store.js';
import { LocalSource } from '../lib/src/dashboard/local-source.js';
import { localWorkspaces } from '../lib/src/git/local-workspace.js';
import { startLocalDashboard } from '../lib/src/dashboard/local-server.js';
import { bigFeature, checkReport } from './lib/big-feature.mjs';
import { liveLatency } from './lib/live.js';
import { benchArgs, envInteger } from './lib/args.js';

benchArgs(import.meta.url); // --help; no options (settings come from the environment, see above)

const TURNS = envInteger('TURNS', 1000);
const CHECKS = envInteger('CHECKS', 10000);
const REPEAT = 10;

const root = mkdtempSync(path.join(os.tmpdir(), 'consort-bench-dashboard-'));
const git = (...args) =>
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: root },
  });
git('init', '-q');
git('commit', '-q', '--allow-empty', '-m', 'init');

const { feature } = await createFeature(await localWorkspaces.open(root), 'big');
const store = new FeatureStore(root, feature);
const big = bigFeature(feature, TURNS);
appendFileSync(store.file('turns.jsonl'), big.turns);
appendFileSync(store.file('events.jsonl'), big.events);
for (const cycle of big.cycles) await store.writeCycle(cycle);
const saved = await store.load();
await store.save({ ...saved, state: big.state });

const checks = path.join(root, '.consort/checks');
mkdirSync(checks, { recursive: true });
for (let i = 0; i < CHECKS; i++) {
  writeFileSync(path.join(checks, `${String(i).padStart(6, '0')}.json`), JSON.stringify(checkReport(i)));
}

const source = new LocalSource({ root });
const server = await startLocalDashboard({ source, port: 0, approver: 'bench' });
const pages = [
  ['features', '/'],
  ['feature (timeline, turns 1-200)', `/features/${feature}`],
  ['feature, last page of turns', `/features/${feature}?page=${Math.ceil(TURNS / 200)}`],
  ['turn detail', `/features/${feature}/turns/turn-0500`],
  ['gates (merge gate hashes the code)', `/features/${feature}/gates`],
  ['checks (trend of 500, page 1)', '/checks'],
  ['checks, page 100', '/checks?page=100'],
  ['api: feature', `/api/features/${feature}`],
  ['api: checks', '/api/checks'],
];
// Wall time depends on what else the machine runs; CPU time (this process: server and client) much less.
let lastCpu = 0;
async function time(url) {
  const t = performance.now();
  const cpu = process.cpuUsage();
  const res = await fetch(server.url + url);
  await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  const used = process.cpuUsage(cpu);
  lastCpu = (used.user + used.system) / 1000;
  return performance.now() - t;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `dashboard bench: ${TURNS} turns in one feature, ${CHECKS} check reports; load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on ${os.cpus().length} CPUs`,
);
console.log(
  'page'.padEnd(40),
  'first ms'.padStart(10),
  'median ms'.padStart(10),
  'max ms'.padStart(8),
  'median cpu ms'.padStart(14),
);
let worst = 0;
for (const [name, url] of pages) {
  const first = await time(url);
  const runs = [];
  const cpus = [];
  for (let i = 0; i < REPEAT; i++) {
    runs.push(await time(url));
    cpus.push(lastCpu);
  }
  worst = Math.max(worst, median(runs));
  console.log(
    name.padEnd(40),
    first.toFixed(0).padStart(10),
    median(runs).toFixed(0).padStart(10),
    Math.max(...runs)
      .toFixed(0)
      .padStart(8),
    median(cpus).toFixed(0).padStart(14),
  );
}
// A new turn record while the feature page is open: record → change event → the page's new HTML (target ≤ 1 s).
const lives = [];
for (let i = 0; i < 5; i++) {
  lives.push(
    await liveLatency({
      eventsUrl: `${server.url}/events`,
      pageUrl: `${server.url}/features/${feature}`,
      change: async () =>
        appendFileSync(
          store.file('turns.jsonl'),
          big.turns.split('\n')[0].replace('turn-0000', `turn-${TURNS + i}`) + '\n',
        ),
    }),
  );
}
console.log(
  `live update, median of 5: record → event ${median(lives.map((l) => l.eventMs)).toFixed(0)} ms, → refreshed page ${median(lives.map((l) => l.pageMs)).toFixed(0)} ms (target ≤ 1000 ms)`,
);
console.log(`worst median: ${worst.toFixed(0)} ms (target ≤ 200 ms)`);
source.close();
await server.close();
rmSync(root, { recursive: true, force: true });
