/**
 * A job that GitHub rate-limited comes back when GitHub said it may, not after the queue's own few
 * seconds: GitHub warns that requests made while limited can get an integration banned. The errors
 * are Octokit's own RequestErrors, as the throttling plugin leaves them once it gives up, wrapped
 * as the GitHub adapter wraps them.
 */
import { RequestError } from '@octokit/request-error';
import { startQueue, QUEUES, type JobDeferral, type QueueRuntime } from '../../app/queue.js';
import { rateLimitWait } from '../../src/github/rate-limit.js';
import { GitHubApiError } from '../../src/ports/github.js';
import { query } from '../helpers/servers.js';
import { freshDatabase, type TestDatabase } from './helpers/database.js';
import { eventually } from './helpers/wait.js';

function githubRefused(status: number, message: string, headers: Record<string, string>): GitHubApiError {
  const url = 'https://api.github.com/repos/o/r/check-runs';
  const cause = new RequestError(message, status, {
    request: { method: 'POST', url, headers: {} },
    response: { status, url, headers, data: { message } },
  });
  return new GitHubApiError(status, `GitHub API create check run failed (HTTP ${status}): ${message}`, { cause });
}
const secondary = (retryAfter?: number) =>
  githubRefused(
    403,
    'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
    retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) },
  );

describe('rateLimitWait: the wait GitHub asked for', () => {
  const now = Date.parse('2026-12-05T01:00:00Z');
  it.each([
    ['a secondary limit with retry-after', secondary(120), 120],
    ['a secondary limit without it: a minute', secondary(), 60],
    ['a 429 with retry-after', githubRefused(429, 'Too Many Requests', { 'retry-after': '7' }), 7],
    [
      'the primary limit: until x-ratelimit-reset, and a second',
      githubRefused(403, 'API rate limit exceeded for installation ID 42.', {
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(now / 1000 + 900),
      }),
      901,
    ],
  ])('%s', (_what, error, seconds) => {
    expect(rateLimitWait(error, now)).toBe(seconds);
    expect(rateLimitWait(error.cause, now)).toBe(seconds);
  });

  it('not a rate limit: a 403 for a missing permission, a 422, any other error', () => {
    expect(rateLimitWait(githubRefused(403, 'Resource not accessible by integration', {}), now)).toBeNull();
    expect(rateLimitWait(githubRefused(422, 'Validation Failed', { 'retry-after': '5' }), now)).toBeNull();
    expect(rateLimitWait(new Error('socket hang up'), now)).toBeNull();
  });
});

describe('the queue', () => {
  let db: TestDatabase;
  let queue: QueueRuntime;
  const deferred: JobDeferral[] = [];
  const failures: unknown[] = [];

  beforeAll(async () => {
    db = await freshDatabase();
    queue = await startQueue({
      url: db.url,
      quickConcurrency: 1,
      runConcurrency: 1,
      runExpireSeconds: 60,
      sweepCron: '0 0 1 1 *',
      pollingSeconds: 0.5,
      onJobDeferred: (d) => deferred.push(d),
      onJobFailed: (f) => failures.push(f),
    });
    await queue.startWorkers({
      quick: async (job) => {
        throw job.kind === 'announce' && job.runId === 1 ? secondary(120) : new Error('an unexpected error');
      },
      run: async () => undefined,
      sweep: async () => undefined,
    });
  });
  afterAll(async () => {
    await queue?.stop({ graceful: false });
    await db?.drop();
  });

  /** Seconds from now until the queue next starts a job of `runId` (pending or waiting to retry). */
  const nextStartIn = async (runId: number): Promise<number[]> =>
    (
      await query<{ s: number }>(
        db.url,
        `SELECT EXTRACT(EPOCH FROM start_after - now())::float AS s FROM pgboss.job
         WHERE name = '${QUEUES.quick}' AND state IN ('created', 'retry') AND (data->>'runId')::int = ${runId}`,
      )
    ).map((r) => r.s);

  it("a job GitHub rate-limited starts again after GitHub's retry-after (120 s), not the queue's 2 s", async () => {
    await queue.sendQuick({ kind: 'announce', runId: 1 });
    queue.wake();
    await eventually(async () => deferred.length === 1, 'the deferral');
    expect(deferred[0]).toMatchObject({ queue: QUEUES.quick, seconds: 120, data: { kind: 'announce', runId: 1 } });
    const next = await nextStartIn(1);
    expect(next).toHaveLength(1);
    expect(next[0]).toBeGreaterThan(110);
    expect(failures).toEqual([]);
  });

  it("any other failure keeps the queue's own retry", async () => {
    await queue.sendQuick({ kind: 'announce', runId: 2 });
    queue.wake();
    await eventually(async () => failures.length >= 1, 'the failure');
    const next = await nextStartIn(2);
    expect(next.length).toBeLessThanOrEqual(1);
    for (const s of next) expect(s).toBeLessThan(30);
    expect(deferred).toHaveLength(1);
  });
});
