/**
 * The TDD lane end to end on the example shop: a throwaway git repository, scripted agents run by
 * the `command` backend, real database branches on the embedded PostgreSQL 18 and the shop's own
 * test files (its lean copy) for every proof, run by the quick stand-in for jest
 * (test/fixtures/quick-suite/run.mjs: jest's `expect`, the shop's JUnit reporter, the branch's
 * database; see test/helpers/shop-agent.ts), so a born-green test really passes and a RED really
 * fails an assertion or fails to load. The subject here is the conductor; jest itself runs the
 * proofs in test/agents/openai-build.test.ts. The agents misbehave
 * on purpose (see the script's header): a driver that edits a frozen test, a born-green test, a
 * test with a syntax error, and a crash in the middle of GREEN that a fresh driver resumes from
 * `.consort/`.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import type { ConsortConfig } from '../../src/config/schema.js';
import { CycleRecord } from '../../src/conductor/effects.js';
import { contentHash } from '../../src/conductor/gates.js';
import { CONDUCTOR_FILES } from '../../src/conductor/scope.js';
import { matchesAny } from '../../src/core/glob.js';
import type { ScenarioRepo } from '../../src/demo/scenarios.js';
import { runBuildLane, type BuildLaneInput, type BuildRunResult } from '../../src/lanes/tdd/index.js';
import { approveGate, createFeature } from '../../src/lanes/tdd/feature.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';
import { shopRepoWithAgent } from '../helpers/shop-agent.js';
import { tddAdapters, workspaceAt } from '../helpers/tdd.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
/** Real suite runs on a shared machine: generous per-test limits, so a loaded CI box does not fail them. */
const SLOW = 180_000;
const AGENT = fileURLToPath(new URL('../fixtures/agents/shop-agent.mjs', import.meta.url));

let t: TestProvider;
let repo: ScenarioRepo;
let agentState: string;
beforeAll(async () => {
  t = await localTestProvider();
  agentState = await mkdtemp(path.join(os.tmpdir(), 'consort-agent-'));
  repo = await shopRepoWithAgent(`${AGENT} ${agentState}`, 'build:\n  turnTimeout: 2m\n', 'quick');
}, 120_000);
afterAll(async () => {
  await repo?.dispose();
  await rm(agentState, { recursive: true, force: true });
  await t?.cleanup();
});

async function git(...args: string[]): Promise<string> {
  return (await exec('git', args, { cwd: repo.dir })).stdout;
}

