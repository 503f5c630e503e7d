/**
 * The TDD lane's seams, with in-memory fakes of its ports: a turn and a proof run without git,
 * without a database and without a child process. The Workspace fake scripts what git would say
 * (the turn's changes, `.git` planted by the agent, a proof's worktree); AgentBackends hands out a
 * scripted agent by name; the ProcessRunner fake plays the suite and writes its JUnit report. The
 * same units run against real git, real branches and real suites in build.test.ts and
 * test/security/clean-proof.test.ts.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseConfigText } from '../../src/config/load.js';
import type { FileChange } from '../../src/conductor/events.js';
import type { TurnPlan } from '../../src/conductor/effects.js';
import type { LaneContext } from '../../src/lanes/tdd/context.js';
import type { Branches } from '../../src/lanes/tdd/database.js';
import { backendFactory } from '../../src/lanes/tdd/policy.js';
import { prove } from '../../src/lanes/tdd/proof.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { turnAt } from '../../src/lanes/tdd/turn.js';
import type { AgentBackend, AgentBackends, AgentTurnRequest } from '../../src/ports/agent-backend.js';
import type { ProcessRequest, ProcessResult, ProcessRunner } from '../../src/ports/process.js';
import type { Workspace } from '../../src/ports/workspace.js';

const FEATURE = '001-phones';
const BASE = 'b'.repeat(40);

/** A Workspace whose files are a real folder and whose git side is scripted. */
function memoryWorkspace(dir: string, script: { changes?: FileChange[]; planted?: FileChange[] } = {}) {
  const calls: string[] = [];
  const worktrees: string[] = [];
  const unused = (name: string) => async (): Promise<never> => {
    throw new Error(`the fake workspace was not asked to ${name}`);
  };
  const ws: Workspace = {
    dir,
    top: dir,
    gitDir: path.join(dir, '.git'),
    head: async () => BASE,
    changesSince: async (base) => {
      calls.push(`changesSince ${base}`);
      return script.changes ?? [];
    },
    restore: unused('restore'),
    setAsideSince: unused('setAsideSince'),
    commitPaths: unused('commitPaths'),
    amendPaths: unused('amendPaths'),
    dirtyOutside: unused('dirtyOutside'),
    listFiles: async () => ['package.json', 'src/index.js'],
    hashFiles: async (paths) => Object.fromEntries(paths.map((p) => [p, `hash of ${p}`])),
    codeTreeHash: unused('codeTreeHash'),
    fileAt: async () => null,
    filesUnder: async () => [],
    diffAdded: async () => [],
    stagedPatch: unused('stagedPatch'),
    applyAndCommit: unused('applyAndCommit'),
    async addWorktree(at, commit) {
      calls.push(`addWorktree ${commit}`);
      worktrees.push(at);
      await mkdir(at, { recursive: true });
      return memoryWorkspace(at).ws;
    },
    async removeWorktree(at) {
      calls.push('removeWorktree');
      await rm(at, { recursive: true, force: true });
    },
    async guardGit() {
      calls.push('guardGit');
      return {
        restore: async () => {
          calls.push('restoreGit');
          return script.planted ?? [];
        },
      };
    },
  };
  return { ws, calls, worktrees };
}

const config = parseConfigText(
  [
    'agents:',
    '  default: { backend: command, command: "never run" }',
    'suite:',
    '  command: npm test',
    '  reports: [junit.xml]',
  ].join('\n'),
  'consort.yml',
);

/** Branches that exist only as URLs (the real ones are tested in build-sandbox and agent-database). */
const branches = {
  sandbox: async () => ({
    url: 'postgresql://admin:admin-pw@127.0.0.1:1/sbx',
    migrations: { ok: true, applied: [], log: [] },
  }),
  fresh: async () => ({
    url: 'postgresql://admin:admin-pw@127.0.0.1:1/proof',
    migrations: { ok: true, applied: [], log: [] },
  }),
  schema: async () => ({ tables: [], enums: [] }),
  untrusted: async (_name: string, url: string) => url.replace('admin:admin-pw', 'agent:agent-pw'),
  invalidate: () => undefined,
  rekeyAhead: () => undefined,
  drop: () => undefined,
} as unknown as Branches;

/** The lane's context for a turn, with the fake ports above. */
const laneContext = (ws: Workspace, store: FeatureStore, agents: AgentBackends): LaneContext =>
  ({
    ws,
    config,
    feature: FEATURE,
    store,
    branches,
    backends: backendFactory(agents),
    env: {},
    agentEnv: {},
    secrets: [],
    log: () => undefined,
    now: () => new Date('2026-01-01T00:00:00Z'),
    time: (_label: string, fn: () => Promise<unknown>) => fn(),
  }) as unknown as LaneContext;

