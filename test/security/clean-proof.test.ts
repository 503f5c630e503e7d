/**
 * Proofs judge what is committed, in a place the agent never touched. Each cheat below worked
 * against a proof run in the agent's own work tree; here each is played against `prove` and the
 * git layer the conductor uses:
 *
 * - a patched, ignored dependency (the suite's runner rewritten to report green);
 * - an edited test hidden behind `skip-worktree`;
 * - a planted report (future mtime) next to a suite that writes none, and a committed one;
 * - a planted `.git/hooks/pre-commit` and an `include.path` added to `.git/config`.
 *
 * The suite is node:test behind a tiny runner in node_modules/ (what jest is to a real project);
 * the database is not what these cheats aim at, so the proof's branch is a fixed URL.
 */
import { chmod, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkScope } from '../../src/conductor/scope.js';
import { restoreGit, snapshotGit } from '../../src/git/guard.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import {
  changesSince,
  commitPaths,
  workspaceHead,
  openWorkspace,
  settleRemovals,
  type GitWorkspace,
} from '../../src/git/workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { exists, git, PATCHED_RUNNER, FORGED, proveHead, RUNNER, SUM_TEST, sumRepo } from '../helpers/sum-repo.js';
import { policy } from '../conductor/fixtures.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;

let dir: string;
let ws: GitWorkspace;
let deps: Dependencies;

async function repo(suiteCommand = 'node node_modules/runner/run.mjs'): Promise<void> {
  dir = await sumRepo('consort-clean-', { suiteCommand });
  ws = await openWorkspace(dir);
  deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
}

const proveAtHead = () => proveHead(dir, ws, deps);

afterEach(async () => {
  await deps?.dispose();
  await rm(dir, { recursive: true, force: true });
});

it('a patched ignored dependency does not reach the proof: it runs the install copied before the turn', async () => {
  await repo();
  await writeFile(path.join(dir, 'node_modules', 'runner', 'run.mjs'), PATCHED_RUNNER);
  // The attack is real: in the agent's own tree the patched runner "passes".
  await exec(process.execPath, ['node_modules/runner/run.mjs'], { cwd: dir });
  expect(await readFile(path.join(dir, 'junit.xml'), 'utf8')).toBe(FORGED);
  const { outcome } = await proveAtHead();
  expect(outcome).toMatchObject({ kind: 'ran', exitCode: 1 });
  expect(outcome.kind === 'ran' && outcome.tests.map((t) => `${t.id} ${t.state}`)).toEqual(['test::adds failed']);
}, 60_000);

describe.each(['bwrap', 'sweep'])('dependencies under %s isolation', (kind) => {
  const pinned = process.env.CONSORT_ISOLATION;
  beforeAll(() => {
    process.env.CONSORT_ISOLATION = kind;
  });
  afterAll(() => {
    if (pinned === undefined) delete process.env.CONSORT_ISOLATION;
    else process.env.CONSORT_ISOLATION = pinned;
  });

  it("the pristine copy and each proof's copy are read-only; code a proof ran that rewrites its dependencies cannot reach the next proof", async () => {
    await repo();
    const pristine = deps.links.get('node_modules')!;
    expect((await stat(path.join(pristine, 'runner', 'run.mjs'))).mode & 0o222).toBe(0);
    expect((await stat(pristine)).mode & 0o222).toBe(0);
    // GREEN code that, once the suite imports it, rewrites the test runner it finds in node_modules
    // and says (outside the tree) whether it could.
    const said = path.join(os.tmpdir(), `consort-tamper-${path.basename(dir)}`);
    const tamper = `import { writeFileSync } from 'node:fs';\nlet outcome = 'written';\ntry { writeFileSync('node_modules/runner/run.mjs', ${JSON.stringify(PATCHED_RUNNER)}); } catch (e) { outcome = e.code; }\nwriteFileSync(${JSON.stringify(said)}, outcome);\nexport const sum = (a, b) => a + b;\n`;
    await writeFile(path.join(dir, 'src', 'sum.js'), tamper);
    await commitPaths(ws, ['src/sum.js'], 'consort(driver): green');
    expect((await proveAtHead()).outcome).toMatchObject({ kind: 'ran', exitCode: 0 });
    // Bound read-only under bubblewrap (root included); elsewhere only the modes stop it, which root ignores.
    const refused = kind === 'bwrap' || process.getuid?.() !== 0;
    expect(await readFile(said, 'utf8')).toBe(refused ? (kind === 'bwrap' ? 'EROFS' : 'EACCES') : 'written');
    await rm(said, { force: true });
    // The bug comes back; the next proof must see it, whatever the last one's code did to its runner.
    await writeFile(path.join(dir, 'src', 'sum.js'), 'export const sum = (a, b) => a - b;\n');
    await commitPaths(ws, ['src/sum.js'], 'consort(driver): refactor');
    const { outcome } = await proveAtHead();
    expect(outcome.kind === 'ran' && outcome.tests.map((t) => `${t.id} ${t.state}`)).toEqual(['test::adds failed']);
    expect(await readFile(path.join(pristine, 'runner', 'run.mjs'), 'utf8')).toBe(RUNNER);
  }, 60_000);
});

