/**
 * The migrations the TDD lane applies on a proof's branch and on a turn's sandbox (database.ts,
 * migrate) run under migrations.timeout and the run's cancel, as its baseline's do
 * (tdd-baseline-limit.test.ts): past the limit the statement is cancelled and the proof fails
 * naming the migration, the limit and the key (a timed-out proof proves neither red nor green); a
 * sandbox's turn is told, and the sandbox is forked afresh before it is used again; a cancel ends
 * either at once and the call throws (the driver stops as interrupted). The limit is the run's
 * configuration's, read before any agent worked. On the run's shared embedded PostgreSQL 18, with a
 * 2 s limit against a 30 s pg_sleep.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { judgeGreen, judgeRed } from '../../src/conductor/proofs.js';
import type { BranchKit, Branches } from '../../src/lanes/tdd/database.js';
import { migrationFailed, prove } from '../../src/lanes/tdd/proof.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { laneBranches, tddAdapters, workspaceAt } from '../helpers/tdd.js';

const git = (cwd: string, ...args: string[]) =>
  execFileAsync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });

const BASE = '-- Up Migration\nCREATE TABLE customers (id int);\n-- Down Migration\nDROP TABLE customers;\n';
/** The feature's migration: it sleeps far past the 2 s limit (and past the tests' "did not hang" bounds). */
const SLOW_FILE = 'migrations/1700000000001_slow.sql';
const SLOW =
  '-- Up Migration\nSELECT pg_sleep(30);\nCREATE TABLE slow (id int);\n-- Down Migration\nDROP TABLE slow;\n';
const CONFIG = (timeout: string) =>
  `migrations:\n  dir: migrations\n  timeout: ${timeout}\nsuite:\n  command: node -e 0\n  reports: [junit.xml]\n`;
/** Generous for a loaded machine (a fork and a proof tree take seconds at load 11), under the 30 s sleep. */
const DID_NOT_HANG_MS = 25_000;
const LIMIT_FAILURE =
  /^migrations\/1700000000001_slow\.sql failed[^:]*: still running after migrations\.timeout \(2s\); its statement was cancelled\. If it needs longer \(a large backfill\), raise migrations\.timeout in the Consort configuration/;

let t: TestProvider;
const dirs: string[] = [];
const made: Branches[] = [];

beforeAll(async () => {
  t = await localTestProvider();
}, 60_000);
afterAll(async () => {
  for (const b of made) await b.settle().catch(() => undefined);
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  await t?.cleanup();
});

const repos = new Map<string, Promise<string>>();

/**
 * A repository whose base commit holds the base migration and `timeout`, and whose next commit adds
 * the slow migration (a proof proves that commit; a sandbox reads the work tree). One per limit:
 * the tests share it, and so its baseline.
 */
function repo(timeout: string): Promise<string> {
  let made = repos.get(timeout);
  if (made === undefined) {
    made = makeRepo(timeout);
    repos.set(timeout, made);
  }
  return made;
}

async function makeRepo(timeout: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-tdd-branch-limit-'));
  dirs.push(dir);
  const write = async (file: string, text: string) => {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  };
  await write('migrations/1700000000000_base.sql', BASE);
  await write('.github/consort.yml', CONFIG(timeout));
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  await write(SLOW_FILE, SLOW);
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'slow migration');
  return dir;
}