/** The driver's GREEN turn t1 on the cycle's sandbox, `frozen` the tests it may not change. */
const greenTurn = (frozen: string[]): TurnPlan => ({
  id: 't1',
  role: 'driver',
  step: 'green',
  item: null,
  attempt: 0,
  note: null,
  failure: null,
  branch: 'f001-c1',
  forkAhead: null,
  experiment: null,
  frozen,
  writes: ['src/**'],
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-tdd-ports-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('runs a turn with a scripted agent from AgentBackends, judging the changes the Workspace reports', async () => {
  const requests: AgentTurnRequest[] = [];
  const scripted = (name: AgentBackend['name']) => (): AgentBackend => ({
    name,
    runTurn: async (request) => {
      requests.push(request);
      return {
        summary: 'Added the phone column.',
        transcript: `connected to ${request.branchUrl}`,
        usage: { inputTokens: 10, outputTokens: 5 },
        durationMs: 7,
        exit: { kind: 'done' },
      };
    },
  });
  const agents: AgentBackends = {
    command: scripted('command'),
    openai: scripted('openai'),
    claude: scripted('claude'),
    codex: scripted('codex'),
  };
  const { ws, calls } = memoryWorkspace(dir, {
    changes: [{ path: 'src/phone.js', status: 'added' }],
    planted: [{ path: '.git/hooks/pre-commit', status: 'added' }],
  });
  const store = new FeatureStore(dir, FEATURE);
  const ctx = laneContext(ws, store, agents);
  const plan = greenTurn(['test/phone.test.js']);

  const { outcome } = await turnAt(ctx, plan, BASE, { branch: () => branches.sandbox('f001-c1'), transcripts: store });

  // The agent works in the Workspace's folder, on the branch's own role (never the admin's).
  expect(requests).toHaveLength(1);
  expect(requests[0]).toMatchObject({ workspace: dir, branchUrl: 'postgresql://agent:agent-pw@127.0.0.1:1/sbx' });
  // `.git` is read before the agent and put back after it, before git is asked what changed.
  expect(calls).toEqual(['guardGit', 'restoreGit', `changesSince ${BASE}`]);
  expect(outcome).toMatchObject({
    backend: 'command',
    base: BASE,
    changes: [
      { path: '.git/hooks/pre-commit', status: 'added' },
      { path: 'src/phone.js', status: 'added' },
    ],
    hashes: { 'test/phone.test.js': 'hash of test/phone.test.js' },
    exit: { kind: 'done' },
  });
  // The transcript is the lane's record, with the agent's database password redacted.
  const transcript = await readFile(store.file('transcripts/t1.txt'), 'utf8');
  expect(transcript).toContain('connected to postgresql://agent:');
  expect(transcript).not.toContain('agent-pw');
});

it("stops the run when the model service refuses the backend's key, after putting .git back", async () => {
  const refused: AgentBackend = {
    name: 'claude',
    runTurn: async () => ({
      summary: 'Not logged in · Please run /login',
      transcript: '',
      usage: { inputTokens: 0, outputTokens: 0 },
      durationMs: 3,
      exit: { kind: 'failed', message: 'Not logged in · Please run /login' },
      signInRefused: 'the claude backend could not sign in: export ANTHROPIC_API_KEY',
    }),
  };
  const agents: AgentBackends = {
    command: () => refused,
    openai: () => refused,
    claude: () => refused,
    codex: () => refused,
  };
  const { ws, calls } = memoryWorkspace(dir, { planted: [{ path: '.git/hooks/pre-commit', status: 'added' }] });
  const store = new FeatureStore(dir, FEATURE);
  const ctx = laneContext(ws, store, agents);
  const plan = greenTurn([]);
  await expect(
    turnAt(ctx, plan, BASE, { branch: () => branches.sandbox('f001-c1'), transcripts: store }),
  ).rejects.toMatchObject({
    code: 'config',
    message: 't1 could not start: the claude backend could not sign in: export ANTHROPIC_API_KEY.',
    hint: expect.stringContaining('consort run'),
  });
  // Not judged as the agent's turn, and git's own files were put back first.
  expect(calls).toEqual(['guardGit', 'restoreGit']);
});

it("proves a commit in the Workspace's fresh worktree, with the suite started by the ProcessRunner", async () => {
  const { ws, calls, worktrees } = memoryWorkspace(dir);
  const started: ProcessRequest[] = [];
  const processes: ProcessRunner = {
    run: async (request): Promise<ProcessResult> => {
      started.push(request);
      await writeFile(
        path.join(request.cwd, 'junit.xml'),
        [
          '<testsuites><testsuite name="phone" tests="2">',
          '<testcase classname="phone" name="stores a phone" file="test/phone.test.js"/>',
          '<testcase classname="phone" name="refuses letters" file="test/phone.test.js">',
          '<failure message="expected an error">Error: expected an error</failure></testcase>',
          '</testsuite></testsuites>',
        ].join('\n'),
      );
      return {
        exitCode: 1,
        signal: null,
        timedOut: false,
        aborted: false,
        durationMs: 42,
        output: '1 failed, 1 passed',
        droppedBytes: 0,
        notFound: false,
      };
    },
  };

  const run = await prove({
    ws,
    commit: 'c'.repeat(40),
    config,
    branches,
    branch: 'f001-p1',
    hash: ['test/phone.test.js'],
    env: { CI: 'true' },
    processes,
    time: (_label, fn) => fn(),
  });

  // The suite ran isolated in the worktree of the proven commit, on the branch's own role.
  // git's own files are guarded around the suite, and put back before the worktree goes.
  expect(calls).toEqual([`addWorktree ${'c'.repeat(40)}`, 'guardGit', 'restoreGit', 'removeWorktree']);
  expect(started).toHaveLength(1);
  expect(started[0]).toMatchObject({ command: 'npm test', cwd: worktrees[0], isolate: true });
  expect(started[0]!.env.DATABASE_URL).toBe('postgresql://agent:agent-pw@127.0.0.1:1/proof');
  expect(run.suiteMs).toBe(42);
  expect(run.outcome).toMatchObject({
    kind: 'ran',
    exitCode: 1,
    hashes: { 'test/phone.test.js': 'hash of test/phone.test.js' },
  });
  const tests = run.outcome.kind === 'ran' ? run.outcome.tests : [];
  expect(tests.map((t) => [t.state, t.file])).toEqual([
    ['passed', 'test/phone.test.js'],
    ['failed', 'test/phone.test.js'],
  ]);
});
