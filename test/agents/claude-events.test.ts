/** The `claude` backend's pure mapping: write-scope decisions and recorded SDK streams to turn results. */
import {
  CLAUDE_SIGN_IN_HINT,
  boundTranscript,
  editToolDecision,
  mapClaudeTurn,
  pathInScope,
  type ClaudeMappingOptions,
} from '../../src/agents/claude-events.js';
import { connectionSecrets } from '../../src/core/redact.js';
import {
  API_KEY,
  BRANCH_URL,
  driverSuccess,
  maxBudget,
  maxTurns,
  noResult,
  notLoggedIn,
  withSubagent,
} from '../fixtures/agent-streams/claude.js';

const WS = '/work/ws';
const SECRETS = [...connectionSecrets(BRANCH_URL), API_KEY];
const completed = (over: Partial<ClaudeMappingOptions> = {}): ClaudeMappingOptions => ({
  secrets: SECRETS,
  end: { kind: 'completed' },
  durationMs: 41_300,
  ...over,
});

describe('the write scope of a Claude edit', () => {
  it.each([
    ['src/cart.ts', true],
    [`${WS}/src/deep/cart.ts`, true],
    ['test/cart.test.ts', false],
    [`${WS}/test/cart.test.ts`, false],
    ['../other/src/cart.ts', false],
    ['/etc/passwd', false],
    [`${WS}/src/../../ws2/src/x.ts`, false],
    [WS, false],
  ])('%s in src/** -> %s', (file, allowed) => {
    expect(pathInScope(WS, ['src/**'], file).allow).toBe(allowed);
  });

  it('names the reason: outside the workspace, or outside the writes', () => {
    expect(pathInScope(WS, ['src/**'], '../x.ts')).toEqual({
      allow: false,
      reason: '../x.ts is outside the workspace',
    });
    expect(pathInScope(WS, ['src/**'], 'test/a.test.ts')).toEqual({
      allow: false,
      reason: "test/a.test.ts is outside this role's writes (src/**)",
    });
    expect(pathInScope(WS, ['**', '!test/**'], 'README.md')).toEqual({ allow: true, path: 'README.md' });
  });

  it('judges only the editing tools, by their path field', () => {
    expect(editToolDecision(WS, ['src/**'], 'Write', { file_path: `${WS}/test/a.test.ts`, content: '' })?.allow).toBe(
      false,
    );
    expect(editToolDecision(WS, ['src/**'], 'Edit', { file_path: `${WS}/src/a.ts` })?.allow).toBe(true);
    // MultiEdit left the SDK (sdk-tools.d.ts); the backend offers only the tools in CLAUDE_TOOLS.
    expect(editToolDecision(WS, ['src/**'], 'MultiEdit', { file_path: 'test/a.ts' })).toBeNull();
    expect(editToolDecision(WS, ['src/**'], 'NotebookEdit', { notebook_path: 'test/a.ipynb' })?.allow).toBe(false);
    expect(editToolDecision(WS, ['src/**'], 'Write', {})).toEqual({
      allow: false,
      reason: 'Write without a file_path',
    });
    expect(editToolDecision(WS, ['src/**'], 'Bash', { command: 'echo > test/a.ts' })).toBeNull();
    expect(editToolDecision(WS, ['src/**'], 'Read', { file_path: '/etc/passwd' })).toBeNull();
  });
});

