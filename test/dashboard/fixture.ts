/**
 * A working copy with a TDD lane's records as the lane writes them: a feature waiting at the spec
 * gate (valid artifacts, design turns, one with hostile agent text and transcript) and a feature in
 * its build (cycles, RED/GREEN/REFACTOR turns, a refused turn), plus check reports in
 * `.consort/checks/`. Made with the lane's own code (createFeature, FeatureStore) where it has some.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultConfig } from '../../src/config/schema.js';
import type { CycleRecord } from '../../src/conductor/effects.js';
import type { LogEvent } from '../../src/conductor/events.js';
import { ConductorState, initialState, type Item, type TurnRecord } from '../../src/conductor/state.js';
import { createFeature } from '../../src/lanes/tdd/feature.js';
import { buildPolicy } from '../../src/lanes/tdd/policy.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import type { CheckReport } from '../../src/report/check-report.js';
import { workspaceAt } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
export const HOSTILE = {
  script: '<script>window.__pwned = 1</script>',
  link: '<a href="javascript:window.__pwned=2">click me</a>',
  textarea: '</textarea><img src=x onerror="window.__pwned=3">',
  path: 'src/<b onmouseover="window.__pwned=4">x</b>.ts',
};
export const T0 = Date.parse('2030-01-01T09:00:00.000Z');

const ITEMS: Item[] = [
  { id: 'T1', ac: 'AC1', kind: 'behavior', title: 'stores a phone', status: 'pending' },
  { id: 'T2', ac: 'AC2', kind: 'behavior', title: 'rejects a malformed phone', status: 'pending' },
];

const SPEC = {
  version: 1,
  title: 'Phones',
  summary: 'Customers have phone numbers.',
  userFacing: false,
  stories: [
    {
      id: 'S1',
      title: 'Store phones',
      acceptanceCriteria: [
        { id: 'AC1', given: 'a customer', when: 'a phone is saved', then: 'it is stored', layer: 'API' },
        { id: 'AC2', given: 'a customer', when: 'a malformed phone is saved', then: 'it is refused', layer: 'API' },
      ],
    },
  ],
};
const ARCH = {
  version: 1,
  summary: 'One table.',
  components: [{ name: 'phones', path: 'src/phones.js', responsibility: 'store phones' }],
  invariants: ['a phone belongs to one customer'],
  nonFunctional: ['fast'],
};
const DB = {
  version: 1,
  summary: 'phones table',
  tables: [{ name: 'phones', change: 'create', columns: [{ name: 'id', type: 'bigint', nullable: false }] }],
  migrations: [{ name: '001_phones', description: 'create phones', reversible: true }],
};

export function turn(
  over: Partial<TurnRecord> & { id: string; role: TurnRecord['role']; step: TurnRecord['step'] },
  feature: string,
  at: number,
): TurnRecord {
  return {
    version: 1,
    feature,
    item: null,
    attempt: 0,
    backend: 'command',
    model: 'test-model',
    startedAt: new Date(at).toISOString(),
    durationMs: 60_000,
    usage: { inputTokens: 1200, outputTokens: 300, costUsd: 0.12 },
    filesChanged: [],
    verdict: 'accepted',
    branch: `consort-${feature}-design`,
    context: { bytes: 2048, sha256: 'c'.repeat(64) },
    suite: null,
    ...over,
  };
}

async function git(dir: string, ...args: string[]): Promise<void> {
  await exec('git', ['-c', 'user.name=Test', '-c', 'user.email=t@example.com', ...args], { cwd: dir });
}

/** Validated: a state the conductor could be at. */
function baseState(feature: string, over: Record<string, unknown>): ConductorState {
  return ConductorState.parse({
    ...initialState(feature),
    policy: buildPolicy(defaultConfig(), feature),
    ...over,
  });
}

