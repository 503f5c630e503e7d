/**
 * Attacks on the guard of git's own files around a proof's suite (src/lanes/tdd/proof.ts,
 * src/lanes/tdd/experiments.ts): what a suite plants must never reach one of the conductor's own
 * git calls, however the proofs are scheduled, and must be reported.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { commitPaths, openWorkspace, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { prove } from '../../src/lanes/tdd/proof.js';
import { agentReadOnly } from '../../src/lanes/tdd/turn.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { exists, fakeBranches, git, proveHead, sumRepo } from '../helpers/sum-repo.js';

let dir: string;
let ws: GitWorkspace;
let deps: Dependencies;
let home: string;
let pinnedHome: string | undefined;

beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'consort-race-home-'));
  pinnedHome = process.env.HOME;
  process.env.HOME = home;
  dir = await sumRepo('consort-race-');
  ws = await openWorkspace(dir);
  deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
});

afterEach(async () => {
  process.env.HOME = pinnedHome;
  await deps?.dispose();
  await rm(dir, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it("competing attempts, as a run holds them: a filter one attempt's suite plants (in .git, or in ~/.gitconfig) never runs in another attempt's git calls", async () => {
  const base = await workspaceHead(ws);
  const config = path.join(ws.gitDir, 'config');
  const original = await readFile(config, 'utf8');
  const ran = path.join(home, 'smudge-ran');
  const filter = `[filter "x"]\\n\\tsmudge = tee ${ran}\\n\\tclean = tee ${ran}\\n`;
  // Attempt B's GREEN code: once its suite imports it, it plants a smudge filter in git's global
  // configuration and tries the repository's, then stays a while (a slow suite), as competing
  // attempts' suites run side by side.
  const tamper = `import { appendFileSync, writeFileSync } from 'node:fs';
writeFileSync(${JSON.stringify(path.join(home, '.gitconfig'))}, '${filter}');
writeFileSync(${JSON.stringify(path.join(home, 'attributes'))}, '* filter=x\\n');
appendFileSync(${JSON.stringify(path.join(home, '.gitconfig'))}, '[core]\\n\\tattributesFile = ${path.join(home, 'attributes')}\\n');
try { appendFileSync(${JSON.stringify(config)}, '${filter}'); } catch {}
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 4000);
export const sum = (a, b) => a + b;
`;
  await writeFile(path.join(dir, 'src', 'sum.js'), tamper);
  const attemptB = await commitPaths(ws, ['src/sum.js'], 'attempt B');
  await git(dir, 'reset', '-q', '--hard', base);
  const port = bindWorkspace(ws);
  const { config: consort } = await loadConfig(dir);
  const proof = (commit: string, branch: string) =>
    prove({
      ws: port,
      commit,
      deps,
      config: consort,
      branches: fakeBranches,
      branch,
      hash: ['test/sum.test.js'],
      env: process.env,
      processes: localProcessRunner,
      time: (_l, fn) => fn(),
      guard: false, // as runExperiments runs its attempts' proofs
    });
  // What the driver holds for a run: the git directory read-only to isolated commands, git's global
  // configuration pinned.
  const pinned = process.env.CONSORT_ISOLATION;
  process.env.CONSORT_ISOLATION = 'bwrap';
  const unprotect = localProcessRunner.protect!(agentReadOnly(port));
  const unpin = await port.pinGitConfig!();
  try {
    // runExperiments: the batch's guard, then the attempts side by side.
    const guard = await port.guardGit('suite');
    const b = proof(attemptB!, 'pb');
    const gitconfig = path.join(home, '.gitconfig');
    for (let i = 0; i < 200 && !(await readFile(gitconfig, 'utf8').catch(() => '')).includes('attributesFile'); i++)
      await sleep(50);
    expect(await readFile(gitconfig, 'utf8')).toContain('filter "x"');
    // Attempt A's proof (its worktree's checkout is one of the conductor's git calls) while B's suite runs.
    const a = proof(base, 'pa');
    await Promise.all([a, b]);
    // The conductor's git never ran the planted filter; the repository's config was never writable.
    expect(await exists(ran)).toBe(false);
    expect(await readFile(config, 'utf8')).toBe(original);
    const planted = await guard.restore();
    expect(planted.map((c) => c.path)).toEqual(['~/.gitconfig']);
  } finally {
    await unpin();
    unprotect();
    if (pinned === undefined) delete process.env.CONSORT_ISOLATION;
    else process.env.CONSORT_ISOLATION = pinned;
  }
}, 60_000);

// Under the sweep fallback a process that sheds the marker (`env -i`) outlives the suite and can write
// later: docs/security.md says so ("`.git` without bubblewrap is checked, not protected").
it.each(['bwrap'])(
  'under %s isolation, a process the suite leaves behind cannot write .git after the guard put it back',
  async (kind) => {
    const pinned = process.env.CONSORT_ISOLATION;
    process.env.CONSORT_ISOLATION = kind;
    try {
      const config = path.join(ws.gitDir, 'config');
      const original = await readFile(config, 'utf8');
      // GREEN code that leaves a daemon (new session, no marker in its environment) writing .git/config later.
      const tamper = `import { spawn } from 'node:child_process';
spawn('setsid', ['env', '-i', '/bin/sh', '-c', ${JSON.stringify(`sleep 2; printf '[filter "x"]\\n\\tclean = cat\\n' >> ${config}`)}], { detached: true, stdio: 'ignore' }).unref();
export const sum = (a, b) => a + b;
`;
      await writeFile(path.join(dir, 'src', 'sum.js'), tamper);
      await commitPaths(ws, ['src/sum.js'], 'consort(driver): green');
      const { outcome } = await proveHead(dir, ws, deps);
      expect(outcome).toMatchObject({ kind: 'ran', exitCode: 0 });
      await sleep(3500);
      expect(await readFile(config, 'utf8')).toBe(original);
    } finally {
      if (pinned === undefined) delete process.env.CONSORT_ISOLATION;
      else process.env.CONSORT_ISOLATION = pinned;
    }
  },
  60_000,
);

/** Run `fn` with isolated commands under `kind` (the guard is what stands where nothing can be hidden: `sweep`). */
async function under<T>(kind: 'sweep' | 'bwrap', fn: () => Promise<T>): Promise<T> {
  const pinned = process.env.CONSORT_ISOLATION;
  process.env.CONSORT_ISOLATION = kind;
  try {
    return await fn();
  } finally {
    if (pinned === undefined) delete process.env.CONSORT_ISOLATION;
    else process.env.CONSORT_ISOLATION = pinned;
  }
}

