/**
 * The `claude` backend against an injected `query`: the SDK boundary replays a recorded stream and,
 * as Claude Code does, asks the PreToolUse hooks about each tool call before "running" it. Once
 * the stand-in starts a CLI through the spawn function the backend hands the SDK, to prove Claude
 * Code runs inside the turn's isolation with its read-only folders.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { HookJSONOutput, Options, PreToolUseHookInput, SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import { CLAUDE_TOOLS, claudeBackend, writeScopeHook, type ClaudeQuery } from '../../src/agents/claude.js';
import {
  API_KEY,
  BRANCH_URL,
  SESSION,
  driverSuccess,
  init,
  maxBudget,
  maxTurns,
} from '../fixtures/agent-streams/claude.js';
import { WORKSPACE, driverRequest } from './claude-codex-request.js';
import { fakeCli, withIsolation, type FakeCli } from './fake-cli.js';

interface Call {
  prompt: string;
  options: Options;
  decisions: { tool: string; output: HookJSONOutput }[];
}

function hookInput(toolName: string, toolInput: unknown, id: string): PreToolUseHookInput {
  return {
    hook_event_name: 'PreToolUse',
    session_id: SESSION,
    transcript_path: '/tmp/t.jsonl',
    cwd: WORKSPACE,
    tool_name: toolName,
    tool_input: toolInput,
    tool_use_id: id,
  };
}

/** A replaying `query`: runs the matching PreToolUse hooks for each tool_use, then yields the message. */
function replay(
  messages: readonly SDKMessage[],
  calls: Call[],
  tail?: (signal: AbortSignal) => Promise<void>,
): ClaudeQuery {
  return ({ prompt, options = {} }) => {
    const call: Call = { prompt, options, decisions: [] };
    calls.push(call);
    const signal = options.abortController?.signal ?? new AbortController().signal;
    async function* stream(): AsyncGenerator<SDKMessage, void> {
      for (const message of messages) {
        if (message.type === 'assistant') {
          for (const block of message.message.content) {
            if (block.type !== 'tool_use') continue;
            for (const matcher of options.hooks?.PreToolUse ?? []) {
              if (matcher.matcher !== undefined && !new RegExp(`^(?:${matcher.matcher})$`).test(block.name)) continue;
              for (const hook of matcher.hooks)
                call.decisions.push({
                  tool: block.name,
                  output: await hook(hookInput(block.name, block.input, block.id), block.id, { signal }),
                });
            }
          }
        }
        yield message;
      }
      if (tail) await tail(signal);
    }
    return stream();
  };
}

function denied(output: HookJSONOutput): string | undefined {
  if ('async' in output) return undefined;
  const specific = output.hookSpecificOutput;
  return specific?.hookEventName === 'PreToolUse' && specific.permissionDecision === 'deny'
    ? specific.permissionDecisionReason
    : undefined;
}

