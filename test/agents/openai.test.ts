/**
 * The `openai` backend against a local OpenAI-compatible endpoint that replays a scripted
 * conversation: what the backend offers and sends back, the tool loop's refusals, usage,
 * redaction of the API key, the step limit, timeouts and cancellation.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OPENAI_SIGN_IN_HINT, openaiBackend } from '../../src/agents/openai.js';
import type { ContextPack } from '../../src/conductor/context-pack.js';
import type { AgentTurnRequest } from '../../src/ports/agent-backend.js';
import { type Reply, scriptedServer, type ScriptedServer, toolResults } from './openai-server.js';

const API_KEY = 'sk-test-very-secret-key-1234';
let dir: string;
let outside: string;
let server: ScriptedServer | undefined;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-openai-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'consort-outside-'));
  await mkdir(path.join(dir, 'src'), { recursive: true });
  await writeFile(path.join(dir, 'src/shop.js'), 'export const shop = 1;\n');
  await writeFile(path.join(outside, 'secret.txt'), 'do not read me');
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

function request(extra: Partial<AgentTurnRequest> = {}): AgentTurnRequest {
  return {
    role: 'driver',
    step: 'green',
    feature: 'phones',
    item: 'T1',
    instructions: 'You are the driver. Make the failing test pass.',
    contextPack: { pack: {} as ContextPack, json: '{}', markdown: '# driver: green\nMake T1 pass.' },
    workspace: dir,
    writes: ['src/**'],
    branchUrl: 'postgres://agent:branch-password-42@127.0.0.1:1/shop',
    model: null,
    budget: { timeoutMs: 30_000, maxTurns: 10 },
    ...extra,
  };
}

async function backendWith(script: (body: Parameters<Parameters<typeof scriptedServer>[0]>[0], n: number) => Reply) {
  server = await scriptedServer(script);
  return openaiBackend({
    baseUrl: server.baseUrl,
    apiKey: API_KEY,
    model: 'test-model',
    headers: { 'x-gateway': 'consort' },
  });
}

describe('the openai backend', () => {
  it('runs a tool loop: offers the tools, sends the results back, writes in scope and counts tokens', async () => {
    const backend = await backendWith(
      (_body, n) =>
        [
          {
            calls: [
              { name: 'list_files', args: { path: '.' } },
              { name: 'read_file', args: { path: 'src/shop.js' } },
            ],
          },
          { calls: [{ name: 'write_file', args: { path: 'src/phones.js', content: 'export const phones = [];\n' } }] },
          { text: 'Added src/phones.js with an empty list.\n\nDetails follow.' },
        ][n]!,
    );
    const r = await backend.runTurn(request());
    expect(r.exit).toEqual({ kind: 'done' });
    expect(r.summary).toBe('Added src/phones.js with an empty list.');
    expect(r.usage).toEqual({ inputTokens: 300, outputTokens: 30 });
    expect(r.usage.costUsd).toBeUndefined();
    expect(await readFile(path.join(dir, 'src/phones.js'), 'utf8')).toBe('export const phones = [];\n');

    const reqs = server!.requests;
    expect(reqs).toHaveLength(3);
    const first = reqs[0]!;
    expect(first.body.stream).toBeFalsy();
    expect(first.body.model).toBe('test-model');
    expect(first.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(first.headers['x-gateway']).toBe('consort');
    expect(first.body.tools?.map((t) => t.function.name).sort()).toEqual([
      'list_files',
      'query_sql',
      'read_file',
      'run_suite',
      'write_file',
    ]);
    expect(first.body.messages.slice(0, 2)).toEqual([
      { role: 'system', content: 'You are the driver. Make the failing test pass.' },
      { role: 'user', content: '# driver: green\nMake T1 pass.' },
    ]);
    const results = toolResults(reqs[1]!.body);
    expect(results.get('call_1')).toContain('src/shop.js');
    expect(results.get('call_2')).toBe('export const shop = 1;\n');
    expect(toolResults(reqs[2]!.body).get('call_3')).toContain('wrote src/phones.js');

    expect(r.transcript).toContain('tool call write_file');
    expect(r.transcript).toContain('tool result read_file');
  });

  it('refuses writes outside the role scope and paths escaping the workspace, telling the model', async () => {
    const backend = await backendWith(
      (_body, n) =>
        [
          {
            calls: [
              { name: 'write_file', args: { path: 'test/shop.test.js', content: 'weakened' } },
              { name: 'write_file', args: { path: '../escape.js', content: 'x' } },
              { name: 'read_file', args: { path: path.join(outside, 'secret.txt') } },
              { name: 'read_file', args: { path: '../../etc/passwd' } },
              { name: 'list_files', args: { path: '..' } },
            ],
          },
          { text: 'Could not do it.' },
        ][n]!,
    );
    const r = await backend.runTurn(request());
    expect(r.exit).toEqual({ kind: 'done' });
    const results = [...toolResults(server!.requests[1]!.body).values()];
    expect(results[0]).toMatch(/^refused: test\/shop.test.js is outside this role's write scope/);
    expect(results.slice(1).every((m) => /^refused: .* is outside the workspace$/.test(m))).toBe(true);
    expect(results.join('\n')).not.toContain('do not read me');
    await expect(readFile(path.join(dir, 'test/shop.test.js'), 'utf8')).rejects.toThrow();
    await expect(readFile(path.join(path.dirname(dir), 'escape.js'), 'utf8')).rejects.toThrow();
  });

  it('never shows the API key or the branch password in the summary or transcript', async () => {
    const backend = await backendWith(
      (_body, n) =>
        [
          {
            calls: [
              {
                name: 'write_file',
                args: { path: 'src/leak.js', content: `const key = '${API_KEY}'; // branch-password-42` },
              },
            ],
          },
          { text: `Done; my key is ${API_KEY} and the branch is postgres://agent:branch-password-42@127.0.0.1:1/shop` },
        ][n]!,
    );
    const r = await backend.runTurn(request());
    for (const text of [r.summary, r.transcript]) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain('branch-password-42');
    }
    expect(r.summary).toContain('****');
  });

  it('bounds the transcript, keeping its start and its end', async () => {
    await writeFile(path.join(dir, 'src/big.js'), `// ${'x'.repeat(60_000)}\n`);
    const backend = await backendWith((_body, n) =>
      n === 0
        ? { calls: Array.from({ length: 40 }, () => ({ name: 'read_file', args: { path: 'src/big.js' } })) }
        : { text: 'Read it all.' },
    );
    const r = await backend.runTurn(request());
    expect(r.transcript.length).toBeLessThan(270 * 1024);
    expect(r.transcript).toMatch(/^## step 1\n/);
    expect(r.transcript).toMatch(/earlier entries dropped/);
    expect(r.transcript).toMatch(/assistant: Read it all\.$/);
  });

  it('masks credential headers but not other header values', async () => {
    server = await scriptedServer((body) => ({ text: `token gw-token-abcdef via consort-gateway for ${body.model}` }));
    const backend = openaiBackend({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      model: 'm',
      headers: { 'x-api-token': 'gw-token-abcdef', 'x-gateway': 'consort-gateway' },
    });
    const r = await backend.runTurn(request());
    expect(server.requests[0]!.headers['x-api-token']).toBe('gw-token-abcdef');
    expect(r.summary).toBe('token **** via consort-gateway for m');
  });

  it('stops the loop after budget.maxTurns steps', async () => {
    const backend = await backendWith(() => ({ calls: [{ name: 'list_files', args: { path: 'src' } }] }));
    const r = await backend.runTurn(request({ budget: { timeoutMs: 30_000, maxTurns: 3 } }));
    expect(server!.requests).toHaveLength(3);
    expect(r.exit).toEqual({ kind: 'done' });
    expect(r.summary).toMatch(/stopped after 3 steps/);
    expect(r.usage.inputTokens).toBe(300);
  });

  it('reports a timeout and a cancellation, and a failing endpoint without the key', async () => {
    const slow = await backendWith(() => ({ text: 'late', delayMs: 5_000 }));
    const timedOut = await slow.runTurn(request({ budget: { timeoutMs: 300 } }));
    expect(timedOut.exit.kind).toBe('timeout');

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const aborted = await slow.runTurn(request({ signal: controller.signal }));
    expect(aborted.exit.kind).toBe('aborted');
    await server!.close();

    server = await scriptedServer(() => {
      throw new Error(`upstream exploded for ${API_KEY}`);
    });
    const broken = openaiBackend({ baseUrl: server.baseUrl, apiKey: API_KEY, model: 'm' });
    const failed = await broken.runTurn(request());
    expect(failed.exit.kind).toBe('failed');
    expect(JSON.stringify(failed)).not.toContain(API_KEY);
    // A failing endpoint is the turn's failure; only a refused key stops the run.
    expect(failed.signInRefused).toBeUndefined();
    await server!.close();

    server = await scriptedServer(() => ({ status: 401 }));
    const refused = await openaiBackend({ baseUrl: server.baseUrl, apiKey: API_KEY, model: 'm' }).runTurn(request());
    expect(refused.exit.kind).toBe('failed');
    expect(refused.signInRefused).toBe(OPENAI_SIGN_IN_HINT);
    expect(server.requests).toHaveLength(1); // not retried
  }, 30_000);
});
