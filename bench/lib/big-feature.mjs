/**
 * The records both dashboard benches serve at size (bench/dashboard.mjs from disk, the App's
 * bench/dashboard-app.mjs through its indexer): one feature with `turns` turns, a cycle per item
 * (at most 250), a red-cycle event every fourth turn, the state waiting at the merge gate; and
 * check reports as the PR lane writes them.
 */
import { defaultConfig } from '../../lib/src/config/schema.js';
import { initialState } from '../../lib/src/conductor/state.js';
import { buildPolicy } from '../../lib/src/lanes/tdd/policy.js';

export const T0 = Date.parse('2030-01-01T09:00:00Z');
const ROLES = ['navigator', 'driver', 'driver', 'navigator'];
const STEPS = ['red', 'green', 'refactor', 'review'];

/** `{ items, turns (turns.jsonl text), events (events.jsonl text), cycles (records), state }`. */
export function bigFeature(feature, count) {
  const items = Array.from({ length: Math.ceil(count / 4) }, (_, i) => ({
    id: `T${i + 1}`,
    ac: 'AC1',
    kind: 'behavior',
    title: `item ${i + 1}`,
    status: 'refactored',
  }));
  let turns = '';
  let events = '';
  for (let i = 0; i < count; i++) {
    const item = `T${Math.floor(i / 4) + 1}`;
    const at = new Date(T0 + i * 120_000).toISOString();
    turns += `${JSON.stringify({
      version: 1,
      id: `turn-${String(i).padStart(4, '0')}`,
      feature,
      role: ROLES[i % 4],
      step: STEPS[i % 4],
      item,
      attempt: 0,
      backend: 'command',
      model: 'm',
      startedAt: at,
      durationMs: 90_000,
      usage: { inputTokens: 2000 + i, outputTokens: 500, costUsd: 0.05 },
      filesChanged: ['src/a.js'],
      verdict: i % 13 === 5 ? 'refused' : 'accepted',
      ...(i % 13 === 5 ? { reason: 'changed a test file', refused: ['test/a.test.js'] } : {}),
      branch: `consort-${feature}-c${item}`,
      context: { bytes: 1000, sha256: 'c'.repeat(64) },
      suite: '12 passed',
      summary: 'did it',
    })}\n`;
    if (i % 4 === 0)
      events += `${JSON.stringify({ id: `log-${i}`, at, feature, type: 'cycle.red', item, branch: 'b', tests: ['t'] })}\n`;
  }
  const cycles = [];
  for (let c = 1; c <= Math.min(items.length, 250); c++) {
    const stamp = { at: new Date(T0 + c * 480_000).toISOString(), verdict: 'proven', branch: 'b' };
    cycles.push({
      version: 1,
      cycle: c,
      item: `T${c}`,
      ac: 'AC1',
      testFiles: [],
      tests: [],
      red: stamp,
      green: stamp,
      refactor: stamp,
      review: { ...stamp, verdict: 'approve' },
      rejections: [],
      repairs: 0,
      timing: { wallMs: 1, agentMs: 1, suiteMs: 1, overheadMs: 1 },
    });
  }
  const state = {
    ...initialState(feature),
    policy: buildPolicy(defaultConfig(), feature),
    phase: 'merge',
    step: 'awaiting-approval',
    gate: 'merge',
    items,
    current: items.length - 1,
    turns: count,
  };
  return { items, turns, events, cycles, state };
}

const stage = (ms) => ({ status: 'passed', blocking: true, durationMs: ms, summary: 'ok' });

/** The `i`th of many check reports (one in 17 failed; 300 pull requests). */
export function checkReport(i) {
  return {
    schemaVersion: 1,
    tool: { name: 'consort', version: '0.1.0' },
    conclusion: i % 17 ? 'success' : 'failure',
    startedAt: new Date(T0 + i * 600_000).toISOString(),
    durationMs: 30_000 + (i % 50) * 100,
    provider: 'local',
    branchMode: 'clone',
    base: { ref: 'main', sha: null },
    head: { ref: 'x', sha: null },
    pr: i % 300,
    branch: null,
    configSource: null,
    stages: {
      plan: { ...stage(20), newMigrations: [], problems: [] },
      baseline: { ...stage(800), name: null, reused: true, applied: [], seeded: false },
      migrations: { ...stage(900), applied: [] },
      lint: { ...stage(200), findings: [], squawkVersion: null },
      reversibility: { ...stage(900), migrations: [] },
      schemaDiff: { ...stage(300), text: '', counts: [] },
      suite: {
        ...stage(25_000),
        command: 'npm test',
        exitCode: 0,
        timedOut: false,
        tests: null,
        failures: [],
        outputTail: '',
      },
    },
  };
}