describe('the claude backend', () => {
  it('runs one query in the workspace with the budget, model, headless permissions and the branch in the environment', async () => {
    const calls: Call[] = [];
    const backend = claudeBackend({
      model: 'claude-sonnet-4-5',
      apiKey: API_KEY,
      query: replay(driverSuccess, calls),
      env: { PATH: '/usr/bin' },
    });
    const result = await backend.runTurn(driverRequest(BRANCH_URL));
    expect(backend.name).toBe('claude');
    expect(calls).toHaveLength(1);
    const { prompt, options } = calls[0]!;
    expect(options).toMatchObject({
      cwd: WORKSPACE,
      model: 'claude-sonnet-4-5',
      maxTurns: 12,
      maxBudgetUsd: 0.5,
      permissionMode: 'dontAsk',
      settingSources: ['project'],
    });
    // `tools` is what the model can use at all; `allowedTools` only spares the asking.
    expect(options.tools).toEqual(CLAUDE_TOOLS);
    expect(options.allowedTools).toEqual(CLAUDE_TOOLS);
    expect([...CLAUDE_TOOLS].sort()).toEqual([
      'Bash',
      'Edit',
      'Glob',
      'Grep',
      'NotebookEdit',
      'Read',
      'TodoWrite',
      'Write',
    ]);
    // The write-scope hook fails closed: a hook that throws blocks the edit.
    expect(options.hooks?.PreToolUse?.[0]).toMatchObject({ matcher: 'Write|Edit|NotebookEdit', onFailure: 'block' });
    expect(options.env).toMatchObject({
      PATH: '/usr/bin',
      DATABASE_URL: BRANCH_URL,
      PGPASSWORD: 's3cret-pw',
      ANTHROPIC_API_KEY: API_KEY,
    });
    expect(prompt.startsWith('# Driver\nMake the failing test pass.\n\n')).toBe(true);
    expect(prompt).toContain(driverRequest(BRANCH_URL).contextPack.markdown);
    expect(prompt).not.toContain('s3cret-pw');
    expect(result.exit).toEqual({ kind: 'done' });
    expect(result.usage).toEqual({ inputTokens: 50_000, outputTokens: 2_400, costUsd: 0.1834 });
    expect(result.summary).toBe('Implemented cart item counting in src/cart.ts. All 12 tests pass.');
    expect(result.transcript).not.toContain('s3cret-pw');
    expect(result.transcript).not.toContain(API_KEY);
  });

  it('offers only tools the installed SDK defines (sdk-tools.d.ts), by their input types', async () => {
    const types = await readFile(
      new URL('../../node_modules/@anthropic-ai/claude-agent-sdk/sdk-tools.d.ts', import.meta.url),
      'utf8',
    );
    const input: Record<string, string> = {
      Read: 'FileReadInput',
      Write: 'FileWriteInput',
      Edit: 'FileEditInput',
      NotebookEdit: 'NotebookEditInput',
      Glob: 'GlobInput',
      Grep: 'GrepInput',
      Bash: 'BashInput',
      TodoWrite: 'TodoWriteInput',
    };
    for (const tool of CLAUDE_TOOLS)
      expect([tool, types.includes(`export interface ${input[tool]} {`)]).toEqual([tool, true]);
    // The fields the write-scope hook reads are the ones the SDK's edit tools take.
    expect(types).toMatch(/export interface FileWriteInput \{[^}]*\bfile_path: string/);
    expect(types).toMatch(/export interface FileEditInput \{[^}]*\bfile_path: string/);
    expect(types).toMatch(/export interface NotebookEditInput \{[^}]*\bnotebook_path: string/);
  });

  it("prefers the turn's model and leaves out limits the budget does not set", async () => {
    const calls: Call[] = [];
    await claudeBackend({ model: 'claude-sonnet-4-5', query: replay(driverSuccess, calls) }).runTurn(
      driverRequest(BRANCH_URL, { model: 'claude-opus-4-1', budget: { timeoutMs: 5_000 } }),
    );
    expect(calls[0]!.options.model).toBe('claude-opus-4-1');
    expect(calls[0]!.options).not.toHaveProperty('maxTurns');
    expect(calls[0]!.options).not.toHaveProperty('maxBudgetUsd');
    expect(calls[0]!.options.env).not.toHaveProperty('ANTHROPIC_API_KEY', API_KEY);
  });

  it("denies the driver's write to a test file and allows its edit under src/", async () => {
    const calls: Call[] = [];
    await claudeBackend({ query: replay(driverSuccess, calls) }).runTurn(driverRequest(BRANCH_URL));
    const decisions = calls[0]!.decisions.map((d) => ({ tool: d.tool, denied: denied(d.output) }));
    expect(decisions).toEqual([
      { tool: 'Write', denied: "Consort: test/cart.test.ts is outside this role's writes (src/**)" },
      { tool: 'Edit', denied: undefined },
    ]);
  });

  it('denies edits that leave the workspace and ignores tools that do not edit', async () => {
    const hook = writeScopeHook(WORKSPACE, ['src/**']);
    const { signal } = new AbortController();
    expect(
      denied(
        await hook(hookInput('Edit', { file_path: `${WORKSPACE}/src/../../elsewhere/src/x.ts` }, 't1'), 't1', {
          signal,
        }),
      ),
    ).toMatch(/outside the workspace/);
    expect(
      denied(await hook(hookInput('NotebookEdit', { notebook_path: 'test/n.ipynb' }, 't2'), 't2', { signal })),
    ).toMatch(/outside this role's writes/);
    expect(await hook(hookInput('Bash', { command: 'npm test' }, 't3'), 't3', { signal })).toEqual({});
    expect(await hook(hookInput('Write', { file_path: 'src/new.ts', content: '' }, 't4'), 't4', { signal })).toEqual(
      {},
    );
  });

  it('maps the SDK budget stops to failed exits with the reason', async () => {
    const turns = await claudeBackend({ query: replay(maxTurns, []) }).runTurn(
      driverRequest(BRANCH_URL, { budget: { timeoutMs: 5_000, maxTurns: 3 } }),
    );
    expect(turns.exit).toEqual({ kind: 'failed', message: 'budget: stopped at the turn limit (3 turns)' });
    const cost = await claudeBackend({ query: replay(maxBudget, []) }).runTurn(driverRequest(BRANCH_URL));
    expect(cost.exit).toEqual({ kind: 'failed', message: 'budget: stopped at the cost cap of $0.50 ($0.5071 spent)' });
    expect(cost.usage.costUsd).toBe(0.5071);
  });

  it('honours the abort signal: the SDK is told to stop and the turn ends aborted', async () => {
    const calls: Call[] = [];
    const cancel = new AbortController();
    const waitForAbort = (signal: AbortSignal) =>
      new Promise<void>((_, reject) => {
        signal.addEventListener('abort', () => reject(new Error('Claude Code process aborted by user')), {
          once: true,
        });
      });
    const pending = claudeBackend({ query: replay([init], calls, waitForAbort) }).runTurn(
      driverRequest(BRANCH_URL, { signal: cancel.signal }),
    );
    setTimeout(() => cancel.abort(), 20);
    const result = await pending;
    expect(result.exit).toEqual({ kind: 'aborted', message: 'the run was cancelled' });
    expect(calls[0]!.options.abortController?.signal.aborted).toBe(true);
  });

  it('ends the turn on the abort signal even when the stream ignores it', async () => {
    const cancel = new AbortController();
    const closed: string[] = [];
    const hanging: ClaudeQuery = () => {
      async function* stream(): AsyncGenerator<SDKMessage, void> {
        yield init;
        await new Promise<never>(() => undefined);
      }
      return Object.assign(stream(), { close: () => void closed.push('closed') });
    };
    const pending = claudeBackend({ query: hanging }).runTurn(driverRequest(BRANCH_URL, { signal: cancel.signal }));
    setTimeout(() => cancel.abort(), 20);
    expect((await pending).exit.kind).toBe('aborted');
    expect(closed).toEqual(['closed']);
  });

  it('does not start a query when the signal is already aborted', async () => {
    const calls: Call[] = [];
    const result = await claudeBackend({ query: replay(driverSuccess, calls) }).runTurn(
      driverRequest(BRANCH_URL, { signal: AbortSignal.abort() }),
    );
    expect(calls).toHaveLength(0);
    expect(result.exit.kind).toBe('aborted');
  });

  it('times out a turn that runs past its budget', async () => {
    const result = await claudeBackend({ query: replay([init], [], () => new Promise<void>(() => undefined)) }).runTurn(
      driverRequest(BRANCH_URL, { budget: { timeoutMs: 30 } }),
    );
    expect(result.exit).toEqual({ kind: 'timeout', message: 'no result within 0s' });
  });

  it('reports an SDK failure without the secrets it may carry', async () => {
    const failing: ClaudeQuery = () => {
      async function* stream(): AsyncGenerator<SDKMessage, void> {
        yield init;
        throw new Error(`Claude Code process exited with code 1: connect ${BRANCH_URL} with ${API_KEY}`);
      }
      return stream();
    };
    const result = await claudeBackend({ apiKey: API_KEY, query: failing }).runTurn(driverRequest(BRANCH_URL));
    expect(result.exit.kind).toBe('failed');
    expect(JSON.stringify(result)).not.toContain('s3cret-pw');
    expect(JSON.stringify(result)).not.toContain(API_KEY);
    expect(result.transcript).toContain('[error] Claude Code process exited with code 1');
  });
});

describe('the claude backend starts Claude Code inside the turn isolation', () => {
  let cli: FakeCli;
  beforeEach(async () => {
    cli = await fakeCli(driverSuccess);
  });
  afterEach(() => cli.dispose());

  /** Starts the CLI as the SDK does when given `spawnClaudeCodeProcess`, and yields the messages it prints. */
  const spawning = (script: string): ClaudeQuery => {
    return ({ options = {} }) => {
      async function* stream(): AsyncGenerator<SDKMessage, void> {
        const spawn = options.spawnClaudeCodeProcess;
        if (!spawn) throw new Error('the backend gave the SDK no spawn function');
        const child = spawn({
          command: process.execPath,
          args: [script, '--output-format', 'stream-json'],
          cwd: options.cwd,
          env: options.env ?? {},
          signal: options.abortController?.signal ?? new AbortController().signal,
        });
        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        child.stdin.end();
        for await (const line of createInterface({ input: child.stdout })) yield JSON.parse(line) as SDKMessage;
        if ((await exited) !== 0) throw new Error('the CLI failed');
      }
      return stream();
    };
  };

  it('under bubblewrap, in a PID namespace of its own, where the read-only folder cannot be written', async () => {
    const result = await withIsolation('bwrap', () =>
      claudeBackend({ query: spawning(cli.script), env: { PATH: process.env.PATH } }).runTurn(
        driverRequest(BRANCH_URL, { workspace: cli.dir, readOnly: [cli.locked] }),
      ),
    );
    expect(result.exit).toEqual({ kind: 'done' });
    expect(result.summary).toBe('Implemented cart item counting in src/cart.ts. All 12 tests pass.');
    const seen = await cli.seen();
    expect(seen.write).toBe('EROFS');
    expect(seen.pid).toBeLessThanOrEqual(2); // bubblewrap's init is pid 1
    expect(await readFile(path.join(cli.locked, 'dep.js'), 'utf8')).toBe('original\n');
  });
});