describe('a Claude stream mapped to a turn result', () => {
  it("counts every model's tokens (modelUsage), not only the main loop's (usage)", () => {
    const result = mapClaudeTurn(withSubagent, completed());
    expect(result.usage).toEqual({
      inputTokens: 15_000 + 30_000 + 5_000 + 3_000 + 1_000,
      outputTokens: 2_400 + 500,
      costUsd: 0.2011,
    });
  });

  it('takes the summary from the result, usage and cost from the result message', () => {
    const result = mapClaudeTurn(driverSuccess, completed());
    expect(result.exit).toEqual({ kind: 'done' });
    expect(result.summary).toBe('Implemented cart item counting in src/cart.ts. All 12 tests pass.');
    expect(result.usage).toEqual({ inputTokens: 15_000 + 30_000 + 5_000, outputTokens: 2_400, costUsd: 0.1834 });
    expect(result.durationMs).toBe(41_300);
    expect(result.transcript).toContain('[init] model claude-sonnet-4-5, permission mode acceptEdits, 8 tools');
    expect(result.transcript).toContain('tool Write: {"file_path":"/work/ws/test/cart.test.ts"');
    expect(result.transcript).toContain(
      "tool error: Consort: test/cart.test.ts is outside this role's writes (src/**)",
    );
    expect(result.transcript).toContain('[result] success after 4 turns, $0.1834');
  });

  it('never lets the branch password or the API key into the transcript', () => {
    const result = mapClaudeTurn(driverSuccess, completed());
    expect(result.transcript).toContain('postgresql://postgres:****@127.0.0.1:5999/f001-t1');
    expect(result.transcript).not.toContain('s3cret-pw');
    const withKey = mapClaudeTurn(
      driverSuccess,
      completed({ end: { kind: 'error', message: `401 for key ${API_KEY}` } }),
    );
    expect(JSON.stringify(withKey)).not.toContain(API_KEY);
  });

  it('maps the turn limit to a failed exit that says so', () => {
    const result = mapClaudeTurn(maxTurns, completed({ maxTurns: 3 }));
    expect(result.exit).toEqual({ kind: 'failed', message: 'budget: stopped at the turn limit (3 turns)' });
    expect(result.usage.costUsd).toBe(0.0921);
    expect(result.summary).toBe('budget: stopped at the turn limit (3 turns)');
  });

  it('maps the cost cap to a failed exit that says so', () => {
    const result = mapClaudeTurn(maxBudget, completed({ maxBudgetUsd: 0.5 }));
    expect(result.exit).toEqual({
      kind: 'failed',
      message: 'budget: stopped at the cost cap of $0.50 ($0.5071 spent)',
    });
    expect(result.usage).toEqual({ inputTokens: 50_000, outputTokens: 2_400, costUsd: 0.5071 });
  });

  it('fails a stream without a result, keeping what the agent last said', () => {
    const result = mapClaudeTurn(noResult, completed());
    expect(result.exit).toEqual({ kind: 'failed', message: 'the agent ended without a result' });
    expect(result.summary).toBe('Looking at the cart module.');
    expect(result.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it('reports timeouts and cancellations over whatever came before', () => {
    expect(mapClaudeTurn(noResult, completed({ end: { kind: 'timeout', timeoutMs: 90_000 } })).exit).toEqual({
      kind: 'timeout',
      message: 'no result within 90s',
    });
    expect(mapClaudeTurn(driverSuccess, completed({ end: { kind: 'aborted' } })).exit).toEqual({
      kind: 'aborted',
      message: 'the run was cancelled',
    });
  });

  it('keeps a finished turn done when the process fails after its result', () => {
    const result = mapClaudeTurn(
      driverSuccess,
      completed({ end: { kind: 'error', message: 'Claude Code process exited with code 1' } }),
    );
    expect(result.exit).toEqual({ kind: 'done' });
    expect(result.transcript).toContain('[error] Claude Code process exited with code 1');
    expect(mapClaudeTurn([], completed({ end: { kind: 'error', message: 'spawn ENOENT' } })).exit).toEqual({
      kind: 'failed',
      message: 'spawn ENOENT',
    });
  });

  it('says where the key comes from when Claude Code is not signed in, not only "run /login"', () => {
    const result = mapClaudeTurn(
      notLoggedIn,
      completed({
        end: { kind: 'error', message: 'Claude Code returned an error result: Not logged in · Please run /login' },
      }),
    );
    expect(result.exit).toEqual({
      kind: 'failed',
      message:
        'Not logged in · Please run /login (the claude backend could not sign in: export ANTHROPIC_API_KEY (or the variable agent.apiKeyEnv names) before `consort run`)',
    });
    // No turn can run without credentials: the lane stops the run with this (turn.ts) rather than retrying.
    expect(result.signInRefused).toBe(CLAUDE_SIGN_IN_HINT);
    // Any other failure is left as it was.
    expect(mapClaudeTurn(noResult, completed()).exit).toEqual({
      kind: 'failed',
      message: 'the agent ended without a result',
    });
    expect(mapClaudeTurn(noResult, completed()).signInRefused).toBeUndefined();
  });

  it('bounds the transcript, keeping its end', () => {
    const text = boundTranscript(['a'.repeat(100), 'the end'], 50);
    expect(text.endsWith('the end')).toBe(true);
    expect(text).toMatch(/^\[\.\.\. 58 earlier characters dropped\]\n/);
  });
});
