/**
 * The TDD lane's baseline (database.ts, buildBaseline) is built under migrations.timeout and the
 * run's cancel, as the check lane's is (baseline.ts): a base migration past the limit fails the
 * build naming it, the limit and the key; one the cancel ends stops at once; a seed command the
 * cancel ends is killed with its process group. Each leaves no baseline behind, so the next run
 * builds it afresh. The limit is the run's configuration's unless the lane is given another (a pull
 * request's base branch's: pull-request.ts). On the run's shared embedded PostgreSQL 18, with a 1 s limit.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { BranchKit, Branches } from '../../src/lanes/tdd/database.js';
import { execFileAsync } from '../helpers/exec-file.js';
import { localTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { laneBranches, tddAdapters } from '../helpers/tdd.js';

const git = (cwd: string, ...args: string[]) =>
  execFileAsync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd });

const BASE = '-- Up Migration\nCREATE TABLE customers (id int);\n-- Down Migration\nDROP TABLE customers;\n';
const CONFIG = (timeout: string, seed = '') =>
  `migrations:\n  dir: migrations\n  timeout: ${timeout}\n${seed ? `database:\n  seed:\n    command: ${seed}\n` : ''}suite:\n  command: node -e 0\n  reports: [junit.xml]\n`;

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

/** A repository whose base commit holds `files`. */
async function repo(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-tdd-limit-'));
  dirs.push(dir);
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  return dir;
}

/** The lane's branches for the repository at `dir`, as the driver makes them for a run. */
async function branchesOf(dir: string, more: Partial<BranchKit> = {}): Promise<Branches> {
  const { config } = await loadConfig(dir);
  const branches = await laneBranches({
    provider: t.provider,
    dir,
    config,
    baseCommit: (await git(dir, 'rev-parse', 'HEAD')).stdout.trim(),
    kit: { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' }, ...more },
  });
  made.push(branches);
  return branches;
}

const baselines = async () => (await t.provider.list()).map((b) => b.name).filter((n) => n.startsWith('baseline'));

/** Processes of this machine whose command line ends with `command` (a seed the test started). */
async function running(command: string): Promise<string[]> {
  const { stdout } = await execFileAsync('ps', ['-eo', 'pid=,args=']);
  return stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.endsWith(` ${command}`));
}

/** How the baseline's build ended: its error's message, and how long it took. */
async function build(branches: Branches): Promise<{ message: string; ms: number }> {
  const started = performance.now();
  const message = await branches.baseline().then(
    (name) => `built ${name}`,
    (e: Error) => e.message,
  );
  return { message, ms: performance.now() - started };
}

describe('a base migration past migrations.timeout', () => {
  it('fails the build naming the migration, the limit and the key, and leaves no baseline', async () => {
    const dir = await repo({
      'migrations/1700000000000_base.sql': BASE,
      'migrations/1700000000001_hang.js': 'exports.up = () => new Promise(() => {});\nexports.down = () => {};\n',
      '.github/consort.yml': CONFIG('1s'),
    });
    // Twice: nothing of the first build is left to hold the second.
    for (let run = 0; run < 2; run++) {
      const { message, ms } = await build(await branchesOf(dir));
      // Named: the limit counts from the first migration's start, not from the child's.
      expect(message).toMatch(
        /^Cannot build the TDD lane's baseline database: base's migration migrations\/1700000000001_hang\.js failed on the parent branch "main": still running after migrations\.timeout \(1s\)/,
      );
      expect(message).not.toContain('npm ci');
      expect(message).toContain('raise migrations.timeout in the Consort configuration');
      // Stopped by the 1 s limit, not left to hang (the migration never settles): well under the
      // test's own timeout, with room for a loaded box (13.7 s at load 12 with the child's start).
      expect(ms).toBeLessThan(40_000);
      expect(await baselines()).toEqual([]);
    }
  }, 120_000);

  it("takes the limit the lane is given (a pull request's base branch's) over the run's configuration", async () => {
    const dir = await repo({
      'migrations/1700000000000_base.sql': BASE,
      'migrations/1700000000001_hang.js':
        'exports.up = () => new Promise(() => {});\nexports.down = () => {};\n// given\n',
      '.github/consort.yml': CONFIG('1h'),
    });
    const { message, ms } = await build(
      await branchesOf(dir, {
        migrationsLimit: {
          timeout: '1s',
          configuration: "the Consort configuration of the pull request's base branch (main)",
          why: "The limit is read from the pull request's base branch.",
        },
      }),
    );
    expect(message).toContain('still running after migrations.timeout (1s)');
    expect(message).toContain(
      "raise migrations.timeout in the Consort configuration of the pull request's base branch (main)",
    );
    expect(message).toContain("The limit is read from the pull request's base branch.");
    expect(ms).toBeLessThan(40_000); // the 1 s limit, not the hang (as above)
    expect(await baselines()).toEqual([]);
  }, 120_000);
});