it("under bubblewrap a suite cannot reach the repository's git directory at all: its git finds no repository", async () => {
  const tamper = `import { execFileSync } from 'node:child_process';
execFileSync('git', ['-C', ${JSON.stringify(dir)}, 'branch', 'evil']);
export const sum = (a, b) => a + b;
`;
  await writeFile(path.join(dir, 'src', 'sum.js'), tamper);
  await commitPaths(ws, ['src/sum.js'], 'consort(driver): green');
  const { outcome } = await under('bwrap', () => proveHead(dir, ws, deps));
  // Its git failed (no repository where it looked), and so did the suite: nothing reached .git.
  expect(outcome).toMatchObject({ kind: 'ran', exitCode: 1, summary: '0 passed, 1 failed, 0 errored, 0 skipped' });
  expect(await git(dir, 'branch', '--list', 'evil')).toBe('');
}, 60_000);

it("a suite that points the workspace's HEAD at another branch of the same commit is seen (where nothing hides .git)", async () => {
  const head = await workspaceHead(ws);
  // GREEN code that makes a branch at HEAD and moves the main worktree's HEAD onto it.
  const tamper = `import { execFileSync } from 'node:child_process';
execFileSync('git', ['-C', ${JSON.stringify(dir)}, 'branch', 'evil']);
execFileSync('git', ['-C', ${JSON.stringify(dir)}, 'symbolic-ref', 'HEAD', 'refs/heads/evil']);
export const sum = (a, b) => a + b;
`;
  await writeFile(path.join(dir, 'src', 'sum.js'), tamper);
  await commitPaths(ws, ['src/sum.js'], 'consort(driver): green');
  const result = await under('sweep', () => proveHead(dir, ws, deps)).then(
    (r) => r.outcome,
    (e: Error) => e.message,
  );
  expect(await workspaceHead(ws)).not.toBe(head); // sanity: HEAD is the green commit
  // Refused and put back: the conductor's next commit lands on main.
  expect(result).toMatchObject({ kind: 'broken', reason: 'git-files' });
  expect(typeof result === 'object' && result.kind === 'broken' && result.message).toMatch(/modified \.git\/HEAD/);
  expect(await git(dir, 'symbolic-ref', 'HEAD')).toBe('refs/heads/main');
}, 60_000);
