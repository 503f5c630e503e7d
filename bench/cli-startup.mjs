#!/usr/bin/env node
/**
 * npm run bench:cli — how long `consort` takes to answer commands that do no I/O, next to bare
 * `node` on the same machine at the same moment. Each command loads only commander and a few
 * small modules; everything else is imported inside the command's action (src/cli/main.ts).
 * Target: every command here within 150 ms of bare node (median).
 *
 * Runs are interleaved (node, --version, --help, … then again) so load on a shared machine hits
 * every command alike; CPU time (user + system, from GNU time when installed) is shown too, as it
 * varies less with load than wall-clock time. Prints a table; --json prints the figures; exit 1
 * when a command misses the target in wall-clock time.
 *
 *   --runs N     rounds (default 15)
 *   --bin FILE   another build's bin/consort.js to time instead (e.g. an older commit, for comparison)
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs } from './lib/args.js';

const values = benchArgs(import.meta.url, {
  runs: { type: 'integer', default: 15 },
  json: { type: 'boolean', default: false },
  bin: { type: 'string' },
});
const runs = values.runs;
const bin = values.bin
  ? path.resolve(values.bin)
  : path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'consort.js');
const TARGET_MS = 150;

const cases = [
  { name: 'node -e 0 (bare node)', args: ['-e', '0'] },
  { name: 'consort --version', args: [bin, '--version'] },
  { name: 'consort --help', args: [bin, '--help'] },
  { name: 'consort check --help', args: [bin, 'check', '--help'] },
  { name: 'consort branch url --help', args: [bin, 'branch', 'url', '--help'] },
  { name: 'consort run --until nope (usage error)', args: [bin, 'run', '--until', 'nope'], exit: 2 },
];

// Only what a shell would pass: no inherited NODE_OPTIONS or debugger flags skew the figures.
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' };
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
const times = cases.map(() => []);
const cpu = cases.map(() => []);
for (let round = 0; round < runs + 1; round++) {
  cases.forEach((c, i) => {
    const t0 = process.hrtime.bigint();
    const r = GNU_TIME
      ? spawnSync(GNU_TIME, ['-f', 'CPU %U %S', process.execPath, ...c.args], { env, encoding: 'utf8' })
      : spawnSync(process.execPath, c.args, { env, encoding: 'utf8' });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    // Another build (--bin) may exit differently on the usage error; only a crash or success there is wrong.
    const expected = c.exit ?? 0;
    if (values.bin ? (r.status === 0) !== (expected === 0) : r.status !== expected)
      throw new Error(`${c.name} exited ${r.status}: ${r.stderr}`);
    if (round === 0) return; // warms the file cache
    times[i].push(ms);
    const m = /CPU ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
    if (m) cpu[i].push((Number(m[1]) + Number(m[2])) * 1000);
  });
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const base = median(times[0]);
const cpuBase = cpu[0].length ? median(cpu[0]) : null;
const rows = cases.map((c, i) => ({
  command: c.name,
  medianMs: Math.round(median(times[i])),
  overNodeMs: Math.round(median(times[i]) - base),
  ...(cpuBase === null
    ? {}
    : { cpuMs: Math.round(median(cpu[i])), cpuOverNodeMs: Math.round(median(cpu[i]) - cpuBase) }),
}));
if (values.json) console.log(JSON.stringify({ node: process.version, runs, targetMs: TARGET_MS, rows }, null, 2));
else {
  const w = Math.max(...rows.map((r) => r.command.length));
  const over = (r, v) => (r === rows[0] ? '-' : `+${v} ms`).padStart(9);
  console.log(
    `${'command'.padEnd(w)}  wall (median)  over node  cpu (median)  over node   ${runs} runs, ${process.version}`,
  );
  for (const r of rows) {
    const cpuCols = r.cpuMs === undefined ? '' : `  ${`${r.cpuMs} ms`.padStart(12)}  ${over(r, r.cpuOverNodeMs)}`;
    console.log(`${r.command.padEnd(w)}  ${`${r.medianMs} ms`.padStart(13)}  ${over(r, r.overNodeMs)}${cpuCols}`);
  }
}
const missed = rows.slice(1).filter((r) => r.overNodeMs > TARGET_MS);
if (missed.length) {
  console.error(`Over the ${TARGET_MS} ms target: ${missed.map((r) => r.command).join(', ')}`);
  process.exitCode = 1;
}
