/**
 * The shared HTTP layer on its own: backoff and Retry-After arithmetic, token refresh, polling
 * deadlines, and the JSON client against a local server that fails on purpose.
 */
import { z } from 'zod';
import { ConsortError } from '../../../src/core/errors.js';
import { AmbiguousRequestError, JsonClient, type HttpFailure } from '../../../src/branches/http/json-client.js';
import { pollUntil } from '../../../src/branches/http/poll.js';
import { backoffDelay, nextDelay, retryAfterMs, DEFAULT_RETRY } from '../../../src/branches/http/retry.js';
import { RefreshingToken } from '../../../src/branches/http/token.js';
import { fastClock } from '../../emulators/clock.js';
import { JsonServer } from '../../emulators/json-server.js';

describe('backoff and Retry-After', () => {
  it.each([
    [0, 500],
    [1, 1000],
    [3, 4000],
    [10, 20_000],
  ])('attempt %i waits at most %i ms', (attempt, ceiling) => {
    expect(backoffDelay(attempt, DEFAULT_RETRY, () => 1)).toBe(ceiling);
    expect(backoffDelay(attempt, DEFAULT_RETRY, () => 0)).toBe(0);
  });

  it('reads Retry-After as seconds or an HTTP date, and ignores garbage', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('0.5', now)).toBe(500);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });

  it('never waits less than Retry-After, and gives up rather than cross the deadline or the attempt limit', () => {
    expect(nextDelay(0, DEFAULT_RETRY, 7000, 60_000, () => 0)).toBe(7000);
    expect(nextDelay(0, DEFAULT_RETRY, 7000, 5000, () => 0)).toBeUndefined();
    expect(nextDelay(DEFAULT_RETRY.attempts - 1, DEFAULT_RETRY, undefined, 60_000, () => 0)).toBeUndefined();
  });
});

describe('RefreshingToken', () => {
  it('reuses a token, refreshes it before expiry, and shares one refresh between callers', async () => {
    let issued = 0;
    let now = 0;
    const clock = { now: () => now, sleep: async () => undefined };
    const token = new RefreshingToken(async () => ({ value: `t${++issued}`, expiresAt: now + 10_000 }), clock, 2000);
    expect(await Promise.all([token.get(), token.get()])).toEqual(['t1', 't1']);
    now = 7999;
    expect(await token.get()).toBe('t1');
    now = 8000; // within the 2 s margin
    expect(await token.get()).toBe('t2');
    token.invalidate();
    expect(await token.get()).toBe('t3');
    expect(token.secrets()).toEqual(['t3']);
  });
});

describe('pollUntil', () => {
  it('backs off between polls and times out with what it waited for', async () => {
    const clock = fastClock();
    let polls = 0;
    await expect(
      pollUntil(async () => ({ done: false, detail: `poll ${++polls}` }), {
        what: 'creating branch x',
        clock,
        policy: { initialDelayMs: 100, maxDelayMs: 300, timeoutMs: 150 },
      }),
    ).rejects.toMatchObject({
      code: 'timeout',
      message: expect.stringMatching(/creating branch x \(last state: poll \d+\)/),
    });
    expect(clock.sleeps[0]).toBe(100);
    expect(
      await pollUntil(async () => (++polls > 3 ? { done: true, value: 'ok' } : { done: false }), { what: 'x', clock }),
    ).toBe('ok');
  });
});

