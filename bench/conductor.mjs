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
 * Both modes side by side in one run, on one server: `copy`, every fork of the baseline a copy
 * (build.branchPool: 0, the lane before pools), and `pool`, forks handed out by a warm pool of the
 * baseline (build.branchPool, default 2). Each mode starts from no baseline, so both build one.
 *
 *   --items N       test-list items, i.e. cycles (default 5)
 *   --think MS      how long each agent turn takes (default 0: instant agents, the worst case for
 *                   the conductor, whose background forks then cannot hide behind the agent)
 *   --data-dir DIR  where the embedded server lives (default: a temp dir; an XFS mount gives clone mode)
 *   --modes LIST    which modes, in order (default copy,pool)
 *   --pool-size N   build.branchPool in the pool mode (default 2)
 *   --trace FILE    write every timed step and progress line, with its start and end (ms since the
 *                   mode started), as JSON lines: where a cycle's time goes, in order
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanup, installSignalHandlers, onCleanup } from './lib/cleanup.js';
import { localAgentBackends } from '../lib/src/agents/backends.js';
import { createLocalProvider } from '../lib/src/branches/local/provider.js';
import { EmbeddedServer } from '../lib/src/branches/local/server.js';
import { loadConfig } from '../lib/src/config/load.js';
import { localWorkspaces } from '../lib/src/git/local-workspace.js';
import { localAdapters } from '../lib/src/runtime/local-adapters.js';
import { scenarioRepo } from '../lib/src/demo/scenarios.js';
import { runBuildLane } from '../lib/src/lanes/tdd/index.js';
import { createFeature } from '../lib/src/lanes/tdd/feature.js';
import { FeatureStore } from '../lib/src/lanes/tdd/store.js';
import { benchArgs } from './lib/args.js';

const values = benchArgs(import.meta.url, {
  items: { type: 'integer', default: 5 },
  think: { type: 'integer', default: 0, min: 0 },
  'data-dir': { type: 'string' },
  modes: { type: 'string', default: 'copy,pool' },
  'pool-size': { type: 'integer', default: 2 },
  trace: { type: 'string' },
});
const { items, think } = values;
const poolSize = values['pool-size'];
const modes = values.modes.split(',').map((m) => m.trim());
for (const m of modes) if (m !== 'copy' && m !== 'pool') throw new Error(`unknown mode ${m} (copy, pool)`);
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
/** The --trace timeline: timed steps (label, start, end) and progress lines, per mode. */
const trace = [];
const shopConfig = await readFile(path.join(here, '..', 'examples', 'shop', '.github', 'consort.yml'), 'utf8');

/** One run of the lane on a fresh repository of the shop; `branchPool` 0 is the copy mode. */
async function runMode(provider, mode) {
  const branchPool = mode === 'pool' ? poolSize : 0;
  const config = `${shopConfig}agents:\n  default:\n    backend: command\n    command: BENCH_ITEMS=${items} BENCH_THINK_MS=${think} node ${path.join(here, 'conductor-agent.mjs')}\ngates:\n  mode: proxy\nbuild:\n  branchPool: ${branchPool}\n`;
  // src/bench.js exists from the start: a test importing a missing module would be red for the wrong reason.
  const repo = await scenarioRepo(null, {
    baseFiles: [
      { file: '.github/consort.yml', content: config },
      { file: 'src/bench.js', content: '// Functions the benchmark feature adds.\nexport {};\n' },
    ],
  });
  try {
    // No baseline from an earlier mode: each mode builds (and, with a pool, sets up) its own.
    for (const b of await provider.list())
      if (b.parent === 'main') await provider.delete(b.name, { recursive: true, terminateConnections: true });
    const { config: parsed } = await loadConfig(repo.dir);
    // The composition root: the adapters a shell builds, once per mode.
    const workspace = await localWorkspaces.open(repo.dir);
    const { feature } = await createFeature(workspace, 'bench', 'A feature to measure the conductor.');
    const timings = new Map();
    const creates = { made: 0, pooled: 0 };
    // Counted on the provider itself: a wrapper made with Object.create would keep the state the
    // provider sets on `this` (its pool-owner session) to itself, where close() never ends it.
    const create = provider.create;
    provider.create = async function (options) {
      const made = await create.call(this, options);
      creates.made += 1;
      if (made.pooled) creates.pooled += 1;
      return made;
    };
    log(`\n== mode ${mode} (build.branchPool: ${branchPool})`);
    const started = performance.now();
    const at = () => Math.round(performance.now() - started);
    const result = await runBuildLane({
      workspace,
      processes: localAdapters.processes,
      agents: localAgentBackends,
      git: localAdapters.git,
      migrations: localAdapters.migrations,
      schemas: localAdapters.schemas,
      config: parsed,
      feature,
      provider,
      env: process.env,
      log: (l) => {
        if (values.trace) trace.push({ mode, at: at(), line: l });
        log(l);
      },
      onTiming: (label, ms) => {
        timings.set(label, (timings.get(label) ?? 0) + ms);
        if (values.trace) trace.push({ mode, label, start: Math.round(at() - ms), end: at() });
      },
    });
    const totalMs = performance.now() - started;
    if (result.stop !== 'done') throw new Error(`the bench feature did not finish: ${result.stop}: ${result.message}`);
    const store = new FeatureStore(repo.dir, feature);
    const cycles = [];
    for (const f of await store.cycleFiles()) cycles.push(JSON.parse(await readFile(store.file(f), 'utf8')));
    const rows = cycles.map((c) => ({
      item: c.item,
      wallMs: c.timing.wallMs,
      agentMs: c.timing.agentMs,
      suiteMs: c.timing.suiteMs,
      overheadMs: c.timing.overheadMs,
    }));
    const overhead = rows.map((r) => r.overheadMs);
    const breakdown = Object.fromEntries(
      [...timings]
        .filter(([label]) => label !== 'turn:agent' && label !== 'prove:suite')
        .sort((a, b) => b[1] - a[1])
        .map(([label, ms]) => [label, Math.round(ms / cycles.length)]),
    );
    return {
      mode,
      branchPool,
      totalMs: Math.round(totalMs),
      medianOverheadMs: median(overhead),
      minOverheadMs: Math.min(...overhead),
      maxOverheadMs: Math.max(...overhead),
      medianSuiteMs: median(rows.map((r) => r.suiteMs)),
      forks: creates,
      cycles: rows,
      breakdownPerCycleMs: breakdown,
    };
  } finally {
    await repo.dispose();
    delete provider.create; // the prototype's again
  }
}