describe("a run cancelled while its baseline's build runs", () => {
  /**
   * A base whose second migration sleeps 10 minutes while the database `hang` names exists on the
   * server (made here, dropped before a run that should build through), and no limit of its own
   * that would end it (30m): "ended at once" (under 60 s, a loaded box's child start included)
   * cannot be the sleep's own end, and the next run does not wait for it.
   */
  const hang = () => `${t.namespace}_tdd_limit_hang`;
  const slowBase = () => ({
    'migrations/1700000000000_base.sql': BASE,
    'migrations/1700000000001_slow.sql': `-- Up Migration\nSELECT pg_sleep(600) FROM pg_database WHERE datname = '${hang()}';\nCREATE TABLE slow (id int);\n-- Down Migration\nDROP TABLE slow;\n`,
    '.github/consort.yml': CONFIG('30m'),
  });
  beforeEach(() => query(t.adminUrl, `CREATE DATABASE "${hang()}"`));
  afterEach(() => query(t.adminUrl, `DROP DATABASE IF EXISTS "${hang()}"`));

  it('starts no base migration once cancelled (a cancel before they reached the migrations process)', async () => {
    const dir = await repo(slowBase());
    // Cancelled as the base's migrations get their session, before any request reached its process.
    const controller = new AbortController();
    const migrations: BranchKit['migrations'] = {
      ...tddAdapters.migrations,
      open: (o) => {
        const session = tddAdapters.migrations.open!(o);
        controller.abort(new Error('SIGINT'));
        return session;
      },
    };
    const { message, ms } = await build(await branchesOf(dir, { signal: controller.signal, migrations }));
    expect(message).toBe("The TDD lane's baseline database was not built: the run was cancelled.");
    expect(ms).toBeLessThan(60_000);
    expect(await baselines()).toEqual([]);
  }, 120_000);

  it('ends a base migration at once, and the next run builds the baseline afresh', async () => {
    const dir = await repo(slowBase());
    const controller = new AbortController();
    const cancel = setTimeout(() => controller.abort(new Error('SIGINT')), 1000);
    const { message, ms } = await build(await branchesOf(dir, { signal: controller.signal })).finally(() =>
      clearTimeout(cancel),
    );
    expect(message).toBe("The TDD lane's baseline database was not built: the run was cancelled.");
    // Long before the 10-minute sleep's end, with room for a loaded CI runner's start-up.
    expect(ms).toBeLessThan(60_000);
    expect(await baselines()).toEqual([]);
    // Nothing half-built holds the next run: it builds the baseline through to the end (no sleep now).
    await query(t.adminUrl, `DROP DATABASE "${hang()}"`);
    const next = await build(await branchesOf(dir));
    expect(next.message).toMatch(/^built baseline-/);
    expect(await baselines()).toHaveLength(1);
  }, 120_000);

  it("kills the seed command's process group at once and leaves no baseline", async () => {
    const dir = await repo({
      'migrations/1700000000000_base.sql': BASE,
      '.github/consort.yml': CONFIG('30m', 'sleep 989'),
    });
    const before = await baselines();
    const controller = new AbortController();
    let abortedAt: number | undefined;
    const watch = setInterval(() => {
      void running('sleep 989').then((found) => {
        if (found.length === 0 || controller.signal.aborted) return;
        abortedAt = performance.now();
        controller.abort(new Error('SIGINT'));
      });
    }, 200);
    const { message } = await build(await branchesOf(dir, { signal: controller.signal })).finally(() =>
      clearInterval(watch),
    );
    expect(abortedAt).toBeDefined();
    expect(performance.now() - abortedAt!).toBeLessThan(15_000);
    expect(message).toBe("The TDD lane's baseline database was not built: the run was cancelled.");
    expect(await running('sleep 989')).toEqual([]);
    expect(await baselines()).toEqual(before);
  }, 120_000);
});