describe('JsonClient', () => {
  let server: JsonServer;
  let served = 0;
  beforeAll(async () => {
    server = new JsonServer(async (req) => {
      served++;
      if (req.path === '/bad-shape') return { status: 200, body: { id: 42 } };
      if (req.path === '/auth')
        return req.headers.authorization === 'Bearer fresh'
          ? { status: 200, body: { id: 'ok' } }
          : { status: 401, body: {} };
      return { status: 200, body: { id: 'ok' } };
    });
    await server.start();
  });
  afterAll(() => server.close());

  const failures: HttpFailure[] = [];
  const client = (token = 'secret-token-123', onUnauthorized?: () => void) => {
    const clock = fastClock();
    return {
      clock,
      client: new JsonClient({
        service: 'Test API',
        baseUrl: server.url,
        clock,
        random: () => 1,
        authorization: async () => `Bearer ${token}`,
        ...(onUnauthorized ? { onUnauthorized } : {}),
        secrets: () => [token],
        describeError: (f) => {
          failures.push(f);
          return new ConsortError('service-error', `HTTP ${f.status}: ${JSON.stringify(f.body)}`);
        },
        retry: { attempts: 4, baseDelayMs: 10, maxDelayMs: 50, timeoutMs: 60_000 },
      }),
    };
  };
  const Shape = z.object({ id: z.string() });

  it('retries 429 and 503, waiting at least as long as Retry-After says', async () => {
    server.fail({ path: /^\/thing$/, status: 429, headers: { 'retry-after': '2' } });
    server.fail({ path: /^\/thing$/, status: 503 });
    const { client: c, clock } = client();
    expect(await c.request('GET', '/thing', { schema: Shape })).toEqual({ id: 'ok' });
    expect(clock.sleeps).toEqual([2000, 20]);
    expect(server.pendingFaults()).toBe(0);
  });

  it('stops after the attempt limit and reports the last failure, with secrets scrubbed', async () => {
    server.fail({ path: /^\/thing$/, status: 500, body: { message: 'boom secret-token-123' }, times: 4 });
    const { client: c } = client();
    await expect(c.request('GET', '/thing', { schema: Shape })).rejects.toThrow('HTTP 500: {"message":"boom ****"}');
    expect(server.pendingFaults()).toBe(0);
  });

  it('does not retry what waiting cannot fix', async () => {
    server.fail({ path: /^\/thing$/, status: 404, body: { message: 'nope' } });
    const before = server.exchanges.length;
    await expect(client().client.request('GET', '/thing', { schema: Shape })).rejects.toThrow('HTTP 404');
    expect(server.exchanges.length - before).toBe(1);
  });

  it('refreshes credentials once on 401', async () => {
    let token = 'stale';
    let invalidated = 0;
    const clock = fastClock();
    const c = new JsonClient({
      service: 'Test API',
      baseUrl: server.url,
      clock,
      authorization: async () => `Bearer ${token}`,
      onUnauthorized: () => {
        invalidated++;
        token = 'fresh';
      },
      describeError: (f) => new ConsortError('auth', `HTTP ${f.status}`),
    });
    expect(await c.request('GET', '/auth', { schema: Shape })).toEqual({ id: 'ok' });
    expect(invalidated).toBe(1);
    token = 'stale';
    const once = new JsonClient({
      service: 'Test API',
      baseUrl: server.url,
      clock,
      authorization: async () => 'Bearer stale',
      onUnauthorized: () => undefined,
      describeError: (f) => new ConsortError('auth', `HTTP ${f.status}`),
    });
    await expect(once.request('GET', '/auth', { schema: Shape })).rejects.toMatchObject({ code: 'auth' });
  });

  it('rejects a response that does not match the documented shape', async () => {
    await expect(client().client.request('GET', '/bad-shape', { schema: Shape })).rejects.toMatchObject({
      code: 'service-error',
      message: expect.stringContaining('unexpected response (id: '),
    });
  });

  it('retries a request whose connection was refused — nothing was sent, so a POST too', async () => {
    const dead = new JsonServer(async () => ({ status: 200 }));
    await dead.start();
    await dead.close(); // a port nothing listens on
    const retries: string[] = [];
    const make = () =>
      new JsonClient({
        service: 'Dead API',
        baseUrl: dead.url,
        clock: fastClock(),
        log: (l) => retries.push(l),
        describeError: () => new Error('unused'),
        retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
      });
    await expect(make().request('GET', '/x', { schema: Shape })).rejects.toMatchObject({
      code: 'service-error',
      message: expect.stringContaining('Dead API: GET /x failed'),
    });
    expect(retries).toHaveLength(2);
    await expect(make().request('POST', '/x', { schema: Shape, json: {} })).rejects.toMatchObject({
      code: 'service-error',
      message: expect.stringContaining('ECONNREFUSED'),
    });
    expect(retries).toHaveLength(4);
    expect(served).toBeGreaterThan(0);
  });

  it.each([500, 502, 504])(
    'never repeats a POST answered %i: the server may have acted, so the caller must look',
    async (status) => {
      server.fail({ method: 'POST', path: /^\/create$/, status, body: { message: 'upstream trouble' } });
      const before = server.count('POST', /^\/create$/);
      const error = await client()
        .client.request('POST', '/create', { schema: Shape, json: { name: 'x' } })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(AmbiguousRequestError);
      expect(error).toMatchObject({
        code: 'service-error',
        message: expect.stringContaining(`may or may not have taken effect (HTTP ${status})`),
      });
      expect(server.count('POST', /^\/create$/) - before).toBe(1);
    },
  );

  it('repeats a POST answered 423, 429 or 503 (the server did not act on it)', async () => {
    for (const status of [423, 429, 503]) server.fail({ method: 'POST', path: /^\/create$/, status });
    const before = server.count('POST', /^\/create$/);
    expect(await client().client.request('POST', '/create', { schema: Shape, json: {} })).toEqual({ id: 'ok' });
    expect(server.count('POST', /^\/create$/) - before).toBe(4);
    expect(server.pendingFaults()).toBe(0);
  });

  it('treats a POST whose connection drops after sending as ambiguous, and a marked idempotent POST as safe to repeat', async () => {
    server.fail({ method: 'POST', path: /^\/create$/, status: 0, drop: true });
    await expect(client().client.request('POST', '/create', { schema: Shape, json: {} })).rejects.toBeInstanceOf(
      AmbiguousRequestError,
    );
    server.fail({ method: 'POST', path: /^\/token$/, status: 0, drop: true });
    server.fail({ method: 'POST', path: /^\/token$/, status: 500 });
    expect(
      await client().client.request('POST', '/token', { schema: Shape, form: { grant_type: 'x' }, idempotent: true }),
    ).toEqual({ id: 'ok' });
    expect(server.pendingFaults()).toBe(0);
  });
});
