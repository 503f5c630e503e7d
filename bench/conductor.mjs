#!/usr/bin/env node
/**
 * npm run bench:conductor — the TDD lane's own overhead per red/green/refactor cycle on the
 * `local` provider: everything the conductor does (branches, migrations, git, context packs,
 * scope checks, proofs' bookkeeping, state) except the agents' turns and the project's suite.
 *
 * A feature of N items on the example shop, driven by an instant scripted agent (bench/conductor-agent.mjs)
 * and headless gates; every cycle is four turns (RED, GREEN, REFACTOR, REVIEW) and three proofs on
 * fresh branches with the shop's real jest suite. Overhead comes from the cycle records
 * (wall − agent − suite). Prints the median and a breakdown; writes bench/results/conductor.json.
 *
 *   --items N       test-list items, i.e. cycles (default 5)
 *   --think MS      how long each agent turn takes (default 0: instant agents, the worst case for
 *                   the conductor, whose background forks then cannot hide behind the agent)
 *   --data-dir DIR  where the embedded server lives (default: a temp dir; an XFS mount gives clone mode)
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLocalProvider } from '../lib/src/branches/local/provider.js';
import { EmbeddedServer } from '../lib/src/branches/local/server.js';
import { loadConfig } from '../lib/src/config/load.js';
import { scenarioRepo } from '../lib/src/demo/scenarios.js';
import { runBuildLane } from '../lib/src/lanes/tdd/index.js';
import { createFeature } from '../lib/src/lanes/tdd/feature.js';
import { FeatureStore } from '../lib/src/lanes/tdd/store.js';

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '5' },
    think: { type: 'string', default: '0' },
    'data-dir': { type: 'string' },
  },
});
const items = Number(values.items);
const think = Number(values.think);
const here = path.dirname(fileURLToPath(import.meta.url));
const log = (m) => process.stderr.write(`${m}\n`);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const dataDir = values['data-dir'] ?? (await mkdtemp(path.join(os.tmpdir(), 'consort-bench-conductor-')));
await mkdir(dataDir, { recursive: true });
await chmod(dataDir, 0o755);
const shopConfig = await readFile(path.join(here, '..', 'examples', 'shop', '.github', 'consort.yml'), 'utf8');
const config = `${shopConfig}agents:\n  default:\n    backend: command\n    command: BENCH_ITEMS=${items} BENCH_THINK_MS=${think} node ${path.join(here, 'conductor-agent.mjs')}\ngates:\n  mode: proxy\n`;
// src/bench.js exists from the start: a test importing a missing module would be red for the wrong reason.
const repo = await scenarioRepo(null, {
  baseFiles: [
    { file: '.github/consort.yml', content: config },
    { file: 'src/bench.js', content: '// Functions the benchmark feature adds.\nexport {};\n' },
  ],
});
const { provider } = await createLocalProvider({ dataDir, log });
try {
  const caps = await provider.capabilities();
  log(`provider local, branch mode ${caps.mode} (${caps.modeReason}); ${items} cycles, agent turns of ${think} ms`);
  const { config: parsed } = await loadConfig(repo.dir);
  const { feature } = await createFeature(repo.dir, 'bench', 'A feature to measure the conductor.');
  const timings = new Map();
  const started = performance.now();
  const result = await runBuildLane({
    workspace: repo.dir,
    config: parsed,
    feature,
    provider,
    env: process.env,
    log: (l) => log(l),
    onTiming: (label, ms) => timings.set(label, (timings.get(label) ?? 0) + ms),
  });
  const totalMs = performance.now() - started;
  if (result.stop !== 'done') throw new Error(`the bench feature did not finish: ${result.stop}: ${result.message}`);
  const store = new FeatureStore(repo.dir, feature);
  const cycles = [];
  for (const f of await store.cycleFiles()) cycles.push(JSON.parse(await readFile(store.file(f), 'utf8')));
  const overhead = cycles.map((c) => c.timing.overheadMs);
  const rows = cycles.map((c) => ({
    item: c.item,
    wallMs: c.timing.wallMs,
    agentMs: c.timing.agentMs,
    suiteMs: c.timing.suiteMs,
    overheadMs: c.timing.overheadMs,
  }));
  const breakdown = Object.fromEntries(
    [...timings]
      .filter(([label]) => label !== 'turn:agent' && label !== 'prove:suite')
      .sort((a, b) => b[1] - a[1])
      .map(([label, ms]) => [label, Math.round(ms / cycles.length)]),
  );
  console.log('\ncycle  wall ms  agent ms  suite ms  overhead ms');
  for (const r of rows)
    console.log(
      `${r.item.padEnd(5)}  ${String(r.wallMs).padStart(7)}  ${String(r.agentMs).padStart(8)}  ${String(r.suiteMs).padStart(8)}  ${String(r.overheadMs).padStart(11)}`,
    );
  console.log(
    `\nconductor overhead per cycle (agent turns of ${think} ms): median ${median(overhead)} ms (min ${Math.min(...overhead)}, max ${Math.max(...overhead)}); target < 1000 ms`,
  );
  console.log(
    "where the driver's own time goes (ms per cycle, whole run ÷ cycles, so the design phase and the one-time",
  );
  console.log('baseline are spread over the cycles; labels nest: turn:branch and prove:branch include branch:*):');
  for (const [label, ms] of Object.entries(breakdown)) console.log(`  ${label.padEnd(24)} ${String(ms).padStart(6)}`);
  const out = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    loadavg: os.loadavg(),
    provider: 'local',
    mode: caps.mode,
    items,
    thinkMs: think,
    totalMs: Math.round(totalMs),
    medianOverheadMs: median(overhead),
    cycles: rows,
    breakdownNote:
      'whole run divided by cycles (design and baseline included); labels nest (turn:branch and prove:branch include branch:*)',
    breakdownPerCycleMs: breakdown,
  };
  await mkdir(path.join(here, 'results'), { recursive: true });
  await writeFile(path.join(here, 'results', 'conductor.json'), `${JSON.stringify(out, null, 2)}\n`);
} finally {
  await provider.close();
  await repo.dispose();
  if (!values['data-dir']) {
    await new EmbeddedServer(dataDir).stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