export function checkReport(i: number, at: number, over: Partial<CheckReport> = {}): CheckReport {
  const stage = (durationMs: number, summary = 'ok') => ({
    status: 'passed' as const,
    blocking: true,
    durationMs,
    summary,
  });
  const suiteMs = 20_000 + (i % 7) * 1500;
  const migrationsMs = 800 + (i % 5) * 100;
  return {
    schemaVersion: 1,
    tool: { name: 'consort', version: '0.1.0' },
    conclusion: i % 9 === 4 ? 'failure' : 'success',
    startedAt: new Date(at).toISOString(),
    durationMs: suiteMs + migrationsMs + 3000,
    provider: 'local',
    branchMode: 'clone',
    base: { ref: 'main', sha: 'a'.repeat(40) },
    head: { ref: `pr-${i}`, sha: `${i}`.padStart(40, 'b') },
    pr: 10 + (i % 4),
    branch: `ci-pr-${10 + (i % 4)}`,
    configSource: null,
    stages: {
      plan: { ...stage(40), newMigrations: ['001_phones.sql'], problems: [] },
      baseline: { ...stage(900), name: 'baseline', reused: true, applied: [], seeded: false },
      migrations: {
        ...stage(migrationsMs),
        applied: [{ name: '001_phones', file: 'migrations/001_phones.sql', durationMs: migrationsMs, statements: 2 }],
      },
      lint: { ...stage(300), findings: [], squawkVersion: '2.61.0' },
      reversibility: { ...stage(1200), migrations: [] },
      schemaDiff: { ...stage(500), text: '', counts: [] },
      suite: {
        ...stage(suiteMs, i % 9 === 4 ? '1 of 40 tests failed' : '40 tests passed'),
        status: i % 9 === 4 ? 'failed' : 'passed',
        command: 'npm test',
        exitCode: i % 9 === 4 ? 1 : 0,
        timedOut: false,
        tests: { passed: 40, failed: 0, errored: 0, skipped: 0, total: 40 },
        failures: [],
        outputTail: '',
      },
    },
    ...over,
  };
}

export interface Fixture {
  root: string;
  /** Waiting at the spec gate. */
  gated: string;
  /** In its build, with cycles. */
  building: string;
}

/** A feature whose design is done, waiting for a person at the spec gate (valid artifacts, design turns, hostile agent text). */
export async function addGatedFeature(root: string): Promise<string> {
  const { feature: gated } = await createFeature(await workspaceAt(root), 'phones', 'Customers want phone numbers.');
  const g = new FeatureStore(root, gated);
  await writeFile(g.file('feature-spec.json'), JSON.stringify(SPEC, null, 2));
  await writeFile(g.file('architecture.json'), JSON.stringify(ARCH, null, 2));
  await writeFile(g.file('db-design.json'), JSON.stringify(DB, null, 2));
  await writeFile(g.file('test-list.json'), JSON.stringify({ version: 1, items: ITEMS }, null, 2));
  const design = [
    turn(
      {
        id: 'turn-0000',
        role: 'spec-author',
        step: 'spec',
        filesChanged: [`.consort/features/${gated}/feature-spec.json`],
        summary: 'Wrote the spec.',
      },
      gated,
      T0,
    ),
    turn(
      {
        id: 'turn-0001',
        role: 'architect-reviewer',
        step: 'architecture',
        verdict: 'refused',
        reason: `changed src/app.js outside its scope ${HOSTILE.script}`,
        refused: [HOSTILE.path],
        summary: HOSTILE.link,
      },
      gated,
      T0 + 70_000,
    ),
    turn(
      { id: 'turn-0002', role: 'architect-reviewer', step: 'architecture', attempt: 1, summary: HOSTILE.textarea },
      gated,
      T0 + 140_000,
    ),
    turn(
      {
        id: 'turn-0003',
        role: 'dba',
        step: 'db-design',
        usage: { inputTokens: 3000, outputTokens: 900, costUsd: 0.4 },
      },
      gated,
      T0 + 210_000,
    ),
    turn(
      { id: 'turn-0004', role: 'test-strategist', step: 'test-list', filesChanged: [HOSTILE.path] },
      gated,
      T0 + 280_000,
    ),
  ];
  for (const t of design) await g.append('turns.jsonl', t);
  await mkdir(g.file('transcripts'), { recursive: true });
  await writeFile(
    g.file('transcripts/turn-0001.txt'),
    `I will now run ${HOSTILE.script}\n${HOSTILE.textarea}\n${HOSTILE.link}\n`,
  );
  const surfaced: LogEvent = {
    id: 'log-0001',
    at: new Date(T0 + 350_000).toISOString(),
    feature: gated,
    type: 'gate.surfaced',
    gate: 'spec',
    hash: 'sha256:x',
    problems: [],
  };
  await g.append('events.jsonl', surfaced);
  const gs = await g.load();
  await g.save({
    ...gs,
    state: baseState(gated, {
      step: 'awaiting-approval',
      gate: 'spec',
      designStop: 4,
      items: ITEMS,
      turns: design.length,
    }),
  });
  return gated;
}

