/**
 * A scripted `command` agent's turn in a workspace, then the scope check as the conductor runs it
 * after a turn (src/lanes/tdd/turn.ts): what it refuses, as `path: why`. For the security tests
 * that play a cheat as an agent would and assert the conductor refuses it.
 */
import { commandBackend } from '../../src/agents/command.js';
import { loadConfig } from '../../src/config/load.js';
import type { Role } from '../../src/conductor/roles.js';
import { checkScope } from '../../src/conductor/scope.js';
import type { Policy, TurnStep } from '../../src/conductor/state.js';
import { changesSince, workspaceHead, type GitWorkspace } from '../../src/git/workspace.js';
import { testOwnedChanges } from '../../src/lanes/tdd/harness.js';
import { workspaceAt } from './tdd.js';

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
  const testOwned = t.frozen
    ? await testOwnedChanges(
        await workspaceAt(t.dir),
        base,
        changes,
        [...t.frozen],
        (await loadConfig(t.dir)).config.build.tests,
      )
    : undefined;
  return checkScope({
    policy: t.policy,
    role: t.role,
    step: t.step,
    item: 'T1',
    changes,
    frozen: {},
    hashes: {},
    ...(testOwned ? { testOwned } : {}),
  }).map((r) => `${r.path}: ${r.why}`);
}
