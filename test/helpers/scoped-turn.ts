/**
 * A scripted `command` agent's turn in a workspace, then the scope check as the conductor runs it
 * after a turn (src/lanes/tdd/turn.ts): what it refuses, as `path: why`. For the security tests
 * that play a cheat as an agent would and assert the conductor refuses it.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { commandBackend } from '../../src/agents/command.js';
import { loadConfig } from '../../src/config/load.js';
import type { Role } from '../../src/conductor/roles.js';
import { checkScope } from '../../src/conductor/scope.js';
import type { Policy, TurnStep } from '../../src/conductor/state.js';
import { changesSince, openWorkspace, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { modulesShadowing, testOwnedChanges } from '../../src/lanes/tdd/harness.js';
import { execFileAsync, type ExecError } from './exec-file.js';
import { workspaceAt } from './tdd.js';

/** What the scope check says of a change to the test harness. */
export const HARNESS_REFUSAL = 'the test harness (test-owned: only the navigator changes it, in RED)';

/** `files` committed on `main` in a new folder (mkdtemp with `prefix`), opened as the conductor opens its workspace. */
export async function committedWorkspace(
  prefix: string,
  files: Record<string, string>,
): Promise<{ dir: string; ws: GitWorkspace }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-qm', 'base'],
  ])
    await execFileAsync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], {
      cwd: dir,
    });
  return { dir, ws: await openWorkspace(dir) };
}

/** Consort's own jest, run on `dir`'s work tree as a suite would: how many tests failed, and its exit code. */
export async function runJest(dir: string): Promise<{ failed: number; code: number }> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, CI: 'true' };
  const args = [path.resolve('node_modules/jest/bin/jest.js'), '--ci', '--no-cache', '--json', '--rootDir', dir];
  const parse = (stdout: string, code: number) => ({
    failed: (JSON.parse(stdout) as { numFailedTests: number }).numFailedTests,
    code,
  });
  try {
    return parse((await execFileAsync(process.execPath, args, { cwd: dir, env, timeout: 60_000 })).stdout, 0);
  } catch (e) {
    const err = e as ExecError;
    return parse(String(err.stdout), Number(err.code));
  }
}

export interface ScopedTurn {
  dir: string;
  ws: GitWorkspace;
  policy: Policy;
  feature: string;
  role: Role;
  step: TurnStep;
  /** The agent's shell script, run in `dir`. */
  script: string;
  /** The frozen tests: changes to what they rely on (their harness) are judged as test-owned. Without: not judged. */
  frozen?: readonly string[];
}

export async function scopedTurn(t: ScopedTurn): Promise<string[]> {
  const base = await workspaceHead(t.ws);
  const result = await commandBackend({ command: t.script }).runTurn({
    role: t.role,
    step: t.step,
    feature: t.feature,
    item: 'T1',
    instructions: '',
    workspace: t.dir,
    writes: [],
    contextPack: { pack: {} as never, json: '{}', markdown: `# ${t.role}: ${t.step}` },
    branchUrl: 'postgresql://agent:pw@127.0.0.1:1/none',
    model: null,
    budget: { timeoutMs: 30_000 },
  });
  expect(result.exit).toEqual({ kind: 'done' });
  const changes = await changesSince(t.ws, base);
  expect(changes.length).toBeGreaterThan(0);
  const config = (await loadConfig(t.dir)).config;
  const shadows = await modulesShadowing(await workspaceAt(t.dir), base, changes);
  const testOwned = t.frozen
    ? await testOwnedChanges(await workspaceAt(t.dir), base, changes, [...t.frozen], config.build.tests, config.suite)
    : undefined;
  return checkScope({
    policy: t.policy,
    role: t.role,
    step: t.step,
    item: 'T1',
    changes,
    frozen: {},
    hashes: {},
    shadows,
    ...(testOwned ? { testOwned } : {}),
  }).map((r) => `${r.path}: ${r.why}`);
}
