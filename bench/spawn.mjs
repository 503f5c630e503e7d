#!/usr/bin/env node
/**
 * npm run bench:spawn — what starting a short program (`git --version`) costs the process that
 * starts it, through the ProcessRunner, with the launcher (src/process/launcher.ts, the default) and
 * without it (CONSORT_LAUNCHER=off: fork() in this process; `on` forces the launcher at any size), while this process holds 0, 150 and
 * 300 MB of touched memory, as a conductor or a jest worker does. fork() copies the caller's page
 * tables; where that is costly (virtual machines), the launcher's small process pays it instead.
 * Runs alternate between the two ways; medians of `--runs` starts each. Writes bench/results/spawn.json.
 *
 *   --runs N   starts per way and size (default 40)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { localProcessRunner } from '../lib/src/process/runner.js';
import { benchArgs } from './lib/args.js';

const { runs } = benchArgs(import.meta.url, { runs: { type: 'integer', default: 40 } });
const here = path.dirname(fileURLToPath(import.meta.url));

const start = () =>
  localProcessRunner.run({
    command: ['git', '--version'],
    cwd: '/',
    env: { PATH: process.env.PATH ?? '' },
    maxOutputBytes: 4096,
    captureStdout: true,
  });
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function timed(way) {
  process.env.CONSORT_LAUNCHER = way === 'fork here' ? 'off' : 'on';
  const t = performance.now();
  const r = await start();
  if (!String(r.stdout).startsWith('git version')) throw new Error(`git did not run: ${r.output}`);
  return performance.now() - t;
}

const held = [];
const results = [];
await timed('launcher'); // the launcher itself starts once
for (const mb of [0, 150, 300]) {
  while (held.length < mb) held.push(Buffer.alloc(1 << 20, 1));
  const times = { launcher: [], 'fork here': [] };
  for (let i = 0; i < runs; i++) for (const way of Object.keys(times)) times[way].push(await timed(way));
  const rss = Math.round(process.memoryUsage().rss / 2 ** 20);
  const row = {
    heldMb: mb,
    rssMb: rss,
    launcherMs: +median(times.launcher).toFixed(2),
    forkHereMs: +median(times['fork here']).toFixed(2),
  };
  results.push(row);
  console.log(
    `RSS ${String(rss).padStart(4)} MB: launcher ${row.launcherMs.toFixed(2)} ms, fork here ${row.forkHereMs.toFixed(2)} ms (median of ${runs})`,
  );
}
delete process.env.CONSORT_LAUNCHER;
mkdirSync(path.join(here, 'results'), { recursive: true });
writeFileSync(
  path.join(here, 'results', 'spawn.json'),
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, kernel: os.release(), runs, results }, null, 2)}\n`,
);
