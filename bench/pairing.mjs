#!/usr/bin/env node
/**
 * Pairing benchmark (`npm run bench:pairing`): with `consort hooks install` in a repository and both
 * git branches already paired, how long from starting `git checkout <other>` until `.env` holds the
 * other branch's URL (the hook writes it from its cache before git returns; the database work runs
 * afterwards in the background). Target: ≤ 300 ms. For context it also times a bare `node -e 0`
 * (the floor any Node-based hook pays on this machine right now) and `consort pair` on a reused
 * pairing (what the background job does).
 *
 * Uses the PostgreSQL server at CONSORT_BENCH_POSTGRES_URL (default postgresql://postgres@127.0.0.1:5432/postgres)
 * in a throwaway namespace, removed at the end. Options: --switches N (default 20).
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { installHooks } from '../lib/src/pairing/hooks.js';
import { summarize } from './lib/stats.js';
import { benchArgs } from './lib/args.js';

const exec = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const { switches } = benchArgs(import.meta.url, { switches: { type: 'integer', default: 20 } });
const adminUrl = process.env.CONSORT_BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const namespace = `bench${randomBytes(3).toString('hex')}`;
const log = (m) => process.stderr.write(`${m}\n`);
const env = {
  PATH: process.env.PATH ?? '',
  HOME: os.tmpdir(),
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
  CONSORT_PROVIDER: 'postgres',
  CONSORT_POSTGRES_URL: adminUrl,
  CONSORT_NAMESPACE: namespace,
};
const consort = path.join(here, '..', 'bin', 'consort.js');
const git = (root, ...args) =>
  execFileSync('git', args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    .toString()
    .trim();
const envUrl = async (root) =>
  /^DATABASE_URL=(.*)$/m.exec(await readFile(path.join(root, '.env'), 'utf8').catch(() => ''))?.[1];

async function dropNamespace() {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${namespace}\\_%`]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
  const cat = new pg.Client({ connectionString: adminUrl.replace(/\/[^/]*$/, '/consort_catalog') });
  await cat.connect();
  try {
    await cat.query('DELETE FROM consort.branches WHERE namespace = $1 AND parent IS NOT NULL', [namespace]);
    await cat.query('DELETE FROM consort.branches WHERE namespace = $1', [namespace]);
  } finally {
    await cat.end();
  }
}

const root = await mkdtemp(path.join(os.tmpdir(), 'consort-bench-pairing-'));
try {
  git(root, 'init', '-q', '-b', 'main');
  await writeFile(path.join(root, '.gitignore'), '.env\n');
  git(root, 'add', '.');
  git(root, 'commit', '-qm', 'init');
  git(root, 'branch', 'feature-a');
  git(root, 'branch', 'feature-b');
  // The same switches without any hook: what git itself costs on this machine right now.
  const bare = [];
  for (let i = 0; i < Math.min(switches, 10); i += 1) {
    const t0 = performance.now();
    git(root, 'checkout', '-q', i % 2 ? 'feature-a' : 'feature-b');
    bare.push(performance.now() - t0);
  }
  git(root, 'checkout', '-q', 'main');
  await installHooks(root, {
    node: process.execPath,
    entry: path.join(here, '..', 'lib', 'src', 'pairing', 'hook-main.js'),
  });
  const urls = {};
  for (const b of ['feature-a', 'feature-b']) {
    git(root, 'checkout', '-q', b);
    const { stdout } = await exec(process.execPath, [consort, '-C', root, 'pair', '--json', '--show-secrets'], { env });
    urls[b] = JSON.parse(stdout).url;
    log(`paired ${b}`);
  }
  // Let the background jobs of the set-up checkouts finish before measuring.
  await new Promise((r) => setTimeout(r, 3000));

  const floor = [];
  for (let i = 0; i < 5; i += 1) {
    const t0 = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    floor.push(performance.now() - t0);
  }
  const samples = [];
  let current = git(root, 'branch', '--show-current');
  for (let i = 0; i < switches; i += 1) {
    const next = current === 'feature-a' ? 'feature-b' : 'feature-a';
    const t0 = performance.now();
    git(root, 'checkout', '-q', next);
    let url = await envUrl(root);
    while (url !== urls[next] && performance.now() - t0 < 10_000) url = await envUrl(root);
    const ms = performance.now() - t0;
    if (url !== urls[next]) throw new Error(`.env did not change to ${next}'s URL within 10 s`);
    samples.push(ms);
    current = next;
    await new Promise((r) => setTimeout(r, 300)); // the background job of this switch, mostly
  }
  const reuse = [];
  for (let i = 0; i < 3; i += 1) {
    const t0 = performance.now();
    await exec(process.execPath, [consort, '-C', root, 'pair', '--json'], { env });
    reuse.push(performance.now() - t0);
  }
  const result = {
    switchToEnvUpdatedMs: summarize(samples),
    gitCheckoutWithoutHooksMs: summarize(bare),
    nodeStartFloorMs: summarize(floor),
    consortPairReusedMs: summarize(reuse),
    loadAverage: os.loadavg().map((l) => Math.round(l * 10) / 10),
    cpus: os.cpus().length,
    targetMs: 300,
  };
  console.log(JSON.stringify(result, null, 2));
  const m = result.switchToEnvUpdatedMs;
  log(
    `git checkout → .env updated: median ${m.median} ms, p95 ${m.p95} ms over ${m.runs} switches (target ≤ 300 ms; git checkout without hooks: median ${result.gitCheckoutWithoutHooksMs.median} ms; node -e 0 alone: median ${result.nodeStartFloorMs.median} ms; load ${result.loadAverage.join(' ')} on ${result.cpus} CPUs)`,
  );
} finally {
  await new Promise((r) => setTimeout(r, 2000)); // background jobs still holding connections
  await dropNamespace().catch((e) => log(`cleanup: ${e.message}`));
  await rm(root, { recursive: true, force: true });
}