it.each(['--skip-worktree', '--assume-unchanged'])(
  'an edited test behind %s is seen by the scope check, and the proof runs the committed test',
  async (flag) => {
    await repo();
    const base = await workspaceHead(ws);
    await git(dir, 'update-index', flag, 'test/sum.test.js');
    await writeFile(
      path.join(dir, 'test', 'sum.test.js'),
      SUM_TEST.replace('assert.equal(sum(1, 2), 3)', 'assert.ok(true)'),
    );
    expect(await git(dir, 'status', '--porcelain')).toBe(''); // hidden from git status
    const changes = await changesSince(ws, base);
    expect(changes).toEqual([{ path: 'test/sum.test.js', status: 'modified' }]);
    const refused = checkScope({
      policy: policy(),
      role: 'driver',
      step: 'green',
      item: 'T1',
      changes,
      frozen: { 'test/sum.test.js': 'h' },
      hashes: {},
    });
    expect(refused.map((r) => r.path)).toEqual(['test/sum.test.js']);
    const { outcome } = await proveAtHead();
    expect(outcome.kind === 'ran' && outcome.tests.map((t) => t.state)).toEqual(['failed']);
  },
  60_000,
);

it('a planted report with a future mtime, or a committed one, is not read: report paths are emptied first', async () => {
  await repo('node -e 0');
  const planted = path.join(dir, 'junit.xml');
  await writeFile(planted, FORGED);
  const future = new Date(Date.now() + 3_600_000);
  await utimes(planted, future, future);
  expect((await proveAtHead()).outcome).toMatchObject({ kind: 'broken', reason: 'no-report' });
  await git(dir, 'add', '-f', 'junit.xml');
  await git(dir, 'commit', '-qm', 'a report in the tree');
  expect((await proveAtHead()).outcome).toMatchObject({ kind: 'broken', reason: 'no-report' });
}, 60_000);

it("a planted hook never runs in the conductor's git calls, and .git is put back after the turn (and refused)", async () => {
  await repo();
  const before = await snapshotGit(ws);
  const ran = path.join(dir, '..', `${path.basename(dir)}-hook-ran`);
  for (const hook of ['pre-commit', 'commit-msg', 'post-commit', 'post-checkout', 'reference-transaction']) {
    await writeFile(path.join(ws.gitDir, 'hooks', hook), `#!/bin/sh\necho ${hook} >> ${ran}\n`);
    await chmod(path.join(ws.gitDir, 'hooks', hook), 0o755);
  }
  const config = path.join(ws.gitDir, 'config');
  const original = await readFile(config, 'utf8');
  await writeFile(
    config,
    `${original}[include]\n\tpath = /tmp/agent-config\n[core]\n\tfsmonitor = /tmp/agent-fsmonitor\n`,
  );
  // The conductor's own commit (and the proof's worktree checkout) with the hooks in place: none runs.
  await writeFile(path.join(dir, 'src', 'sum.js'), 'export const sum = (a, b) => a + b;\n');
  expect(await commitPaths(ws, ['src/sum.js'], 'consort(driver): green')).toMatch(/^[0-9a-f]{40}$/);
  expect((await proveAtHead()).outcome).toMatchObject({ kind: 'ran', exitCode: 0 });
  expect(await exists(ran)).toBe(false);
  // After the turn: put back, and reported as the turn's change, which the scope check refuses.
  const changes = await restoreGit(ws, before);
  expect(changes.map((c) => `${c.status} ${c.path}`)).toEqual(
    expect.arrayContaining(['added .git/hooks/pre-commit', 'modified .git/config']),
  );
  expect(await readFile(config, 'utf8')).toBe(original);
  expect(await exists(path.join(ws.gitDir, 'hooks', 'pre-commit'))).toBe(false);
  const refused = checkScope({
    policy: policy(),
    role: 'driver',
    step: 'green',
    item: 'T1',
    changes,
    frozen: {},
    hashes: {},
  });
  expect(refused.map((r) => r.path)).toEqual(changes.map((c) => c.path));
  await rm(ran, { force: true });
}, 60_000);

