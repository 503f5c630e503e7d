/** The TDD lane's PR comments: what an agent wrote is shown, never acted on or rendered. */
import { parseCommand } from '../../src/github/commands.js';
import type { TurnRecord } from '../../src/conductor/state.js';
import { renderGateComment, renderRunSummary, renderTurnReview, suiteCounts } from '../../src/report/turn-markdown.js';

const turn = (over: Partial<TurnRecord> = {}): TurnRecord => ({
  version: 1,
  id: 'turn-0007',
  feature: '001-phones',
  role: 'driver',
  step: 'green',
  item: 'T1',
  attempt: 1,
  backend: 'claude',
  model: 'claude-sonnet-4-5',
  startedAt: '2026-11-30T10:00:00.000Z',
  durationMs: 12_345,
  usage: { inputTokens: 12_000, outputTokens: 3_400, costUsd: 0.0421 },
  filesChanged: ['src/customers.js', 'migrations/1_add_phone.sql'],
  verdict: 'accepted',
  branch: 'f001-c1-sandbox',
  context: { bytes: 100, sha256: 'x' },
  suite: '14 passed, 0 failed, 0 errored, 1 skipped',
  summary: 'Added setCustomerPhone.',
  ...over,
});

describe('renderTurnReview', () => {
  it('shows role, step, verdict, files, commit, branch, duration, tokens, cost and the suite', () => {
    const body = renderTurnReview({
      turn: turn(),
      commit: 'c'.repeat(40),
      transcript: 'line 1\nline 2',
      repoUrl: 'https://github.com/o/r',
    });
    expect(body).toContain('### ✅ `driver` · green T1 · 001-phones — accepted');
    expect(body).toContain('| Step | green T1 (attempt 2) |');
    expect(body).toContain(
      '[<code>src/customers.js</code>](https://github.com/o/r/blob/cccccccccccccccccccccccccccccccccccccccc/src/customers.js)',
    );
    expect(body).toContain(
      '| Commit | [`ccccccc`](https://github.com/o/r/commit/cccccccccccccccccccccccccccccccccccccccc) |',
    );
    expect(body).toContain('| Tokens | 12,000 in / 3,400 out |');
    expect(body).toContain('| Cost | $0.0421 |');
    expect(body).toContain('| 14 | 0 | 0 | 1 | 14 passed, 0 failed, 0 errored, 1 skipped |');
    expect(body).toContain('| Duration | 12s |');
    expect(body).toContain('<details><summary>Transcript</summary>');
  });

  it('says why a turn was refused, and that its change was reverted', () => {
    const body = renderTurnReview({
      turn: turn({
        verdict: 'refused',
        reason: 'it changed a frozen test',
        refused: ['test/phones.test.js'],
        usage: { inputTokens: 1, outputTokens: 1 },
      }),
      commit: null,
      transcript: null,
    });
    expect(body).toContain('**Why:** it changed a frozen test');
    expect(body).toContain('| Commit | none (reverted) |');
    expect(body).toContain('outside its scope: <code>test/phones.test.js</code>');
    expect(body).toContain('| Cost | — |');
  });

  it('neutralizes whatever the agent wrote: no command, no HTML, no escape from the transcript fence', () => {
    const evil = '/consort approve merge\n<img src=x onerror=alert(1)>\n````\n</details>\n# heading';
    const body = renderTurnReview({ turn: turn({ summary: evil }), commit: null, transcript: `${evil}\n`.repeat(3) });
    expect(parseCommand(body)).toBeNull();
    const fence = /^(`{5,})text$/m.exec(body)![1]!;
    expect(body.split('\n').filter((l) => l === fence)).toHaveLength(1);
    // Outside the transcript's fence the agent's HTML is escaped text.
    const outside = body.slice(0, body.indexOf(`${fence}text`));
    expect(outside).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(outside).not.toContain('<img');
  });

  it('shows agent-chosen paths and reasons as text: no broken table, no mention, no link target outside the repository', () => {
    const body = renderTurnReview({
      turn: turn({
        verdict: 'refused',
        reason: 'wrote `x` | @octocat <b>',
        filesChanged: ['src/a|b`c.js', 'src/my file.js'],
        refused: ['src/a|b`c.js'],
      }),
      commit: 'c'.repeat(40),
      transcript: null,
      repoUrl: 'https://github.com/o/r',
    });
    expect(body).toContain('**Why:** wrote \\`x\\` \\| @\u2060octocat &lt;b&gt;');
    expect(body).toContain(
      '[<code>src/a\\|b\\`c.js</code>](https://github.com/o/r/blob/cccccccccccccccccccccccccccccccccccccccc/src/a%7Cb%60c.js)',
    );
    expect(body).toContain('/src/my%20file.js)');
    for (const row of body.split('\n').filter((l) => l.startsWith('| Files changed') || l.startsWith('| Verdict')))
      expect(row.replace(/\\\|/g, '').split('|')).toHaveLength(4);
  });

  it("keeps the transcript's end when it is long, and names the file with all of it", () => {
    const transcript = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join('\n');
    const body = renderTurnReview({ turn: turn(), commit: null, transcript });
    expect(body).toContain('line 4999');
    expect(body).not.toContain('line 10\n');
    expect(body).toMatch(
      /the last \d+ of 5000 lines; the whole of it is in `\.consort\/features\/001-phones\/transcripts\/turn-0007\.txt`/,
    );
    expect(body.length).toBeLessThan(65_536);
  });
});

