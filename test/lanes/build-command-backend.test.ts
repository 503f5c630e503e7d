/** The `command` backend's contract: what a CLI agent gets (environment, context pack) and how its ending is read. */
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandBackend } from '../../src/agents/command.js';
import { buildContextPack } from '../../src/conductor/context-pack.js';
import type { AgentTurnRequest } from '../../src/ports/agent-backend.js';
import { FDIR, FEATURE, policy } from '../conductor/fixtures.js';

const SCRIPT = fileURLToPath(new URL('../fixtures/agents/echo-env.mjs', import.meta.url));
const URL_WITH_SECRET = 'postgresql://postgres:s3cret-pw@127.0.0.1:5999/f001-t1';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-cmd-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function request(over: Partial<AgentTurnRequest> = {}): AgentTurnRequest {
  const plan = {
    id: 'turn-0003',
    role: 'navigator' as const,
    step: 'red' as const,
    item: { id: 'T1', ac: 'AC1', kind: 'behavior' as const, title: 't', status: 'pending' as const },
    attempt: 0,
    note: null,
    failure: null,
    branch: 'f001-t1',
    forkAhead: null,
    experiment: null,
    frozen: [],
    writes: policy().writes.navigator,
  };
  const built = buildContextPack({
    feature: FEATURE,
    featureDir: FDIR,
    plan,
    instructions: '# Navigator',
    reads: ['**'],
    files: [],
    contents: {},
    acceptanceCriteria: [],
    schema: null,
    layout: { tests: ['test/**'], migrations: 'migrations', suite: 'npm test' },
  });
  return {
    role: 'navigator',
    step: 'red',
    feature: FEATURE,
    item: 'T1',
    instructions: '# Navigator',
    contextPack: built,
    workspace: dir,
    writes: plan.writes,
    branchUrl: URL_WITH_SECRET,
    model: 'scripted-1',
    budget: { timeoutMs: 20_000 },
    ...over,
  };
}

describe('the command backend', () => {
  it('runs in the workspace with the documented environment and both context files', async () => {
    const out = path.join(dir, 'seen.json');
    const backend = commandBackend({ command: `node ${SCRIPT} ${out}`, urlVars: ['TEST_DATABASE_URL'] });
    const result = await backend.runTurn(request());
    expect(result.exit).toEqual({ kind: 'done' });
    const seen = JSON.parse(await readFile(out, 'utf8')) as {
      env: Record<string, string | null>;
      cwd: string;
      pack: { turn: string; role: string };
      markdown: string;
    };
    expect(seen.env).toEqual({
      CONSORT_ROLE: 'navigator',
      CONSORT_STEP: 'red',
      CONSORT_FEATURE: FEATURE,
      CONSORT_ITEM: 'T1',
      CONSORT_MODEL: 'scripted-1',
      DATABASE_URL: URL_WITH_SECRET,
      TEST_DATABASE_URL: URL_WITH_SECRET,
      PGDATABASE: 'f001-t1',
    });
    expect(await realpath(seen.cwd)).toBe(await realpath(dir));
    expect(seen.pack).toMatchObject({ turn: 'turn-0003', role: 'navigator' });
    expect(seen.markdown.startsWith('# navigator: red T1')).toBe(true);
    // stdout is the transcript, with the branch password masked; no usage reported: zeros.
    expect(result.transcript).toContain('turn done');
    expect(result.transcript).not.toContain('s3cret-pw');
    expect(result.summary).toBe('turn done');
    expect(result.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it('leaves CONSORT_ITEM unset for a turn about no item', async () => {
    const out = path.join(dir, 'noitem.json');
    await commandBackend({ command: `node ${SCRIPT} ${out}` }).runTurn(
      request({ item: null, role: 'spec-author', step: 'spec' }),
    );
    expect(JSON.parse(await readFile(out, 'utf8')).env).toMatchObject({
      CONSORT_ITEM: null,
      CONSORT_ROLE: 'spec-author',
      CONSORT_STEP: 'spec',
    });
  });

  it('reads a summary and token usage from CONSORT_RESULT', async () => {
    const result = await commandBackend({ command: `node ${SCRIPT} ${path.join(dir, 'r.json')} result` }).runTurn(
      request(),
    );
    expect(result).toMatchObject({
      summary: 'wrote the spec',
      usage: { inputTokens: 1200, outputTokens: 300, costUsd: 0.02 },
      exit: { kind: 'done' },
    });
  });

  it('reports a non-zero exit as a failed turn, with its last words', async () => {
    const result = await commandBackend({ command: `node ${SCRIPT} ${path.join(dir, 'f.json')} fail` }).runTurn(
      request(),
    );
    expect(result.exit).toEqual({ kind: 'failed', message: 'exit 3: cannot do it' });
  });

  it('stops a turn at its budget, and on abort', async () => {
    const slow = commandBackend({ command: `node ${SCRIPT} ${path.join(dir, 'h.json')} hang` });
    expect((await slow.runTurn(request({ budget: { timeoutMs: 500 } }))).exit.kind).toBe('timeout');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    expect((await slow.runTurn(request({ signal: controller.signal }))).exit.kind).toBe('aborted');
  });

  it('reports a command that does not exist', async () => {
    const result = await commandBackend({ command: 'consort-no-such-agent-xyz' }).runTurn(request());
    expect(result.exit).toMatchObject({ kind: 'failed', message: expect.stringContaining('command not found') });
  });
});