it("a suite that writes git's own files (a clean filter in .git/config, ~/.gitconfig, an index flag) is judged broken, and they are put back before the conductor's next git call (where nothing hides .git)", async () => {
  const home = await mkdtemp(path.join(os.tmpdir(), 'consort-suite-home-'));
  const pinned = process.env.HOME;
  process.env.HOME = home;
  // Under bubblewrap the suite sees no .git at all (suite-git-race.test.ts): the guard is what stands elsewhere.
  const isolation = process.env.CONSORT_ISOLATION;
  process.env.CONSORT_ISOLATION = 'sweep';
  try {
    await repo();
    const config = path.join(ws.gitDir, 'config');
    const original = await readFile(config, 'utf8');
    const ran = path.join(home, 'filter-ran');
    // GREEN code that, once the suite imports it, plants a clean filter the conductor's next `git add`
    // would run (outside any sandbox), a global config, and a flag hiding src/sum.js from git status.
    const tamper = `import { appendFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
appendFileSync(${JSON.stringify(config)}, '[filter "x"]\\n\\tclean = tee ${ran}\\n');
writeFileSync(${JSON.stringify(path.join(ws.gitDir, 'info', 'attributes'))}, '* filter=x\\n');
writeFileSync(${JSON.stringify(path.join(home, '.gitconfig'))}, '[core]\\n\\tpager = cat\\n');
execFileSync('git', ['-C', ${JSON.stringify(dir)}, 'update-index', '--skip-worktree', 'src/sum.js']);
export const sum = (a, b) => a + b;
`;
    await writeFile(path.join(dir, 'src', 'sum.js'), tamper);
    await commitPaths(ws, ['src/sum.js'], 'consort(driver): green');
    const { outcome } = await proveAtHead();
    // The suite's own git (update-index, sandboxed with the suite) may run the filter it planted: not the conductor's.
    await rm(ran, { force: true });
    expect(outcome).toMatchObject({ kind: 'broken', reason: 'git-files' });
    expect(outcome.kind === 'broken' && outcome.message).toMatch(
      /modified \.git\/config.*modified \.git\/index.*added \.git\/info\/attributes.*added ~\/\.gitconfig/,
    );
    expect(await readFile(config, 'utf8')).toBe(original);
    expect(await exists(path.join(ws.gitDir, 'info', 'attributes'))).toBe(false);
    expect(await exists(path.join(home, '.gitconfig'))).toBe(false);
    expect(await git(dir, 'ls-files', '-v', 'src/sum.js')).toBe('H src/sum.js');
    // The conductor's next commit runs no filter the suite planted.
    await writeFile(path.join(dir, 'src', 'sum.js'), 'export const sum = (a, b) => b + a;\n');
    expect(await commitPaths(ws, ['src/sum.js'], 'consort(driver): refactor')).toMatch(/^[0-9a-f]{40}$/);
    expect(await exists(ran)).toBe(false);
  } finally {
    if (isolation === undefined) delete process.env.CONSORT_ISOLATION;
    else process.env.CONSORT_ISOLATION = isolation;
    process.env.HOME = pinned;
    await rm(home, { recursive: true, force: true });
  }
}, 60_000);

/**
 * What a proof leaves next to the repository: worktree folders and their registrations, once the
 * folders' removal in the background is done (a run waits for it at its end, Workspace.settle).
 */
async function proofLeftovers(): Promise<string[]> {
  await settleRemovals(ws);
  const folders = (await readdir(path.dirname(dir))).filter((f) =>
    f.startsWith(`${path.basename(dir)}-consort-proof-`),
  );
  const registered = (await git(dir, 'worktree', 'list', '--porcelain'))
    .split('\n')
    .filter((l) => l.startsWith('worktree ') && l.includes('-consort-proof-'));
  const admin = await readdir(path.join(dir, '.git', 'worktrees')).catch(() => [] as string[]);
  return [...folders, ...registered, ...admin.filter((a) => a.includes('-consort-proof-'))];
}

it.each([
  ["the repository's own git directory", () => path.join(dir, '.git')],
  ["another worktree's registration", () => path.join(dir, '.git', 'worktrees', `${path.basename(dir)}-other`)],
])(
  "a proof's worktree goes with its registration; a .git file its suite pointed at %s removes nothing else",
  async (_what, target) => {
    await repo('node tamper.mjs');
    expect((await proveAtHead()).outcome).toMatchObject({ kind: 'broken', reason: 'no-report' });
    expect(await proofLeftovers()).toEqual([]);
    // An experiment's worktree, that must outlive the proof.
    const other = `${dir}-other`;
    await git(dir, 'worktree', 'add', '--detach', '-q', other, 'HEAD');
    expect(await readdir(path.join(dir, '.git', 'worktrees'))).toEqual([path.basename(other)]);
    // GREEN code that rewrites the proof's `.git` file, as a suite can.
    await writeFile(
      path.join(dir, 'tamper.mjs'),
      `import { writeFileSync } from 'node:fs';\nwriteFileSync('.git', ${JSON.stringify(`gitdir: ${target()}\n`)});\n`,
    );
    await commitPaths(ws, ['tamper.mjs'], 'consort(driver): green');
    expect((await proveAtHead()).outcome).toMatchObject({ kind: 'broken', reason: 'no-report' });
    expect(await proofLeftovers()).toEqual([]);
    expect(await git(dir, 'status', '--porcelain')).toBe('');
    expect(await git(dir, 'rev-parse', 'HEAD')).toBe(await workspaceHead(ws));
    expect(await git(other, 'rev-parse', '--show-toplevel')).toBe(other);
    await git(dir, 'worktree', 'remove', '--force', other);
  },
  60_000,
);
