/**
 * The `codex` backend against an injected Codex client whose thread replays a recorded event
 * stream; and once with the real Codex SDK starting a stand-in CLI, to prove the CLI runs inside
 * the turn's isolation with its read-only folders.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CodexOptions, Input, ThreadEvent, ThreadOptions, TurnOptions } from '@openai/codex-sdk';
import { codexBackend, type CodexFactory } from '../../src/agents/codex.js';
import { API_KEY, BRANCH_URL, driverTurn, failedTurn } from '../fixtures/agent-streams/codex.js';
import { WORKSPACE, driverRequest } from './claude-codex-request.js';
import { fakeCli, withIsolation, type FakeCli } from './fake-cli.js';

interface Call {
  client: CodexOptions;
  thread?: ThreadOptions;
  input?: Input;
  turn?: TurnOptions;
}

function replay(
  events: readonly ThreadEvent[],
  calls: Call[],
  tail?: (signal: AbortSignal | undefined) => Promise<void>,
): CodexFactory {
  return (client) => {
    const call: Call = { client };
    calls.push(call);
    return {
      startThread(thread) {
        call.thread = thread;
        return {
          async runStreamed(input, turn) {
            call.input = input;
            call.turn = turn;
            async function* stream(): AsyncGenerator<ThreadEvent> {
              for (const event of events) yield event;
              if (tail) await tail(turn?.signal);
            }
            return { events: stream() };
          },
        };
      },
    };
  };
}

describe('the codex backend', () => {
  it('starts a sandboxed, never-asking thread in the workspace with the branch in the environment', async () => {
    const calls: Call[] = [];
    const backend = codexBackend({
      model: 'gpt-5-codex',
      apiKey: API_KEY,
      codex: replay(driverTurn, calls),
      env: { PATH: '/usr/bin', UNSET: undefined },
    });
    const result = await backend.runTurn(driverRequest(BRANCH_URL));
    expect(backend.name).toBe('codex');
    const call = calls[0]!;
    expect(call.client.apiKey).toBe(API_KEY);
    expect(call.client.env).toMatchObject({ PATH: '/usr/bin', DATABASE_URL: BRANCH_URL, PGPASSWORD: 's3cret-pw' });
    expect(call.client.env).not.toHaveProperty('UNSET');
    expect(call.thread).toMatchObject({
      workingDirectory: WORKSPACE,
      sandboxMode: 'workspace-write',
      approvalPolicy: 'never',
      model: 'gpt-5-codex',
    });
    expect(typeof call.input).toBe('string');
    expect(call.input).toContain('# Driver\nMake the failing test pass.');
    expect(call.input).toContain(driverRequest(BRANCH_URL).contextPack.markdown);
    expect(call.input).not.toContain('s3cret-pw');
    expect(call.turn?.signal).toBeInstanceOf(AbortSignal);

    expect(result.exit).toEqual({ kind: 'done' });
    expect(result.usage).toEqual({ inputTokens: 24_310, outputTokens: 1_904 });
    expect(result.summary).toBe('Implemented item counting in src/cart.ts; all 12 tests pass.');
    expect(result.transcript).toContain('outside writes: test/cart.test.ts');
    expect(result.transcript).not.toContain('s3cret-pw');
    expect(result.transcript).not.toContain(API_KEY);
  });

  it("prefers the turn's model", async () => {
    const calls: Call[] = [];
    await codexBackend({ model: 'gpt-5-codex', codex: replay(driverTurn, calls) }).runTurn(
      driverRequest(BRANCH_URL, { model: 'gpt-5.1-codex-max' }),
    );
    expect(calls[0]!.thread?.model).toBe('gpt-5.1-codex-max');
    expect(calls[0]!.client).not.toHaveProperty('apiKey');
  });

  it('maps a failed turn to a failed exit without the key', async () => {
    const result = await codexBackend({ apiKey: API_KEY, codex: replay(failedTurn, []) }).runTurn(
      driverRequest(BRANCH_URL),
    );
    expect(result.exit).toEqual({ kind: 'failed', message: 'stream disconnected before completion (****)' });
  });

  it('honours the abort signal: the run is told to stop and the turn ends aborted', async () => {
    const calls: Call[] = [];
    const cancel = new AbortController();
    const waitForAbort = (signal: AbortSignal | undefined) =>
      new Promise<void>((_, reject) => {
        signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
    const pending = codexBackend({ codex: replay(driverTurn.slice(0, 2), calls, waitForAbort) }).runTurn(
      driverRequest(BRANCH_URL, { signal: cancel.signal }),
    );
    setTimeout(() => cancel.abort(), 20);
    expect((await pending).exit).toEqual({ kind: 'aborted', message: 'the run was cancelled' });
    expect(calls[0]!.turn?.signal?.aborted).toBe(true);
  });

  it('times out a run that ignores its signal', async () => {
    const hang = () => new Promise<void>(() => undefined);
    const result = await codexBackend({ codex: replay(driverTurn.slice(0, 2), [], hang) }).runTurn(
      driverRequest(BRANCH_URL, { budget: { timeoutMs: 30 } }),
    );
    expect(result.exit.kind).toBe('timeout');
  });

  it('reports a CLI failure without the secrets it may carry', async () => {
    const broken: CodexFactory = () => ({
      startThread: () => ({
        runStreamed: async () => {
          throw new Error(`Codex Exec exited with code 1: ${BRANCH_URL} ${API_KEY}`);
        },
      }),
    });
    const result = await codexBackend({ apiKey: API_KEY, codex: broken }).runTurn(driverRequest(BRANCH_URL));
    expect(result.exit.kind).toBe('failed');
    expect(JSON.stringify(result)).not.toContain('s3cret-pw');
    expect(JSON.stringify(result)).not.toContain(API_KEY);
  });
});

describe('the codex backend starts the Codex CLI inside the turn isolation', () => {
  let cli: FakeCli;
  beforeEach(async () => {
    cli = await fakeCli(driverTurn);
  });
  afterEach(() => cli.dispose());

  it('under bubblewrap, in a PID namespace of its own, where the read-only folder cannot be written', async () => {
    // The real Codex SDK spawns the "CLI" (the stand-in), so what reaches it is what a real turn's CLI gets.
    const result = await withIsolation('bwrap', () =>
      codexBackend({ cli: cli.script, env: { PATH: process.env.PATH } }).runTurn(
        driverRequest(BRANCH_URL, { workspace: cli.dir, readOnly: [cli.locked] }),
      ),
    );
    expect(result.exit).toEqual({ kind: 'done' });
    expect(result.summary).toBe('Implemented item counting in src/cart.ts; all 12 tests pass.');
    const seen = await cli.seen();
    expect(seen.write).toBe('EROFS');
    expect(seen.pid).toBeLessThanOrEqual(2); // bubblewrap's init is pid 1
    expect(await readFile(path.join(cli.locked, 'dep.js'), 'utf8')).toBe('original\n');
  });
});
