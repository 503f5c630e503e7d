/** A driver turn request for the SDK backends' tests: writes = src/**, a branch URL with a password. */
import path from 'node:path';
import { buildContextPack } from '../../src/conductor/context-pack.js';
import type { AgentTurnRequest } from '../../src/ports/agent-backend.js';
import { FDIR, FEATURE } from '../conductor/fixtures.js';

export const WORKSPACE = path.resolve('/work/ws');
export const WRITES = ['src/**'];

export function driverRequest(branchUrl: string, over: Partial<AgentTurnRequest> = {}): AgentTurnRequest {
  const plan = {
    id: 'turn-0004',
    role: 'driver' as const,
    step: 'green' as const,
    item: { id: 'T1', ac: 'AC1', kind: 'behavior' as const, title: 'count items', status: 'pending' as const },
    attempt: 0,
    note: null,
    failure: null,
    branch: 'f001-t1',
    forkAhead: null,
    experiment: null,
    frozen: [],
    writes: WRITES,
  };
  const built = buildContextPack({
    feature: FEATURE,
    featureDir: FDIR,
    plan,
    instructions: '# Driver\nMake the failing test pass.',
    reads: ['**'],
    files: [],
    contents: {},
    acceptanceCriteria: [],
    schema: null,
    layout: { tests: ['test/**'], migrations: 'migrations', suite: 'npm test' },
  });
  return {
    role: 'driver',
    step: 'green',
    feature: FEATURE,
    item: 'T1',
    instructions: '# Driver\nMake the failing test pass.',
    contextPack: built,
    workspace: WORKSPACE,
    writes: WRITES,
    branchUrl,
    model: null,
    budget: { timeoutMs: 10_000, maxTurns: 12, maxCostUsd: 0.5 },
    ...over,
  };
}
