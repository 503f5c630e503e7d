/**
 * A proof's tree may be prepared while the agent's turn runs (src/lanes/tdd/clean-tree.ts,
 * proofTrees): a worktree of the turn's base, next to the repository, where the agent could write.
 * It is used only if nothing touched it since it was made and checked, and only once. Each case
 * below tampers with a prepared tree as an agent could (a rewritten test with its mtime set back, a
 * planted file, an index flag, edits while it is being made) and expects the proof to run the
 * committed code anyway, in a fresh tree.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config/load.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { commitPaths, openWorkspace, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import {
  proofTrees,
  snapshotDependencies,
  type Dependencies,
  type ProofTrees,
} from '../../src/lanes/tdd/clean-tree.js';
import { prove } from '../../src/lanes/tdd/proof.js';
import type { Workspace } from '../../src/ports/workspace.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { exists, fakeBranches, git, SUM_TEST, sumRepo, testStates } from '../helpers/sum-repo.js';

const exec = promisify(execFile);

let dir: string;
let ws: GitWorkspace;
let port: Workspace;
let deps: Dependencies;
let trees: ProofTrees;
/** The folder each proof's suite ran in (its working directory). */
let ranIn: string[];

beforeEach(async () => {
  // The suite says where it ran (next to the repository), then runs the runner as usual.
  dir = await sumRepo('consort-prepared-', {
    before: (at) =>
      writeFile(
        path.join(at, '.github', 'consort.yml'),
        `suite:\n  command: pwd >> ../ran-in-${path.basename(at)}; node node_modules/runner/run.mjs\n  reports: junit.xml\nmigrations:\n  dir: migrations\n`,
      ),
  });
  ws = await openWorkspace(dir);
  port = bindWorkspace(ws);
  deps = await snapshotDependencies(port, localProcessRunner);
  trees = proofTrees(port, deps, localProcessRunner)!;
  ranIn = [];
});

afterEach(async () => {
  await trees.dispose();
  await deps.dispose();
  await rm(dir, { recursive: true, force: true });
  await rm(path.join(path.dirname(dir), `ran-in-${path.basename(dir)}`), { force: true });
});