/** The lane's branches for the repository at `dir`, as the driver makes them for a run, its baseline built. */
async function branchesOf(dir: string, more: Partial<BranchKit> = {}): Promise<Branches> {
  const { config } = await loadConfig(dir);
  const branches = await laneBranches({
    provider: t.provider,
    dir,
    config,
    baseCommit: (await git(dir, 'rev-list', '--max-parents=0', 'HEAD')).stdout.trim(),
    kit: { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' }, ...more },
  });
  made.push(branches);
  await branches.baseline();
  return branches;
}

const branchNames = async () => (await t.provider.list()).map((b) => b.name);

/** `fn`'s result or error message, and how long it took. */
async function timed<T>(fn: () => Promise<T>): Promise<{ value?: T; error?: string; ms: number }> {
  const started = performance.now();
  try {
    const value = await fn();
    return { value, ms: performance.now() - started };
  } catch (e) {
    return { error: (e as Error).message, ms: performance.now() - started };
  }
}

/**
 * Cancel the run once the slow migration's statement is running on one of this file's branches:
 * a fixed delay on a loaded machine could cancel the fork before it, which says so differently.
 */
function cancelWhenSleeping(controller: AbortController): { stop: () => void; sinceCancel: () => number } {
  let stopped = false;
  let cancelledAt: number | undefined;
  void (async () => {
    while (!stopped && !controller.signal.aborted) {
      const running = await query(
        t.adminUrl,
        "SELECT 1 FROM pg_stat_activity WHERE datname LIKE $1 AND query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()",
        [`${t.namespace}\\_%`],
      ).catch(() => []);
      if (running.length > 0 && !stopped) {
        cancelledAt = performance.now();
        controller.abort(new Error('SIGINT'));
      } else await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    stop: () => void (stopped = true),
    // From the cancel to now: what "at once" bounds (the fork before it is the machine's load).
    sinceCancel: () => (cancelledAt === undefined ? Infinity : performance.now() - cancelledAt),
  };
}

async function proofOf(dir: string, branches: Branches, branch: string, signal?: AbortSignal) {
  const { config } = await loadConfig(dir);
  return prove({
    ws: await workspaceAt(dir),
    commit: (await git(dir, 'rev-parse', 'HEAD')).stdout.trim(),
    config,
    branches,
    branch,
    hash: [],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' },
    processes: tddAdapters.processes,
    time: (_label, fn) => fn(),
    guard: false,
    ...(signal ? { signal } : {}),
  });
}

describe("a proof's branch", () => {
  it('past migrations.timeout: the proof fails naming the migration, the limit and the key; neither red nor green is proven', async () => {
    const dir = await repo('2s');
    const branches = await branchesOf(dir);
    const { value, error, ms } = await timed(() => proofOf(dir, branches, 'proof-limit'));
    expect(error).toBeUndefined();
    expect(ms).toBeLessThan(DID_NOT_HANG_MS);
    const outcome = value!.outcome;
    expect(outcome).toMatchObject({ kind: 'broken', reason: 'migrations' });
    expect(outcome.kind === 'broken' && outcome.message).toMatch(LIMIT_FAILURE);
    const red = judgeRed({ outcome, passing: [], testFiles: [], rejectBornGreen: true });
    expect(red.verdict).toBe('broken');
    expect(red.verdict !== 'red' && red.reason).toContain('migrations.timeout (2s)');
    const green = judgeGreen({ outcome, itemTests: [], frozen: {} });
    expect(green).toMatchObject({ verdict: 'failing' });
    expect(green.verdict !== 'green' && green.reason).toMatch(
      /^the migrations do not apply: migrations\/1700000000001_slow\.sql failed/,
    );
    // The branch the limit cut short is dropped with the proof, not kept for another.
    await branches.settle();
    expect(await branchNames()).not.toContain('proof-limit');
  }, 60_000);

  it("a cancel ends its migrations at once: the proof throws, as the driver's interrupted run expects", async () => {
    const dir = await repo('30m');
    const controller = new AbortController();
    const branches = await branchesOf(dir, { signal: controller.signal });
    const canceller = cancelWhenSleeping(controller);
    const { error } = await timed(() => proofOf(dir, branches, 'proof-cancel', controller.signal));
    const ms = canceller.sinceCancel();
    canceller.stop();
    expect(error).toMatch(/cancelled/);
    expect(ms).toBeLessThan(DID_NOT_HANG_MS);
    await branches.settle();
    expect(await branchNames()).not.toContain('proof-cancel');
  }, 60_000);
});

describe("a turn's sandbox", () => {
  it('past migrations.timeout: the request fails naming the migration, the limit and the key, and the sandbox is forked afresh before the next turn', async () => {
    const dir = await repo('2s');
    const branches = await branchesOf(dir);
    const first = await timed(() => branches.sandbox('sandbox-limit'));
    expect(first.error).toBeUndefined();
    expect(first.ms).toBeLessThan(DID_NOT_HANG_MS);
    const migrations = first.value!.migrations;
    expect(migrations.ok).toBe(false);
    if (migrations.ok) return;
    expect(migrationFailed(branches, migrations.failed)).toMatch(LIMIT_FAILURE);
    // The same files, yet the branch the limit cut short is not taken again as it is: forked afresh.
    const forks = branches.forks().made;
    const second = await timed(() => branches.sandbox('sandbox-limit'));
    expect(second.ms).toBeLessThan(DID_NOT_HANG_MS);
    expect(branches.forks().made).toBe(forks + 1);
    expect(second.value!.migrations.ok).toBe(false);
  }, 60_000);

  it('a cancel ends its migrations at once and the call throws', async () => {
    const dir = await repo('30m');
    const controller = new AbortController();
    const branches = await branchesOf(dir, { signal: controller.signal });
    const canceller = cancelWhenSleeping(controller);
    const { error } = await timed(() => branches.sandbox('sandbox-cancel'));
    const ms = canceller.sinceCancel();
    canceller.stop();
    expect(error).toMatch(/^The run was cancelled while the migrations ran on the branch sandbox-cancel/);
    expect(ms).toBeLessThan(DID_NOT_HANG_MS);
    // Held, so the run's end drops it.
    await branches.settle();
    expect(await branchNames()).not.toContain('sandbox-cancel');
  }, 60_000);
});
