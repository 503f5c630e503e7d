/**
 * migrations.timeout counts the migrations' time, not the session's own start-up (timeLimited and
 * MigrationSession.ready): on a loaded CI runner, starting Node with the engine and a TypeScript
 * loader can take longer than a short limit, and a request that had not begun must not be ended
 * for it. The start-up is bounded by the same limit, so one that never ends still fails. The
 * session here is a stand-in for the migrations' child (the port's contract: `stop` ends the
 * requests in it); the URL refuses connections, so the limit's cancel finds no statement and ends
 * the child at once, as for a JavaScript migration that runs none.
 */
import { timeLimited } from '../../src/lanes/check/time-limit.js';
import type { ApplyOptions, ApplyResult, MigrationSession } from '../../src/ports/migration-runner.js';

const OPTIONS: ApplyOptions = {
  databaseUrl: 'postgresql://consort@127.0.0.1:1/refused',
  dir: 'migrations',
  direction: 'up',
  migrationsTable: 'pgmigrations',
};
const FILES = [{ name: '1700000000001_add', file: 'migrations/1700000000001_add.js' }];
const LIMIT = { ms: 400, text: '400ms' };
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A session whose start-up takes `startupMs` (never, when null), whose request loads its migrations
 * and reaches the database in `loadMs`, and whose one migration takes `applyMs`.
 */
function session(startupMs: number | null, applyMs: number, loadMs = 0): MigrationSession {
  const ready = startupMs === null ? new Promise<void>(() => undefined) : sleep(startupMs);
  let stop: ((e: Error) => void) | undefined;
  return {
    warm: () => undefined,
    ready: () => ready,
    apply: async (_options, how = {}) => {
      await ready;
      await sleep(loadMs);
      how.onRunning?.(FILES[0]!.name);
      return new Promise<ApplyResult>((resolve, reject) => {
        const done = setTimeout(() => resolve({ ok: true, applied: [], log: [] }), applyMs);
        stop = (e) => {
          clearTimeout(done);
          reject(e);
        };
      });
    },
    stop: () => stop?.(new Error('the migrations process was ended')),
    release: async () => undefined,
    close: async () => undefined,
  };
}

describe('migrations.timeout and the session start-up', () => {
  it('does not count a slow start-up against a migration that runs within the limit', async () => {
    // 300 ms to start plus 300 ms of migration: 600 ms in all, each part within the 400 ms limit.
    const r = await timeLimited(session(300, 300), LIMIT, FILES).apply(OPTIONS);
    expect(r).toEqual({ ok: true, applied: [], log: [] });
  });

  it('counts from the first migration: loading them and reaching the database are bounded on their own', async () => {
    const r = await timeLimited(session(0, 300, 300), LIMIT, FILES).apply(OPTIONS);
    expect(r).toEqual({ ok: true, applied: [], log: [] });
  });

  it('still ends a migration that runs past the limit once started', async () => {
    const r = await timeLimited(session(50, 5_000), LIMIT, FILES).apply(OPTIONS);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.failed).toMatchObject({
        kind: 'script',
        name: '1700000000001_add',
        error: { message: expect.stringMatching(/^still running after migrations\.timeout \(400ms\)/) },
      });
  });

  it('bounds a start-up that never ends (by a minute, or the limit where longer)', async () => {
    const started = Date.now();
    const r = await timeLimited(session(null, 0), LIMIT, FILES, 'the Consort configuration', 800).apply(OPTIONS);
    expect(Date.now() - started).toBeGreaterThanOrEqual(750);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.failed).toMatchObject({
        kind: 'load',
        error: { message: expect.stringMatching(/^the migrations' process did not start within 1 s .* and was ended/) },
      });
  });
});