export async function makeFixture(prefix = 'consort-dashboard-'): Promise<Fixture> {
  const root = await mkdtemp(path.join(os.tmpdir(), prefix));
  await git(root, 'init', '-q');
  await writeFile(path.join(root, 'README.md'), 'shop\n');
  await git(root, 'add', '-A');
  await git(root, 'commit', '-q', '-m', 'init');

  // Feature 1: the design done, waiting for a person at the spec gate.
  const gated = await addGatedFeature(root);

  // Feature 2: building, two cycles in.
  const { feature: building } = await createFeature(await workspaceAt(root), 'carts', 'Carts hold products.');
  const b = new FeatureStore(root, building);
  let at = T0 + 3_600_000;
  const turns: TurnRecord[] = [];
  let n = 0;
  const next = (over: Partial<TurnRecord> & { role: TurnRecord['role']; step: TurnRecord['step'] }, ms = 90_000) => {
    const t = turn(
      {
        id: `turn-${String(n++).padStart(4, '0')}`,
        durationMs: ms,
        branch: `consort-${building}-c${over.item ?? 'design'}`,
        ...over,
      },
      building,
      at,
    );
    at += ms + 10_000;
    turns.push(t);
    return t;
  };
  next({ role: 'spec-author', step: 'spec' });
  next({ role: 'architect-reviewer', step: 'architecture' });
  next({ role: 'dba', step: 'db-design' });
  next({ role: 'test-strategist', step: 'test-list' });
  const cycles: CycleRecord[] = [];
  for (const [i, item] of ['T1', 'T2'].entries()) {
    const red = next({
      role: 'navigator',
      step: 'red',
      item,
      filesChanged: [`test/${item}.test.js`],
      suite: `RED proven: 1 new test fails (${item})`,
    });
    if (i === 1)
      next(
        {
          role: 'driver',
          step: 'green',
          item,
          verdict: 'refused',
          reason: 'changed a test file: test/T2.test.js',
          refused: ['test/T2.test.js'],
        },
        200_000,
      );
    const green = next(
      {
        role: 'driver',
        step: 'green',
        item,
        filesChanged: ['src/carts.js'],
        suite: '| suite | passed | failed |\n| all | 12 | 0 |',
        usage: { inputTokens: 40_000, outputTokens: 9000, costUsd: 1.8 },
      },
      400_000,
    );
    const refactor = next({ role: 'driver', step: 'refactor', item, filesChanged: ['src/carts.js'] });
    next({ role: 'navigator', step: 'review', item });
    const stamp = (t: TurnRecord, verdict: string) => ({
      at: new Date(Date.parse(t.startedAt) + t.durationMs + 5000).toISOString(),
      verdict,
      branch: t.branch,
    });
    cycles.push({
      version: 1,
      cycle: i + 1,
      item,
      ac: `AC${i + 1}`,
      testFiles: [`test/${item}.test.js`],
      tests: [`${item} works`],
      red: stamp(red, 'proven'),
      green: stamp(green, 'proven'),
      refactor: stamp(refactor, 'proven'),
      review: { ...stamp(refactor, 'approve'), summary: 'fine' },
      rejections:
        i === 1
          ? [
              {
                step: 'green',
                verdict: 'refused',
                reason: 'changed a test file',
                at: turns[turns.length - 4]!.startedAt,
              },
            ]
          : [],
      repairs: 0,
      timing: { wallMs: 900_000, agentMs: 700_000, suiteMs: 150_000, overheadMs: 120 },
    });
  }
  for (const t of turns) await b.append('turns.jsonl', t);
  for (const c of cycles) await b.writeCycle(c);
  await b.recordApproval('spec', {
    approver: 'alice',
    at: new Date(T0 + 3_600_000 + 420_000).toISOString(),
    hash: `sha256:${'d'.repeat(64)}`,
    proxy: false,
  });
  const approved: LogEvent = {
    id: 'approve:spec',
    at: new Date(T0 + 3_600_000 + 420_000).toISOString(),
    feature: building,
    type: 'gate.approved',
    gate: 'spec',
    hash: `sha256:${'d'.repeat(64)}`,
    approver: 'alice',
    proxy: false,
  };
  await b.append('events.jsonl', approved);
  const bs = await b.load();
  await b.save({
    ...bs,
    state: baseState(building, {
      phase: 'build',
      step: 'green',
      designStop: 5,
      items: ITEMS.map((it) => ({ ...it, status: 'refactored' as const })),
      current: 1,
      cycles: 2,
      turns: turns.length,
      cycle: { ...cycles[1]!, number: 2, proofs: 2 },
    }),
  });

  await mkdir(path.join(root, '.consort/checks'), { recursive: true });
  for (let i = 0; i < 12; i++)
    await writeFile(
      path.join(root, `.consort/checks/${1000 + i}.json`),
      JSON.stringify(checkReport(i, T0 + i * 3_600_000)),
    );
  return { root, gated, building };
}
