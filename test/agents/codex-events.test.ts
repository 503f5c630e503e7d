/** The `codex` backend's pure mapping: recorded thread events to turn results. */
import { mapCodexTurn, type CodexMappingOptions } from '../../src/agents/codex-events.js';
import { connectionSecrets } from '../../src/core/redact.js';
import { API_KEY, BRANCH_URL, WORKSPACE, driverTurn, failedTurn, unfinished } from '../fixtures/agent-streams/codex.js';

const options = (over: Partial<CodexMappingOptions> = {}): CodexMappingOptions => ({
  workspace: WORKSPACE,
  writes: ['src/**'],
  secrets: [...connectionSecrets(BRANCH_URL), API_KEY],
  end: { kind: 'completed' },
  durationMs: 12_000,
  ...over,
});

describe('a Codex stream mapped to a turn result', () => {
  it('takes the summary from the last agent message and records tokens, never a cost', () => {
    const result = mapCodexTurn(driverTurn, options());
    expect(result.exit).toEqual({ kind: 'done' });
    expect(result.summary).toBe('Implemented item counting in src/cart.ts; all 12 tests pass.');
    expect(result.usage).toEqual({ inputTokens: 24_310, outputTokens: 1_904 });
    expect('costUsd' in result.usage).toBe(false);
    expect(result.durationMs).toBe(12_000);
  });

  it('writes commands, file changes and messages to the transcript, noting changes outside writes', () => {
    const { transcript } = mapCodexTurn(driverTurn, options());
    expect(transcript).toContain("$ bash -lc 'npm test' (started)");
    expect(transcript).toContain("$ bash -lc 'npm test' (exit 0)");
    expect(transcript).toContain('files completed: update /work/ws/src/cart.ts, update /work/ws/test/cart.test.ts');
    expect(transcript).toContain(
      "outside writes: test/cart.test.ts is outside this role's writes (src/**) (the conductor reverts it)",
    );
    expect(transcript).not.toContain('outside writes: src/cart.ts');
    expect(transcript).toContain('agent: Implemented item counting');
    expect(transcript).toContain('[turn completed] 24310 input tokens, 1904 output tokens');
    expect(transcript).not.toContain('Planning the change');
  });

  it('never lets the branch password or the API key out', () => {
    const done = mapCodexTurn(driverTurn, options());
    expect(done.transcript).toContain('postgresql://postgres:****@127.0.0.1:5999/f001-t1');
    expect(done.transcript).not.toContain('s3cret-pw');
    const failed = mapCodexTurn(failedTurn, options());
    expect(JSON.stringify(failed)).not.toContain(API_KEY);
  });

  it('maps turn.failed to a failed exit with its message', () => {
    const result = mapCodexTurn(failedTurn, options());
    expect(result.exit).toEqual({ kind: 'failed', message: 'stream disconnected before completion (****)' });
    expect(result.summary).toBe('Starting on the cart module.');
    expect(result.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it('fails a stream that stops before the turn completes, and reports timeouts and cancellations', () => {
    expect(mapCodexTurn(unfinished, options()).exit).toEqual({
      kind: 'failed',
      message: 'the agent ended without completing the turn',
    });
    expect(
      mapCodexTurn(unfinished, options({ end: { kind: 'error', message: 'Codex Exec exited with code 1' } })).exit,
    ).toEqual({ kind: 'failed', message: 'Codex Exec exited with code 1' });
    expect(mapCodexTurn(unfinished, options({ end: { kind: 'timeout', timeoutMs: 120_000 } })).exit).toEqual({
      kind: 'timeout',
      message: 'no result within 120s',
    });
    expect(mapCodexTurn(driverTurn, options({ end: { kind: 'aborted' } })).exit).toEqual({
      kind: 'aborted',
      message: 'the run was cancelled',
    });
  });

  it('accepts file changes reported relative to the workspace', () => {
    const { transcript } = mapCodexTurn(
      [
        {
          type: 'item.completed',
          item: {
            id: 'i',
            type: 'file_change',
            changes: [
              { path: 'test/x.test.ts', kind: 'add' },
              { path: 'src/x.ts', kind: 'add' },
            ],
            status: 'completed',
          },
        },
      ],
      options(),
    );
    expect(transcript.match(/outside writes/g)).toHaveLength(1);
    expect(transcript).toContain('outside writes: test/x.test.ts');
  });
});
