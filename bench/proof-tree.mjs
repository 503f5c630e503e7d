#!/usr/bin/env node
/**
 * npm run bench:proof-tree — what a TDD proof's clean tree costs before its suite starts, the two
 * ways each part can be made, alternating (the box's speed drifts; medians of pairs):
 *
 * - the worktree: a fresh `git worktree add` at the proof, against one begun at the turn's base
 *   while the agent works and moved to the turn's commit at the proof (src/git/prepared-worktree.ts),
 *   on the example shop (~30 files) and on a project of --files files;
 * - the dependencies: each proof's copy of the pristine `node_modules`, against the pristine bound
 *   read-only under bubblewrap (src/lanes/tdd/clean-tree.ts), with a node_modules of the packages
 *   named by --packages, copied from this package's install.
 *
 *   --runs N        pairs per measurement (default 8)
 *   --files N       files in the larger project (default 1000)
 *   --packages LIST node_modules packages for the dependency case (default: jest's and pg's)
 *
 * bench:conductor runs the shop with its node_modules outside the workspace, so it shows neither a
 * large tree nor a dependency copy. Writes bench/results/proof-tree.json.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bindWorkspace } from '../lib/src/git/local-workspace.js';
import { openWorkspace, workspaceHead } from '../lib/src/git/workspace.js';
import { cleanTree, snapshotDependencies } from '../lib/src/lanes/tdd/clean-tree.js';
import { createProcessRunner } from '../lib/src/process/runner.js';
import { benchArgs } from './lib/args.js';

const values = benchArgs(import.meta.url, {
  runs: { type: 'integer', default: 8 },
  files: { type: 'integer', default: 1000 },
  packages: {
    type: 'string',
    default: 'jest,jest-cli,@jest,@babel,babel-jest,pg,pg-protocol,pg-types,expect,pretty-format,chalk,micromatch',
  },
});
const runs = values.runs;
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'consort-bench-proof-tree-'));
const log = (m) => process.stderr.write(`${m}\n`);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const git = (cwd, ...args) =>
  execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', ...args], { cwd })
    .toString()
    .trim();

function repoOf(name, fill) {
  const dir = path.join(scratch, name);
  mkdirSync(dir, { recursive: true });
  fill(dir);
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'base');
  return dir;
}

/** Fresh against prepared worktrees: each pair commits a turn and makes the proof's worktree of it both ways. */
async function worktrees(dir) {
  const ws = bindWorkspace(await openWorkspace(dir));
  const times = { fresh: [], prepared: [] };
  for (let i = 0; i < 2 * runs; i++) {
    const base = git(dir, 'rev-parse', 'HEAD');
    writeFileSync(path.join(dir, `turn-${i % 3}.txt`), `turn ${i}\n`);
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', `turn ${i}`);
    const head = git(dir, 'rev-parse', 'HEAD');
    const mode = i % 2 === 0 ? 'prepared' : 'fresh';
    const tree = `${dir}-consort-proof-${i}`;
    if (mode === 'prepared') await ws.prepareWorktree(tree, base); // during the agent's turn
    const started = performance.now();
    await ws.addWorktree(tree, head);
    times[mode].push(performance.now() - started);
    await ws.removeWorktree(tree);
  }
  return { fresh: median(times.fresh), prepared: median(times.prepared) };
}

/** A proof's dependencies copied against bound, through cleanTree. */
async function dependencies(dir) {
  const bwrap = createProcessRunner({ isolation: 'bwrap' });
  const unshare = createProcessRunner({ isolation: 'unshare' });
  const ws = bindWorkspace(await openWorkspace(dir));
  const head = await workspaceHead(await openWorkspace(dir));
  const deps = await snapshotDependencies(ws, bwrap);
  const times = { copy: [], bind: [] };
  try {
    for (let i = 0; i < 2 * runs; i++) {
      const mode = i % 2 === 0 ? 'bind' : 'copy';
      const started = performance.now();
      const tree = await cleanTree(ws, head, deps, ['junit.xml'], mode === 'bind' ? bwrap : unshare);
      const made = performance.now() - started;
      const disposing = performance.now();
      await tree.dispose();
      times[mode].push(made + (performance.now() - disposing));
    }
  } finally {
    await deps.dispose();
  }
  return { copy: median(times.copy), bind: median(times.bind) };
}

const results = { at: new Date().toISOString(), runs, load: os.loadavg()[0] };
try {
  const shop = repoOf('shop', (d) => cpSync(path.join(root, 'examples', 'shop'), d, { recursive: true }));
  log(`worktree, example shop (${git(shop, 'ls-files').split('\n').length} files) …`);
  results.shop = await worktrees(shop);
  const files = values.files;
  const big = repoOf('big', (d) => {
    for (let i = 0; i < files; i++) {
      const folder = path.join(d, `d${Math.floor(i / 25)}`);
      if (i % 25 === 0) mkdirSync(folder);
      writeFileSync(path.join(folder, `f${i}.js`), `export const f${i} = ${i};\n`);
    }
  });
  log(`worktree, ${files} files …`);
  results.big = { files, ...(await worktrees(big)) };
  if (spawnSync('bwrap', ['--version']).status === 0 && existsSync(path.join(root, 'node_modules'))) {
    const withDeps = repoOf('deps', (d) => {
      writeFileSync(path.join(d, '.gitignore'), 'node_modules\n');
      writeFileSync(path.join(d, 'package.json'), '{"name":"bench"}\n');
      for (const p of values.packages.split(',')) {
        const from = path.join(root, 'node_modules', p);
        if (existsSync(from))
          cpSync(from, path.join(d, 'node_modules', p), { recursive: true, verbatimSymlinks: true });
      }
    });
    const count =
      execFileSync('find', [path.join(withDeps, 'node_modules'), '-type', 'f'])
        .toString()
        .split('\n').length - 1;
    log(`dependencies, node_modules of ${count} files …`);
    results.dependencies = { files: count, ...(await dependencies(withDeps)) };
  } else log('dependencies: skipped (needs bubblewrap and this package installed)');
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const ms = (x) => `${Math.round(x)} ms`;
console.log(`proof tree, median of ${runs} alternating pairs (load ${results.load.toFixed(1)}):`);
console.log(`  worktree, example shop:      fresh ${ms(results.shop.fresh)}  prepared ${ms(results.shop.prepared)}`);
console.log(
  `  worktree, ${results.big.files} files:        fresh ${ms(results.big.fresh)}  prepared ${ms(results.big.prepared)}`,
);
if (results.dependencies)
  console.log(
    `  node_modules (${results.dependencies.files} files): copy ${ms(results.dependencies.copy)}  bind ${ms(results.dependencies.bind)}  (made and removed)`,
  );
await mkdir(path.join(here, 'results'), { recursive: true });
await writeFile(path.join(here, 'results', 'proof-tree.json'), `${JSON.stringify(results, null, 2)}\n`);