async function proveHead(): Promise<ReturnType<typeof testStates>> {
  const { config } = await loadConfig(dir);
  const result = await prove({
    ws: port,
    commit: await workspaceHead(ws),
    deps,
    trees,
    config,
    branches: fakeBranches,
    branch: 'p',
    hash: ['test/sum.test.js'],
    env: process.env,
    processes: localProcessRunner,
    time: (_label, fn) => fn(),
  });
  const log = path.join(path.dirname(dir), `ran-in-${path.basename(dir)}`);
  ranIn = (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  await rm(log, { force: true });
  return testStates(result);
}

/** Proof worktrees left next to the repository, and their registrations. */
async function leftovers(): Promise<string[]> {
  const folders = (await readdir(path.dirname(dir))).filter((f) =>
    f.startsWith(`${path.basename(dir)}-consort-proof-`),
  );
  const admin = await readdir(path.join(dir, '.git', 'worktrees')).catch(() => [] as string[]);
  return [...folders, ...admin];
}

/** Until the prepared tree at `at` holds `file` (it is being made in the background). */
async function madeFile(at: string, file: string): Promise<void> {
  for (let i = 0; i < 400 && !(await exists(path.join(at, file))); i++) await new Promise((r) => setTimeout(r, 5));
}

/** Prepare a tree at HEAD, then commit the fix (GREEN) in the workspace. */
async function prepareThenFix(): Promise<string> {
  const prepared = trees.prepare(await workspaceHead(ws));
  await writeFile(path.join(dir, 'src', 'sum.js'), 'export const sum = (a, b) => a + b;\n');
  await commitPaths(ws, ['src/sum.js'], 'consort(driver): green');
  return prepared;
}

it("an untouched prepared tree is brought to the proven commit and used once: the turn's change, nothing else", async () => {
  const prepared = await prepareThenFix();
  expect(await proveHead()).toEqual(['test::adds passed']);
  expect(ranIn).toEqual([prepared]);
  // The suite ran in it: it is gone, with its registration; the next proof gets a fresh tree.
  expect(await leftovers()).toEqual([]);
  await writeFile(path.join(dir, 'src', 'sum.js'), 'export const sum = (a, b) => a - b;\n');
  await commitPaths(ws, ['src/sum.js'], 'consort(driver): refactor');
  expect(await proveHead()).toEqual(['test::adds failed']);
  expect(ranIn).toHaveLength(1);
  expect(ranIn[0]).not.toBe(prepared);
  expect(await leftovers()).toEqual([]);
}, 60_000);

it('a prepared tree is prepared once until a proof takes it, and dispose removes one no proof took', async () => {
  const head = await workspaceHead(ws);
  const prepared = trees.prepare(head);
  expect(trees.prepare(head)).toBe(prepared);
  await madeFile(prepared, 'src/sum.js');
  await trees.dispose();
  expect(await leftovers()).toEqual([]);
}, 60_000);

describe('a prepared tree an agent touched is never used: the proof runs the committed code in a fresh tree', () => {
  // The base has the bug and its test; the tampering makes a prepared tree pass where the commit fails.
  const passing = SUM_TEST.replace('assert.equal(sum(1, 2), 3)', 'assert.ok(true)');

  it.each([
    [
      'a test rewritten at the same size, its times set back',
      async (at: string) => {
        const file = path.join(at, 'test', 'sum.test.js');
        const before = await stat(file, { bigint: true });
        const padded = passing.padEnd(SUM_TEST.length - 1, ' ') + '\n';
        expect(padded.length).toBe(SUM_TEST.length);
        await writeFile(file, padded);
        // To the nanosecond: only the change time (which no unprivileged process sets) differs.
        const ns = (t: bigint) => `@${t / 1_000_000_000n}.${String(t % 1_000_000_000n).padStart(9, '0')}`;
        await exec('touch', ['-m', '-d', ns(before.mtimeNs), file]);
        const after = await stat(file, { bigint: true });
        expect([after.ino, after.size, after.mtimeNs]).toEqual([before.ino, before.size, before.mtimeNs]);
      },
    ],
    [
      'the code under test rewritten',
      (at: string) => writeFile(path.join(at, 'src', 'sum.js'), 'export const sum = () => 3;\n'),
    ],
    [
      'a file planted (an ignored one)',
      async (at: string) => {
        await writeFile(path.join(at, 'src', 'local.js'), 'export {};\n');
      },
    ],
    [
      'an index flag set and the test edited behind it',
      async (at: string) => {
        await git(at, 'update-index', '--skip-worktree', 'test/sum.test.js');
        await writeFile(path.join(at, 'test', 'sum.test.js'), passing);
      },
    ],
    [
      'its HEAD moved to another commit',
      async (at: string) => {
        await writeFile(path.join(at, 'src', 'sum.js'), 'export const sum = () => 3;\n');
        await git(at, 'commit', '-qam', 'planted');
      },
    ],
  ])(
    '%s (after it was made)',
    async (_what, tamper) => {
      const prepared = trees.prepare(await workspaceHead(ws));
      await madeFile(prepared, 'test/sum.test.js');
      // Made and checked (the background work settles in well under a second here).
      await new Promise((r) => setTimeout(r, 1500));
      await tamper(prepared);
      expect(await proveHead()).toEqual(['test::adds failed']);
      expect(ranIn).toHaveLength(1);
      expect(ranIn[0]).not.toBe(prepared);
      expect(await leftovers()).toEqual([]);
    },
    60_000,
  );

  it('the code under test rewritten while the tree is being made', async () => {
    const prepared = trees.prepare(await workspaceHead(ws));
    await madeFile(prepared, 'src/sum.js');
    await writeFile(path.join(prepared, 'src', 'sum.js'), 'export const sum = () => 3;\n').catch(() => undefined);
    // Whether the edit landed before git wrote the file (then git's content is what is there) or
    // after: the proof runs the committed code.
    expect(await proveHead()).toEqual(['test::adds failed']);
    expect(await leftovers()).toEqual([]);
  }, 60_000);

  it("the turn's change to a file an agent also edited in the prepared tree", async () => {
    const prepared = await prepareThenFix();
    await madeFile(prepared, 'src/sum.js');
    await new Promise((r) => setTimeout(r, 1500));
    await writeFile(path.join(prepared, 'test', 'sum.test.js'), SUM_TEST.replace('3)', '4)'));
    expect(await proveHead()).toEqual(['test::adds passed']);
    expect(ranIn[0]).not.toBe(prepared);
    expect(await leftovers()).toEqual([]);
  }, 60_000);
});