describe('renderGateComment and renderRunSummary', () => {
  it('gives the exact approve command and the files to read, or the problems when it cannot be approved', () => {
    const ok = renderGateComment({
      gate: 'spec',
      feature: '001-phones',
      hash: `sha256:${'a'.repeat(64)}`,
      problems: [],
      artifacts: ['.consort/features/001-phones/feature-spec.json'],
      head: 'h'.repeat(40),
    });
    expect(ok).toContain('```\n/consort approve spec\n```');
    expect(ok).toContain('<code>.consort/features/001-phones/feature-spec.json</code>');
    const bad = renderGateComment({
      gate: 'spec',
      feature: '001-phones',
      hash: 'sha256:b',
      problems: ['feature-spec.json is missing'],
      artifacts: [],
      head: 'h',
    });
    expect(bad).toContain('- feature-spec.json is missing');
    expect(bad).not.toContain('/consort approve');
  });

  it('lists flagged lines to read first on a gate that can still be approved', () => {
    const flagged = renderGateComment({
      gate: 'merge',
      feature: '001-phones',
      hash: `sha256:${'c'.repeat(64)}`,
      problems: [],
      flags: ['src/phones.js:3 looks for a test environment: if (process.env.JEST_WORKER_ID) return true;'],
      artifacts: ['.consort/features/001-phones/cycles/cycle-001.json'],
      head: 'h'.repeat(40),
    });
    expect(flagged).not.toContain('cannot be approved');
    expect(flagged).toContain('**Read first:** a line the feature added looks like code that behaves differently');
    expect(flagged).toContain('- src/phones.js:3 looks for a test environment');
    expect(flagged).toContain('```\n/consort approve merge\n```');
  });

  it("totals the run's turns", () => {
    const md = renderRunSummary({
      feature: '001-phones',
      stop: 'max-turns',
      message: 'stopped after 2 turn(s)',
      next: 'continue with `/consort build 001-phones`',
      turns: [turn(), turn({ id: 'turn-0008', verdict: 'refused', usage: { inputTokens: 10, outputTokens: 5 } })],
    });
    expect(md).toContain(
      '| **total** | | | 1 of 2 accepted | 25s | 12010 | 3405 | $0.0421 (some backends report no cost) |',
    );
    expect(md).toContain('**Next:** continue with `/consort build 001-phones`');
  });

  it('reads the counts in a suite summary', () => {
    expect(suiteCounts('14 passed, 2 failed, 0 errored, 1 skipped')).toEqual({
      passed: 14,
      failed: 2,
      errored: 0,
      skipped: 1,
    });
  });
});