describe('the TDD lane on the example shop', () => {
  const lines: string[] = [];
  let feature: string;
  let run: (extra?: Partial<BuildLaneInput>) => Promise<BuildRunResult>;
  let store: FeatureStore;
  let config: ConsortConfig;

  beforeAll(async () => {
    ({ config } = await loadConfig(repo.dir));
    feature = (
      await createFeature(
        await workspaceAt(repo.dir),
        'phones',
        'Customers want to leave a phone number so the shop can call them.',
      )
    ).feature;
    store = new FeatureStore(repo.dir, feature);
    run = async (extra = {}) =>
      runBuildLane({
        workspace: await workspaceAt(repo.dir),
        ...tddAdapters,
        config,
        feature,
        provider: t.provider,
        env: process.env,
        log: (l) => lines.push(l),
        ...extra,
      });
  });

  it(
    'designs the feature with four roles and stops at the spec gate',
    async () => {
      const r = await run();
      expect(r).toMatchObject({
        stop: 'awaiting-approval',
        state: { step: 'awaiting-approval', gate: 'spec', phase: 'design' },
      });
      const turns = await store.turns();
      expect(turns.map((x) => `${x.role}:${x.verdict}`)).toEqual([
        'spec-author:accepted',
        'architect-reviewer:accepted',
        'dba:accepted',
        'test-strategist:accepted',
      ]);
      // The dba's DATABASE_URL was a fork of the seeded baseline with the migrations applied.
      const db = JSON.parse(await readFile(store.file('db-design.json'), 'utf8')) as { summary: string };
      expect(db.summary).toMatch(/customers \(300 rows on the branch\)/);
      expect(turns[0]).toMatchObject({
        backend: 'command',
        usage: { inputTokens: 100, outputTokens: 40, costUsd: 0.001 },
        filesChanged: [`.consort/features/${feature}/feature-spec.json`],
      });
      expect(await git('log', '--format=%s')).toContain(`consort(spec-author): spec ${feature}`);
    },
    SLOW,
  );

  it('lets only a named human approve, and only valid artifacts', async () => {
    await expect(
      approveGate({ ws: await workspaceAt(repo.dir), feature, gate: 'spec', approver: 'proxy' }),
    ).rejects.toThrow(/reserved for headless/);
    await expect(
      approveGate({ ws: await workspaceAt(repo.dir), feature, gate: 'merge', approver: 'Ada' }),
    ).rejects.toThrow(/not at the merge gate/);
    const ok = await approveGate({ ws: await workspaceAt(repo.dir), feature, gate: 'spec', approver: 'Ada Lovelace' });
    expect(ok.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await store.gates()).gates.spec?.approval).toMatchObject({
      approver: 'Ada Lovelace',
      proxy: false,
      hash: ok.hash,
    });
    expect(ok.already).toBe(false);
    // The same person approving the same artifacts again (the dashboard's commit, then their
    // /consort approve): the recorded approval stands, nothing is written twice, and it is no error.
    const events = await readFile(store.file('events.jsonl'), 'utf8');
    const again = await approveGate({
      ws: await workspaceAt(repo.dir),
      feature,
      gate: 'spec',
      approver: 'ada lovelace',
      now: new Date(Date.parse(ok.at) + 60_000),
    });
    expect(again).toEqual({ ...ok, already: true });
    expect((await store.gates()).gates.spec?.history).toHaveLength(1);
    expect(await readFile(store.file('events.jsonl'), 'utf8')).toBe(events);
  });

  it('fails closed: an edit after approval withdraws it, line endings and blank lines do not', async () => {
    const file = store.file('feature-spec.json');
    const original = await readFile(file, 'utf8');
    await writeFile(file, original.replace('Customer phone numbers', 'Customer phones'));
    const r = await run();
    expect(r).toMatchObject({ stop: 'awaiting-approval', state: { gate: 'spec' } });
    expect((await store.events()).filter((e) => e.type === 'gate.surfaced')).toHaveLength(2);
    await writeFile(file, `${original.replace(/\n/g, '  \r\n')}\r\n\r\n`);
  });

  it(
    'steps through T1 one effect at a time, each by a fresh driver, refusing the driver that edits a test',
    async () => {
      // ~30 drivers of one effect each: with the warm pool on, every one that forks would fill a pool in the
      // background and drop it at its end. The runs before and after this one keep the pool (and must leave
      // none behind, see below); test/lanes/build-pool.test.ts is about the pool itself.
      const stepping = { ...config, build: { ...config.build, branchPool: 0 } };
      for (let i = 0; i < 200; i++) {
        const r = await run({ maxEffects: 1, config: stepping });
        expect(['max-effects']).toContain(r.stop);
        if (r.state.step === 'prove-green') break;
      }
      const state = (await store.load()).state;
      expect(state).toMatchObject({
        step: 'prove-green',
        items: [
          { id: 'T1', status: 'red' },
          { id: 'T2', status: 'pending' },
        ],
      });
      const turns = await store.turns();
      const redTurns = turns.filter((x) => x.step === 'red');
      // Attempt 1 was born green: rejected by the conductor's own suite run.
      expect(redTurns.map((x) => x.verdict)).toEqual(['rejected', 'accepted']);
      // …next to the real T1, which failed: judged per test, not per item.
      expect(redTurns[0]!.reason).toMatch(/born green: .* next to failing tests/);
      // The driver's first GREEN also changed how the suite runs and what no agent may change.
      const refused = turns.find((x) => x.step === 'green' && x.verdict === 'refused');
      expect([...(refused?.refused ?? [])].sort()).toEqual([
        'consort.config.json',
        'jest.config.js',
        'migrations/1730000000000_create_customers.sql',
        'package.json',
        'seed.sql',
        'test/__mocks__/pg.js',
        'test/phones.test.js',
      ]);
      // All of it reverted: the tree holds nothing the refused turn wrote.
      expect(existsSync(path.join(repo.dir, 'consort.config.json'))).toBe(false);
      expect(existsSync(path.join(repo.dir, 'test/__mocks__/pg.js'))).toBe(false);
      expect(
        await git('diff', 'HEAD', '--name-only', '--', 'package.json', 'jest.config.js', 'seed.sql', 'migrations/'),
      ).toBe('');
      // The refused change is gone from the tree, and the frozen test is what RED proved.
      expect(await readFile(path.join(repo.dir, 'test/phones.test.js'), 'utf8')).toContain(
        "expect(typeof customers.setCustomerPhone).toBe('function');",
      );
      expect(contentHash(await readFile(path.join(repo.dir, 'test/phones.test.js'), 'utf8'))).toBe(
        state.frozen['test/phones.test.js'],
      );
    },
    2 * SLOW,
  ); // ~40 fresh drivers and four proofs, each proof in its own worktree: slow on a loaded machine

  it(
    'runs on until it is killed in the middle of GREEN for T2',
    async () => {
      const controller = new AbortController();
      const marker = path.join(agentState, 'green-t2-started');
      const watch = setInterval(() => existsSync(marker) && controller.abort(), 50);
      let r: BuildRunResult;
      try {
        r = await run({ signal: controller.signal });
      } finally {
        clearInterval(watch);
      }
      expect(r).toMatchObject({
        stop: 'interrupted',
        state: { step: 'green', items: [{ status: 'refactored' }, { status: 'red' }] },
      });
      // What a killed process leaves: half a change in the tree, the turn in flight in the journal, a branch.
      expect(existsSync(path.join(repo.dir, 'src/phones-wip.js'))).toBe(true);
      const journal = await store.load();
      expect(journal.inFlight?.base).toMatch(/^[0-9a-f]{40}$/);
      const plan = journal.pending[journal.done];
      if (plan?.type !== 'run-turn') throw new Error('expected the GREEN turn in flight');
      await t.provider.create({ name: plan.turn.branch, parent: 'main' });
      // T2's first RED had a syntax error: red for the wrong reason, back to the navigator.
      const t2red = (await store.turns()).filter((x) => x.step === 'red' && x.item === 'T2');
      expect(t2red.map((x) => x.verdict)).toEqual(['rejected', 'accepted']);
      expect(t2red[0]!.reason).toMatch(/red for the wrong reason/);
    },
    SLOW,
  );

  it(
    'resumes from .consort/ with a fresh driver, sets the half-done turn aside and reaches the merge gate',
    async () => {
      const r = await run();
      expect(r).toMatchObject({
        stop: 'awaiting-approval',
        state: { phase: 'merge', gate: 'merge', items: [{ status: 'refactored' }, { status: 'refactored' }] },
      });
      expect(existsSync(path.join(repo.dir, 'src/phones-wip.js'))).toBe(false);
      expect(await git('log', '--branches', '--tags', '--format=%H', '--', 'src/phones-wip.js')).toBe('');
      // Set aside, not lost: the interrupted turn's changes (and whatever a person did since) are a stash entry.
      expect(await git('stash', 'list', '--format=%gs')).toMatch(/set aside on resuming an interrupted turn/);
      expect(await git('show', '--name-only', '--format=', 'stash@{0}^3')).toContain('src/phones-wip.js');
      // A clean stop commits the conductor's records too: nothing is left uncommitted.
      expect(await git('status', '--porcelain', '--untracked-files=all')).toBe('');
      // Nor a proof's worktree (each begun during the turn before it): no folder, no registration.
      const next = (await readdir(path.dirname(repo.dir))).filter((f) =>
        f.startsWith(`${path.basename(repo.dir)}-consort-`),
      );
      expect(next).toEqual([]);
      expect((await git('worktree', 'list', '--porcelain')).match(/^worktree /gm)).toHaveLength(1);
    },
    SLOW,
  );

  it('records every cycle: red before green, with branches, rejections and conductor overhead', async () => {
    const cycles = await Promise.all(
      (await store.cycleFiles()).map(async (f) => CycleRecord.parse(JSON.parse(await readFile(store.file(f), 'utf8')))),
    );
    expect(cycles.map((c) => c.item)).toEqual(['T1', 'T2']);
    for (const c of cycles) {
      expect(c.red?.verdict).toBe('red');
      expect(c.green?.verdict).toBe('green');
      expect(Date.parse(c.red!.at)).toBeLessThanOrEqual(Date.parse(c.green!.at));
      expect(c.review?.verdict).toBe('approve');
      expect(c.tests.length).toBeGreaterThan(0);
      expect(c.timing.overheadMs).toBeGreaterThan(0);
      expect(c.timing.overheadMs).toBeLessThan(c.timing.wallMs);
    }
    expect(cycles[0]!.rejections.map((x) => x.verdict)).toEqual(['born-green']);
    expect(cycles[1]!.rejections.map((x) => x.verdict)).toEqual(['wrong-reason']);
    expect(cycles[0]!.refactor?.verdict).toBe('green');
    expect(cycles[1]!.refactor?.verdict).toBe('unchanged');
    const events = await store.events();
    for (const item of ['T1', 'T2']) {
      const red = events.findIndex((e) => e.type === 'cycle.red' && e.item === item);
      const green = events.findIndex((e) => e.type === 'cycle.green' && e.item === item);
      expect(red).toBeGreaterThan(-1);
      expect(green).toBeGreaterThan(red);
    }
    // Only the baseline survives: every turn and proof branch was deleted, and the baseline's pool dropped.
    expect(
      (await t.provider.list()).map((b) => b.name).filter((n) => n !== 'main' && !n.startsWith('baseline-')),
    ).toEqual([]);
    expect(await t.provider.poolStatus()).toEqual([]);
  });

  it('never committed a test change by the driver, nor code by the navigator', async () => {
    const log = await git('log', '--format=%x00%s', '--name-only');
    const commits = log
      .split('\0')
      .filter(Boolean)
      .map((c) => {
        const [subject, ...files] = c.trim().split('\n');
        return { subject: subject!, files: files.filter(Boolean) };
      });
    const driver = commits.filter((c) => c.subject.startsWith('consort(driver)'));
    const navigator = commits.filter((c) => c.subject.startsWith('consort(navigator)'));
    expect(driver.map((c) => c.subject)).toEqual([
      `consort(driver): green ${feature}/T2`,
      `consort(driver): refactor ${feature}/T1`,
      `consort(driver): green ${feature}/T1`,
    ]);
    expect(driver.flatMap((c) => c.files).filter((f) => f.startsWith('test/'))).toEqual([]);
    // Each turn's commit also carries the conductor's records so far (one commit per turn): the
    // feature's records and the item statuses it sets, nothing an agent wrote.
    const featureDir = `.consort/features/${feature}`;
    const conductors = (f: string) =>
      matchesAny(f, [...CONDUCTOR_FILES.map((g) => `${featureDir}/${g}`), `${featureDir}/test-list.json`]);
    expect(
      navigator
        .flatMap((c) => c.files)
        .filter((f) => !f.startsWith('test/') && !f.includes('/reviews/') && !conductors(f)),
    ).toEqual([]);
    expect(driver.flatMap((c) => c.files).filter((f) => f.startsWith('.consort/') && !conductors(f))).toEqual([]);
    // Rejected means gone: the born-green RED of T1 (attempt 1) and the T2 RED that did not load are in no commit of the branch.
    const patches = await git('log', '-p', '--format=%s', '--', 'test/');
    expect(patches).not.toContain('T1 customers can be created');
    expect(patches).not.toContain("test('T2 rejects'");
    expect(
      commits
        .filter((c) => / \((rejected|refused), reverted\)$/.test(c.subject))
        .every((c) => c.files.every((f) => f.startsWith('.consort/'))),
    ).toBe(true);
  });

  it(
    'approves the merge gate and finishes',
    async () => {
      await approveGate({ ws: await workspaceAt(repo.dir), feature, gate: 'merge', approver: 'Grace Hopper' });
      const r = await run();
      expect(r).toMatchObject({ stop: 'done', state: { phase: 'done', step: 'done' } });
      const list = JSON.parse(await readFile(store.file('test-list.json'), 'utf8')) as { items: { status: string }[] };
      expect(list.items.map((i) => i.status)).toEqual(['refactored', 'refactored']);
      const agentTurns = (await readFile(path.join(agentState, 'turns.log'), 'utf8')).trim().split('\n');
      // GREEN turns had the failing output in their context pack; retries had a note; every turn saw the schema.
      expect(agentTurns.filter((l) => l.startsWith('driver green')).every((l) => l.includes('failure=yes'))).toBe(true);
      expect(agentTurns.filter((l) => l.includes('attempt=1')).every((l) => l.includes('note=yes'))).toBe(true);
      expect(agentTurns.every((l) => /schema=[1-9]/.test(l))).toBe(true);
    },
    SLOW,
  );
});
