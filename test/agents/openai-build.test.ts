/**
 * The `openai` backend end to end: the conductor drives the example shop through RED → GREEN →
 * REFACTOR → review for two test-list items with the navigator and the driver played by a scripted
 * model behind a local OpenAI-compatible endpoint. The model works only through its tools: it reads
 * the code, writes the test (RED), the migration and the implementation (GREEN) and a small
 * refactor, runs the shop's real jest suite on its turn's branch of the embedded PostgreSQL 18 and
 * writes its reviews. The design roles stay scripted `command` agents. This is the one end-to-end
 * test on the shop's full suite under jest (all its test files); the other lane tests use its lean
 * copy, under jest or (build.test.ts) the quick stand-in, test/fixtures/quick-suite/run.mjs.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openaiBackend } from '../../src/agents/openai.js';
import { loadConfig } from '../../src/config/load.js';
import type { ConsortConfig } from '../../src/config/schema.js';
import { CycleRecord } from '../../src/conductor/effects.js';
import type { ScenarioRepo } from '../../src/demo/scenarios.js';
import { runBuildLane, type BuildRunResult } from '../../src/lanes/tdd/index.js';
import { approveGate, createFeature } from '../../src/lanes/tdd/feature.js';
import { type BackendFactory, backendFactory } from '../../src/lanes/tdd/policy.js';
import { FeatureStore } from '../../src/lanes/tdd/store.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';
import { shopRepoWithAgent } from '../helpers/shop-agent.js';
import { tddAdapters, workspaceAt } from '../helpers/tdd.js';
import { type ChatRequest, type Reply, scriptedServer, type ScriptedServer } from './openai-server.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const SLOW = 300_000;
const AGENT = fileURLToPath(new URL('../fixtures/agents/shop-agent.mjs', import.meta.url));
const API_KEY = 'sk-e2e-secret-key-5678';

const TEST_HEAD = `import { describe, expect, test } from '@jest/globals';
import * as customers from '../src/customers.js';
import { ValidationError } from '../src/errors.js';
import { makeCustomer, rollbackEachTest } from './helpers.js';

describe('customer phones', () => {
  const db = rollbackEachTest();
`;
const T1 = `
  test('T1 stores a trimmed phone number', async () => {
    expect(typeof customers.setCustomerPhone).toBe('function');
    const c = await makeCustomer(db());
    expect(await customers.setCustomerPhone(db(), c.id, ' +44 20 7946 0958 ')).toEqual({ id: c.id, phone: '+44 20 7946 0958' });
  });
`;
const T2 = `
  test('T2 rejects a malformed phone number', async () => {
    const c = await makeCustomer(db());
    await expect(customers.setCustomerPhone(db(), c.id, 'call me')).rejects.toBeInstanceOf(ValidationError);
  });
`;
const tests = (...bodies: string[]): string => `${TEST_HEAD}${bodies.join('')}});\n`;
const MIGRATION = `-- Up Migration
SET LOCAL lock_timeout = '1s';
SET LOCAL statement_timeout = '5s';
ALTER TABLE customers ADD COLUMN phone text;

-- Down Migration
ALTER TABLE customers DROP COLUMN phone;
`;
const VALIDATE =
  '  if (!/^\\+?[0-9][0-9 ()-]{5,19}$/.test(value)) throw new ValidationError(`invalid phone number: ${JSON.stringify(phone)}`);\n';
const SET_PHONE = `
/** Stores a customer's phone number, trimmed. */
export async function setCustomerPhone(db, id, phone) {
  const value = String(phone).trim();
  const { rows } = await db.query('UPDATE customers SET phone = $2 WHERE id = $1 RETURNING id, phone', [id, value]);
  if (rows.length === 0) throw new NotFoundError('customer', id);
  return { id: rows[0].id, phone: rows[0].phone };
}
`;

type Step = (body: ChatRequest) => Reply;

/** The tool result the model got last, sent as plain text (the scripted model reads files through its tools). */
function lastToolResult(body: ChatRequest): string {
  return body.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '';
}

const write = (file: string, content: string): Reply => ({
  calls: [{ name: 'write_file', args: { path: file, content } }],
});
const read = (file: string): Reply => ({ calls: [{ name: 'read_file', args: { path: file } }] });
const suite: Reply = { calls: [{ name: 'run_suite', args: {} }] };
const say = (text: string): Reply => ({ text });

function script(featureDir: string): Record<string, Step[]> {
  const review = (item: string): Step[] => [
    () =>
      write(
        `${featureDir}/reviews/${item}.json`,
        `${JSON.stringify({ version: 1, item, verdict: 'approve', notes: `${item} is minimal and tested.` }, null, 2)}\n`,
      ),
    () => say(`Reviewed ${item}: approved.`),
  ];
  return {
    'navigator red T1': [
      () => read('src/customers.js'),
      () => write('test/phones.test.js', tests(T1)),
      () => suite,
      () => say('Wrote T1: a failing test for setCustomerPhone.'),
    ],
    'driver green T1': [
      () => read('src/customers.js'),
      (body) => ({
        calls: [
          { name: 'write_file', args: { path: 'migrations/1730000400000_add_customer_phone.sql', content: MIGRATION } },
          { name: 'write_file', args: { path: 'src/customers.js', content: lastToolResult(body) + SET_PHONE } },
        ],
      }),
      () => suite,
      () => say('Added the phone column and setCustomerPhone; the suite passes.'),
    ],
    'driver refactor T1': [
      () => read('src/customers.js'),
      (body) =>
        write(
          'src/customers.js',
          lastToolResult(body).replace('/** Stores a customer', '/** Sets (or replaces) a customer'),
        ),
      () => say('Renamed the doc comment.'),
    ],
    'navigator review T1': review('T1'),
    'navigator red T2': [() => write('test/phones.test.js', tests(T1, T2)), () => say('Wrote T2.')],
    'driver green T2': [
      () => read('src/customers.js'),
      (body) =>
        write(
          'src/customers.js',
          lastToolResult(body).replace(
            '  const value = String(phone).trim();\n',
            `  const value = String(phone).trim();\n${VALIDATE}`,
          ),
        ),
      () => suite,
      () => say('Validated phone numbers; the suite passes.'),
    ],
    'driver refactor T2': [() => say('Nothing to refactor.')],
    'navigator review T2': review('T2'),
  };
}

let t: TestProvider;
let repo: ScenarioRepo;
let agentState: string;
let server: ScriptedServer;
const turnsSeen: string[] = [];

beforeAll(async () => {
  t = await localTestProvider();
  agentState = await mkdtemp(path.join(os.tmpdir(), 'consort-agent-'));
  repo = await shopRepoWithAgent(`${AGENT} ${agentState}`, 'build:\n  turnTimeout: 2m\n', 'full');
}, 120_000);
afterAll(async () => {
  await server?.close();
  await repo?.dispose();
  await rm(agentState, { recursive: true, force: true });
  await t?.cleanup();
});

describe('the TDD lane with the openai backend for the navigator and the driver', () => {
  it(
    'drives RED → GREEN → REFACTOR for every item on real branches and real suite runs',
    async () => {
      const { config } = await loadConfig(repo.dir);
      const feature = (
        await createFeature(
          await workspaceAt(repo.dir),
          'phones',
          'Customers want to leave a phone number so the shop can call them.',
        )
      ).feature;
      const store = new FeatureStore(repo.dir, feature);
      const steps = script(`.consort/features/${feature}`);
      server = await scriptedServer((body) => {
        const head = /^# ([\w-]+): ([\w-]+)(?: (T\d+))?/.exec(
          body.messages.find((m) => m.role === 'user')?.content ?? '',
        );
        const turn = head ? [head[1], head[2], head[3]].filter(Boolean).join(' ') : '?';
        const done = body.messages.filter((m) => m.role === 'assistant').length;
        if (done === 0) turnsSeen.push(turn);
        const step = steps[turn]?.[done];
        if (!step) throw new Error(`no script for ${turn} step ${done}`);
        return step(body);
      });
      const openai = openaiBackend({
        baseUrl: server.baseUrl,
        apiKey: API_KEY,
        model: 'scripted',
        suite: { command: config.suite.command, env: config.suite.env },
      });
      const backends: BackendFactory = (role, cfg: ConsortConfig) =>
        role === 'navigator' || role === 'driver'
          ? { backend: openai, model: 'scripted-model', timeoutMs: 120_000 }
          : backendFactory(tddAdapters.agents)(role, cfg);
      const run = async (): Promise<BuildRunResult> =>
        runBuildLane({
          workspace: await workspaceAt(repo.dir),
          ...tddAdapters,
          config,
          feature,
          provider: t.provider,
          env: process.env,
          backends,
        });

      expect(await run()).toMatchObject({ stop: 'awaiting-approval', state: { gate: 'spec' } });
      await approveGate({ ws: await workspaceAt(repo.dir), feature, gate: 'spec', approver: 'Ada Lovelace' });
      const r = await run();
      expect(r).toMatchObject({
        stop: 'awaiting-approval',
        state: { phase: 'merge', gate: 'merge', items: [{ status: 'refactored' }, { status: 'refactored' }] },
      });

      expect(turnsSeen).toEqual([
        'navigator red T1',
        'driver green T1',
        'driver refactor T1',
        'navigator review T1',
        'navigator red T2',
        'driver green T2',
        'driver refactor T2',
        'navigator review T2',
      ]);
      const turns = (await store.turns()).filter((x) => x.role === 'navigator' || x.role === 'driver');
      expect(turns.every((x) => x.backend === 'openai' && x.verdict === 'accepted')).toBe(true);
      expect(turns.every((x) => x.usage.inputTokens > 0 && x.usage.costUsd === undefined)).toBe(true);

      // The model ran the real suite on its branch: red after writing T1, green after implementing it.
      const suiteResults = server.requests
        .flatMap((q) => q.body.messages.filter((m) => m.role === 'tool'))
        .map((m) => m.content ?? '')
        .filter((c) => c.startsWith('suite '));
      expect(suiteResults.some((c) => c.startsWith('suite failed') && c.includes('setCustomerPhone'))).toBe(true);
      // A migration written during the turn is not on the turn's branch yet (the conductor applies it
      // when it proves GREEN), so T1's in-turn run fails on the column; T2's branch has it and passes.
      expect(
        suiteResults.some((c) => c.startsWith('suite failed') && c.includes('column "phone" does not exist')),
      ).toBe(true);
      expect(suiteResults.at(-1)).toMatch(/^suite passed \(exit 0\)[\s\S]*PASS test\/phones\.test\.js/);

      const cycles = await Promise.all(
        (await store.cycleFiles()).map(async (f) =>
          CycleRecord.parse(JSON.parse(await readFile(store.file(f), 'utf8'))),
        ),
      );
      expect(
        cycles.map((c) => [c.item, c.red?.verdict, c.green?.verdict, c.refactor?.verdict, c.review?.verdict]),
      ).toEqual([
        ['T1', 'red', 'green', 'green', 'approve'],
        ['T2', 'red', 'green', 'unchanged', 'approve'],
      ]);
      expect(await readFile(path.join(repo.dir, 'src/customers.js'), 'utf8')).toContain(
        '/** Sets (or replaces) a customer',
      );
      const log = (await exec('git', ['log', '--format=%s'], { cwd: repo.dir })).stdout;
      expect(log).toContain(`consort(driver): refactor ${feature}/T1`);
      // The API key is nowhere in what the conductor recorded.
      const recorded = (
        await exec('git', ['grep', '-I', '-c', API_KEY, '--', '.'], { cwd: repo.dir }).catch(
          (e: { code?: number }) => ({ stdout: `exit ${e.code}` }),
        )
      ).stdout;
      expect(recorded).toBe('exit 1');

      await approveGate({ ws: await workspaceAt(repo.dir), feature, gate: 'merge', approver: 'Grace Hopper' });
      expect(await run()).toMatchObject({ stop: 'done', state: { phase: 'done' } });
    },
    SLOW,
  );
});
