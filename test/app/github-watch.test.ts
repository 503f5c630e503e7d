/**
 * Never silent about GitHub, without a network: each attempt's outcome (an answer below 500, a
 * 5xx, no answer) reaches the health record and, when it failed, the log with the delivery, run
 * and route of the call; the call that finally fails is logged at error (5xx, no answer) or warn (4xx).
 */
import { appGitHub } from '../../app/github.js';
import type { OctokitClient } from '../../src/github/octokit.js';
import { GitHubHealth, observingFetch, withCall } from '../../app/github-watch.js';
import type { AppLog } from '../../app/jobs/deps.js';

interface Line {
  level: string;
  message: string;
  fields: Record<string, unknown> | undefined;
}

function recordingLog(): { log: AppLog; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, message, fields });
  return { log: { info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

/** A fetch that answers from a script: a status, or 'down' for no answer at all. */
function scripted(script: (number | 'down')[]): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  return {
    urls,
    fetch: async (input) => {
      urls.push(String(input));
      const next = script.shift() ?? 200;
      if (next === 'down') throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
      return new Response('{}', { status: next, headers: { 'content-type': 'application/json' } });
    },
  };
}

describe('every attempt is watched', () => {
  it('a 502 and no answer: logged at warn with delivery, run, route and attempt; health unreachable until an answer below 500', async () => {
    const { log, lines } = recordingLog();
    const stub = scripted([502, 'down', 201]);
    const health = new GitHubHealth('https://ghe.example.com/api/v3/meta', () => stub.fetch);
    const watched = observingFetch(health, log, stub.fetch);
    const url = 'https://ghe.example.com/api/v3/repos/o/r/check-runs';
    await withCall({ deliveryId: 'd-1', runId: 7 }, 'POST /repos/{owner}/{repo}/check-runs', async () => {
      expect((await watched(url, { method: 'POST' })).status).toBe(502);
      expect(health.status()).toMatchObject({
        reachable: false,
        lastError: 'HTTP 502 from POST /api/v3/repos/o/r/check-runs',
      });
      await expect(watched(url, { method: 'POST' })).rejects.toThrow('fetch failed');
      expect(health.status()).toMatchObject({ reachable: false, lastError: 'fetch failed: ECONNREFUSED' });
      expect((await watched(url, { method: 'POST' })).status).toBe(201);
    });
    expect(health.status()).toMatchObject({ reachable: true, lastError: null });
    const route = 'POST /repos/{owner}/{repo}/check-runs';
    expect(lines).toEqual([
      {
        level: 'warn',
        message: 'GitHub answered 502',
        fields: {
          delivery: 'd-1',
          runId: 7,
          route,
          attempts: 1,
          method: 'POST',
          path: '/api/v3/repos/o/r/check-runs',
          status: 502,
        },
      },
      {
        level: 'warn',
        message: 'GitHub could not be reached',
        fields: {
          delivery: 'd-1',
          runId: 7,
          route,
          attempts: 2,
          method: 'POST',
          path: '/api/v3/repos/o/r/check-runs',
          error: 'fetch failed: ECONNREFUSED',
        },
      },
    ]);
  });

  it('/health probes GitHub while it is unreachable (at most every few seconds), and recovers', async () => {
    const { log } = recordingLog();
    const stub = scripted(['down', 'down', 200]);
    let watched: typeof fetch = stub.fetch;
    const health = new GitHubHealth('https://ghe.example.com/api/v3/meta', () => watched, 0);
    watched = observingFetch(health, log, stub.fetch);
    expect(await health.check()).toMatchObject({ reachable: true, since: null }); // nothing tried: no probe
    await health.probe();
    expect(await health.check()).toMatchObject({ reachable: false });
    expect(await health.check()).toMatchObject({ reachable: true });
    expect(stub.urls).toEqual(Array(3).fill('https://ghe.example.com/api/v3/meta'));
  });
});

describe('the call that finally fails', () => {
  const failing = (status: number | undefined): OctokitClient => ({
    request: async () => {
      throw Object.assign(
        new Error(status === undefined ? 'fetch failed' : `HTTP ${status}`),
        status === undefined ? {} : { status },
      );
    },
  });

  it.each([
    [502, 'error'],
    [undefined, 'error'],
    [422, 'warn'],
  ] as const)('%s: logged at %s with delivery, run and route', async (status, level) => {
    const { log, lines } = recordingLog();
    const gh = appGitHub(failing(status), { log, context: { deliveryId: 'd-9', runId: 3 } }, { retryAfterBaseMs: 1 });
    await expect(gh.createComment({ owner: 'o', repo: 'r' }, 1, 'hi')).rejects.toThrow(
      status === undefined ? 'fetch failed' : `HTTP ${status}`,
    );
    const line = (route: string) => ({
      level,
      message: expect.stringContaining(route),
      fields: expect.objectContaining({ delivery: 'd-9', runId: 3, route, status: status ?? null }),
    });
    const post = 'POST /repos/{owner}/{repo}/issues/{issue_number}/comments';
    // After a 5xx or no answer, GitHub may have made the comment: it is looked for (and that fails too)
    // before anything is posted again; a 4xx made nothing.
    expect(lines).toEqual(
      level === 'warn' ? [line(post)] : [line(post), line('GET /repos/{owner}/{repo}/issues/{issue_number}/comments')],
    );
  });

  it('a 404 permission lookup is still "none" (logged at warn, not error)', async () => {
    const { log, lines } = recordingLog();
    expect(await appGitHub(failing(404), { log }).permission({ owner: 'o', repo: 'r' }, 'stranger')).toBe('none');
    expect(lines.map((l) => l.level)).toEqual(['warn']);
  });
});