// Ctrl-C, a signal or a reader that left the pipe (`| head`) still stops the server and removes its data.
await installSignalHandlers(log);
if (!values['data-dir']) {
  onCleanup('data dir', () => rm(dataDir, { recursive: true, force: true }));
  onCleanup('server', () => new EmbeddedServer(dataDir).stop());
}
const { provider } = await createLocalProvider({ dataDir, log });
onCleanup('provider', () => provider.close());
try {
  const caps = await provider.capabilities();
  log(`provider local, branch mode ${caps.mode} (${caps.modeReason}); ${items} cycles, agent turns of ${think} ms`);
  const results = [];
  for (const mode of modes) results.push(await runMode(provider, mode));

  for (const r of results) {
    console.log(`\n${r.mode} mode (build.branchPool: ${r.branchPool})`);
    console.log('cycle  wall ms  agent ms  suite ms  overhead ms');
    for (const c of r.cycles)
      console.log(
        `${c.item.padEnd(5)}  ${String(c.wallMs).padStart(7)}  ${String(c.agentMs).padStart(8)}  ${String(c.suiteMs).padStart(8)}  ${String(c.overheadMs).padStart(11)}`,
      );
  }
  console.log(
    `\nconductor overhead per cycle (agent turns of ${think} ms; target ≤ 300 ms), ${caps.mode} mode server:`,
  );
  console.log('mode  overhead median (min–max) ms  suite median ms  run total s  forks pooled/made');
  for (const r of results)
    console.log(
      `${r.mode.padEnd(4)}  ${`${r.medianOverheadMs} (${r.minOverheadMs}–${r.maxOverheadMs})`.padStart(28)}  ${String(r.medianSuiteMs).padStart(15)}  ${(r.totalMs / 1000).toFixed(1).padStart(11)}  ${`${r.forks.pooled}/${r.forks.made}`.padStart(17)}`,
    );
  console.log(
    "\nwhere the driver's own time goes (ms per cycle, whole run ÷ cycles, so the design phase and the one-time",
  );
  console.log('baseline are spread over the cycles; labels nest: turn:branch and prove:branch include branch:*):');
  const labels = [...new Set(results.flatMap((r) => Object.keys(r.breakdownPerCycleMs)))];
  console.log(`  ${'label'.padEnd(26)}${results.map((r) => r.mode.padStart(8)).join('')}`);
  for (const label of labels)
    console.log(
      `  ${label.padEnd(26)}${results.map((r) => String(r.breakdownPerCycleMs[label] ?? 0).padStart(8)).join('')}`,
    );
  const out = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    loadavg: os.loadavg(),
    provider: 'local',
    mode: caps.mode,
    items,
    thinkMs: think,
    breakdownNote:
      'whole run divided by cycles (design and baseline included); labels nest (turn:branch and prove:branch include branch:*)',
    modes: results,
  };
  await mkdir(path.join(here, 'results'), { recursive: true });
  await writeFile(path.join(here, 'results', 'conductor.json'), `${JSON.stringify(out, null, 2)}\n`);
  if (values.trace) await writeFile(values.trace, trace.map((t) => JSON.stringify(t)).join('\n') + '\n');
} finally {
  await cleanup(log);
}
