/**
 * The smallest repository a proof can run on, for the tests of what judges a proof
 * (security/clean-proof, git-dir, dependencies): `src/sum.js` with a bug, the test that catches it
 * (node's own test runner), a "runner" package in the ignored `node_modules` that writes JUnit, and
 * no database (the proof's branch is a stand-in that is never connected to).
 */
import { access, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { commandBackend } from '../../src/agents/command.js';
import { loadConfig } from '../../src/config/load.js';
import { bindWorkspace } from '../../src/git/local-workspace.js';
import { openWorkspace, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { snapshotDependencies, type Dependencies } from '../../src/lanes/tdd/clean-tree.js';
import type { Branches } from '../../src/lanes/tdd/database.js';
import { prove } from '../../src/lanes/tdd/proof.js';
import { agentReadOnly } from '../../src/lanes/tdd/turn.js';
import type { Workspace } from '../../src/ports/workspace.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;

/** Plain git, as an agent (or a user) runs it; stdout trimmed. */
export const git = (cwd: string, ...args: string[]): Promise<string> =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd }).then((r) =>
    r.stdout.trim(),
  );

export const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );

/** node_modules/runner/run.mjs: node's test runner, JUnit to junit.xml. */
export const RUNNER = `import { spawnSync } from 'node:child_process';
const r = spawnSync(process.execPath, ['--test', '--test-reporter=junit', '--test-reporter-destination=junit.xml', 'test/'], { stdio: 'inherit' });
process.exit(r.status ?? 1);
`;
/** A JUnit file in which the test passed. */
export const FORGED = `<?xml version="1.0"?><testsuites><testsuite name="sum"><testcase name="adds" classname="test"/></testsuite></testsuites>`;
/** The runner an agent patches in: it runs nothing and writes the forged report. */
export const PATCHED_RUNNER = `import { writeFileSync } from 'node:fs';\nwriteFileSync('junit.xml', ${JSON.stringify(FORGED)});\n`;
/** test/sum.test.js: fails on the committed bug. */
export const SUM_TEST = `import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sum } from '../src/sum.js';
describe('sum', () => { test('adds', () => { assert.equal(sum(1, 2), 3); }); });
`;

/** The proof's branches: a URL nobody connects to (the suite has no database). */
export const fakeBranches = {
  fresh: async () => ({
    url: 'postgresql://nobody:pw@127.0.0.1:1/none',
    migrations: { ok: true, applied: [], log: [] },
  }),
  untrusted: async (_name: string, url: string) => url,
  drop: () => undefined,
} as unknown as Branches;

export interface SumRepoOptions {
  /** suite.command (default: `node node_modules/runner/run.mjs`). */
  suiteCommand?: string;
  /** Also link the runner as node_modules/.bin/runner. */
  binLink?: boolean;
  /** package.json's name (default none). */
  packageName?: string;
  /** More files before the first commit. */
  before?: (dir: string) => Promise<void>;
}

/** A new repository (mkdtemp with `prefix`) holding the sum project, committed on `main`. */
export async function sumRepo(prefix: string, options: SumRepoOptions = {}): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  for (const d of ['src', 'test', 'migrations', '.github', 'node_modules/runner'])
    await mkdir(path.join(dir, d), { recursive: true });
  await writeFile(path.join(dir, 'node_modules', 'runner', 'run.mjs'), RUNNER);
  if (options.binLink) {
    await mkdir(path.join(dir, 'node_modules', '.bin'));
    await symlink('../runner/run.mjs', path.join(dir, 'node_modules', '.bin', 'runner'));
  }
  await writeFile(path.join(dir, '.gitignore'), 'node_modules/\njunit.xml\n');
  await writeFile(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ ...(options.packageName ? { name: options.packageName } : {}), type: 'module' })}\n`,
  );
  await writeFile(path.join(dir, 'src', 'sum.js'), 'export const sum = (a, b) => a - b;\n'); // the bug the test catches
  await writeFile(path.join(dir, 'test', 'sum.test.js'), SUM_TEST);
  await writeFile(path.join(dir, 'migrations', '.keep'), '');
  await writeFile(
    path.join(dir, '.github', 'consort.yml'),
    `suite:\n  command: ${options.suiteCommand ?? 'node node_modules/runner/run.mjs'}\n  reports: junit.xml\nmigrations:\n  dir: migrations\n`,
  );
  await options.before?.(dir);
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
  return dir;
}

/** A sum repository opened as the conductor opens its workspace, with the pristine dependencies' snapshot. */
export interface SumWorkspace {
  dir: string;
  ws: GitWorkspace;
  deps: Dependencies;
  /** The snapshot, the proofs' leftovers beside the repository (`<dir>-consort-…`), the repository. */
  dispose(): Promise<void>;
}

export async function sumWorkspace(prefix: string, options: SumRepoOptions = {}): Promise<SumWorkspace> {
  const dir = await sumRepo(prefix, options);
  const ws = await openWorkspace(dir);
  const deps = await snapshotDependencies(bindWorkspace(ws), localProcessRunner);
  return {
    dir,
    ws,
    deps,
    async dispose() {
      await deps.dispose();
      for (const name of await readdir(path.dirname(dir)))
        if (name.startsWith(`${path.basename(dir)}-consort-`))
          await rm(path.join(path.dirname(dir), name), { recursive: true, force: true });
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Prove the workspace's HEAD with these dependencies, as the conductor does: through `port` (the
 * one a worktree was begun through, as the driver's ctx.ws) and in `tree` when one was begun.
 */
export async function proveHead(
  dir: string,
  ws: GitWorkspace,
  deps: Dependencies,
  {
    port = bindWorkspace(ws),
    tree,
    env = process.env,
  }: { port?: ReturnType<typeof bindWorkspace>; tree?: string; env?: NodeJS.ProcessEnv } = {},
): ReturnType<typeof prove> {
  const { config } = await loadConfig(dir);
  return prove({
    ws: port,
    commit: await workspaceHead(ws),
    deps,
    config,
    branches: fakeBranches,
    branch: 'p',
    hash: ['test/sum.test.js'],
    ...(tree ? { tree } : {}),
    env,
    processes: localProcessRunner,
    time: (_l, fn) => fn(),
  });
}

/** `<id> <state>` of every test the proof ran, or the outcome's kind when it ran none. */
export function testStates(result: Awaited<ReturnType<typeof prove>>): string[] {
  const { outcome } = result;
  return outcome.kind === 'ran' ? outcome.tests.map((t) => `${t.id} ${t.state}`) : [outcome.kind];
}

/** The driver's GREEN turn for T1 on the sum repository, by a `command` agent, under the lane's read-only binds. */
export function driverGreenTurn(
  dir: string,
  port: Pick<Workspace, 'gitDir' | 'top'>,
  deps: Dependencies,
  command: string,
): ReturnType<ReturnType<typeof commandBackend>['runTurn']> {
  return commandBackend({ command }).runTurn({
    role: 'driver',
    step: 'green',
    feature: '001-sum',
    item: 'T1',
    instructions: '',
    workspace: dir,
    writes: ['src/**'],
    contextPack: { pack: {} as never, json: '{}', markdown: '# driver: green' },
    branchUrl: 'postgresql://agent:pw@127.0.0.1:1/none',
    readOnly: agentReadOnly(port, deps),
    model: null,
    budget: { timeoutMs: 30_000 },
  });
}
