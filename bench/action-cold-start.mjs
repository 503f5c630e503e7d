#!/usr/bin/env node
/**
 * npm run bench:action — the Action's cold start: from spawning `node dist/index.js` (as the
 * runner does) to its first log line, median of 10 runs, next to a bare `node` printing one line
 * (Node's own start-up, which no bundle can remove). Inputs are valid and the runner context is
 * missing, so each run logs its first line and stops right after. Target: under 500 ms.
 *
 *   --runs N   runs to time (default 10)
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs } from './lib/args.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bundle = path.join(root, 'dist', 'index.js');
const { runs } = benchArgs(import.meta.url, { runs: { type: 'integer', default: 10 } });

/** Milliseconds from spawn to the first byte on stdout. */
function firstLine(args, cwd) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let at;
    const child = spawn(process.execPath, args, {
      cwd,
      env: { PATH: process.env.PATH, HOME: os.homedir(), INPUT_MODE: 'check', INPUT_COMMENT: 'sticky' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child.stdout.once('data', () => {
      at = performance.now() - started;
    });
    child.stdout.resume();
    child.on('error', reject);
    child.on('close', () => (at === undefined ? reject(new Error(`${args.join(' ')} printed nothing`)) : resolve(at)));
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const ms = (x) => `${x.toFixed(0)} ms`;

const cwd = await mkdtemp(path.join(os.tmpdir(), 'consort-cold-start-')); // no node_modules around, as on a runner
try {
  await firstLine([bundle], cwd); // warm the OS file cache once, as a runner's second step would find it
  const action = [];
  const bare = [];
  for (let i = 0; i < runs; i++) {
    action.push(await firstLine([bundle], cwd));
    bare.push(await firstLine(['-e', 'console.log(1)'], cwd));
  }
  const size = (await stat(bundle)).size;
  console.log(`dist/index.js: ${(size / 1024).toFixed(0)} KiB`);
  console.log(
    `cold start, process start → first log line: median ${ms(median(action))} over ${runs} runs (min ${ms(Math.min(...action))}, max ${ms(Math.max(...action))})`,
  );
  console.log(`  of which Node's own start-up (bare node printing a line): median ${ms(median(bare))}`);
  console.log(`  target < 500 ms: ${median(action) < 500 ? 'met' : 'MISSED'}`);
} finally {
  await rm(cwd, { recursive: true, force: true });
}
