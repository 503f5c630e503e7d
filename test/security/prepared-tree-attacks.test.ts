/**
 * More attacks on a proof tree prepared while the agent's turn runs (src/lanes/tdd/clean-tree.ts,
 * proofTrees), each played as an agent with a shell could during its turn, next to
 * prepared-tree.test.ts: what an identity check (inode, size, times) cannot see — a file rewritten
 * through a shared memory map, which changes no time; the dependency copy linked into the tree,
 * behind a symlink the check does not follow — and what one checkout does not do that a fresh
 * checkout does (apply a `.gitattributes` the turn added to the files it left unchanged). Each
 * expects the proof to judge what is committed, as a fresh tree of the commit would.
 */
import { spawn } from 'node:child_process';
import { chmod, link, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
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
import { exists, fakeBranches, PATCHED_RUNNER, SUM_TEST, sumRepo, testStates } from '../helpers/sum-repo.js';

let dir: string;
let ws: GitWorkspace;
let port: Workspace;
let deps: Dependencies;
let trees: ProofTrees;
/** The folder each proof's suite ran in (its working directory). */
let ranIn: string[];

beforeEach(async () => {
  dir = await sumRepo('consort-prepared-attack-', {
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

async function proveHead(useTrees = true): Promise<ReturnType<typeof testStates>> {
  const { config } = await loadConfig(dir);
  const result = await prove({
    ws: port,
    commit: await workspaceHead(ws),
    deps,
    ...(useTrees ? { trees } : {}),
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

/** Proof worktrees (and their dependency copies) left next to the repository, and their registrations. */
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

// The base has the bug and its test; each tampering would make the prepared tree pass where the commit fails.
const passing =
  SUM_TEST.replace('assert.equal(sum(1, 2), 3)', 'assert.ok(true)').padEnd(SUM_TEST.length - 1, ' ') + '\n';

it('a test rewritten through a shared memory map (no time changes) after the tree was checked', async () => {
  expect(passing.length).toBe(SUM_TEST.length);
  // The agent watches for a prepared tree next to the repository, maps its test as soon as git wrote
  // it and dirties the page with the same bytes (the one time update a mapping makes); once the
  // tree has been checked it writes the weakened test through the mapping: no time changes again.
  const agent = spawn(
    'python3',
    [
      '-c',
      [
        'import glob, mmap, os, sys, time',
        'print("watching", flush=True)',
        'while True:',
        '    found = glob.glob(sys.argv[1] + "-consort-proof-*/test/sum.test.js")',
        '    if found and os.path.getsize(found[0]) > 0: break',
        '    time.sleep(0.0005)',
        'fd = os.open(found[0], os.O_RDWR)',
        'm = mmap.mmap(fd, 0)',
        'm[0:1] = m[0:1]',
        'time.sleep(0.8)',
        'm[:] = sys.argv[2].encode()',
        'm.close()',
        'print(found[0])',
      ].join('\n'),
      dir,
      passing,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  const watching = new Promise<void>((resolve) =>
    agent.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.startsWith('watching\n')) resolve();
    }),
  );
  const exited = new Promise((resolve) => agent.on('exit', resolve));
  await watching;
  const prepared = trees.prepare(await workspaceHead(ws));
  expect(await exited).toBe(0);
  const file = path.join(prepared, 'test', 'sum.test.js');
  expect(out).toBe(`watching\n${file}\n`);
  expect(await readFile(file, 'utf8')).toBe(passing);
  expect(await proveHead()).toEqual(['test::adds failed']);
  expect(await leftovers()).toEqual([]);
}, 60_000);

it("the prepared tree's dependency copy patched, or planted where it will be made", async () => {
  const prepared = trees.prepare(await workspaceHead(ws));
  await madeFile(prepared, 'test/sum.test.js');
  await new Promise((r) => setTimeout(r, 1500));
  // Its owner can make a copy made ahead writable again; where there is none yet, the agent makes
  // the folder the proof would copy the pristine install into, with its own runner in it.
  const runner = path.join(`${prepared}-deps`, 'node_modules', 'runner');
  for (const d of [`${prepared}-deps`, path.dirname(runner), runner]) await chmod(d, 0o755).catch(() => mkdir(d));
  await chmod(path.join(runner, 'run.mjs'), 0o644).catch(() => undefined);
  await writeFile(path.join(runner, 'run.mjs'), PATCHED_RUNNER);
  expect(await proveHead()).toEqual(['test::adds failed']);
  await rm(`${prepared}-deps`, { recursive: true, force: true });
  expect(await leftovers()).toEqual([]);
}, 60_000);

it('a .gitattributes the turn adds applies to the files it left unchanged, as in a fresh checkout', async () => {
  // The driver's commit fixes the bug and declares the (unchanged) test UTF-16: a fresh checkout of
  // the commit writes it as UTF-16, which node cannot run; a checkout from the base leaves it as it was.
  const prepared = trees.prepare(await workspaceHead(ws));
  await madeFile(prepared, 'test/sum.test.js');
  await writeFile(path.join(dir, 'src', 'sum.js'), 'export const sum = (a, b) => a + b;\n');
  await writeFile(path.join(dir, '.gitattributes'), 'test/sum.test.js working-tree-encoding=UTF-16LE\n');
  await commitPaths(ws, ['src/sum.js', '.gitattributes'], 'consort(driver): green');
  const fresh = await proveHead(false);
  expect(fresh).toHaveLength(1);
  expect(fresh[0]).toMatch(/ failed$/);
  const proven = await proveHead();
  expect(ranIn).toHaveLength(1);
  expect(ranIn[0]).not.toBe(prepared);
  // The same failure, named after the tree it ran in.
  expect(proven).toEqual([fresh[0]!.replace(/[^/]+-consort-proof-[0-9a-f]+/, path.basename(ranIn[0]!))]);
  expect(await leftovers()).toEqual([]);
}, 60_000);

it('an honest turn still gets its prepared tree', async () => {
  const prepared = trees.prepare(await workspaceHead(ws));
  await writeFile(path.join(dir, 'src', 'sum.js'), 'export const sum = (a, b) => a + b;\n');
  await commitPaths(ws, ['src/sum.js'], 'consort(driver): green');
  expect(await proveHead()).toEqual(['test::adds passed']);
  expect(ranIn).toEqual([prepared]);
  expect(await leftovers()).toEqual([]);
}, 60_000);

describe('more tampering, caught', () => {
  const outside = () => path.join(path.dirname(dir), `outside-${path.basename(dir)}`);
  afterEach(() => rm(outside(), { recursive: true, force: true }));

  it.each([
    [
      'a hard link to the test made as the tree appears, written through once it was checked',
      async (at: string, checked: Promise<void>) => {
        await mkdir(outside());
        await link(path.join(at, 'test', 'sum.test.js'), path.join(outside(), 'sum.test.js'));
        await checked;
        await writeFile(path.join(outside(), 'sum.test.js'), passing);
      },
    ],
    [
      'the test folder swapped for a symlink to a weakened copy',
      async (at: string, checked: Promise<void>) => {
        await checked;
        await mkdir(outside());
        await writeFile(path.join(outside(), 'sum.test.js'), passing.replace('../src/sum.js', `${at}/src/sum.js`));
        await rm(path.join(at, 'test'), { recursive: true });
        await symlink(outside(), path.join(at, 'test'));
      },
    ],
    [
      'a case variant of the test planted next to it',
      async (at: string, checked: Promise<void>) => {
        await checked;
        await writeFile(path.join(at, 'test', 'Sum.test.js'), passing);
        await writeFile(path.join(at, 'test', 'sum.test.js'), passing);
      },
    ],
  ])(
    '%s',
    async (_what, tamper) => {
      const prepared = trees.prepare(await workspaceHead(ws));
      await madeFile(prepared, 'test/sum.test.js');
      await tamper(prepared, new Promise((r) => setTimeout(r, 1500)));
      expect(await proveHead()).toEqual(['test::adds failed']);
      expect(ranIn[0]).not.toBe(prepared);
      expect(await leftovers()).toEqual([]);
    },
    60_000,
  );
});
