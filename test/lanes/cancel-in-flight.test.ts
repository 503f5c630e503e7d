/**
 * A run cancelled while a request of migrations is on its way to the migrations' process (its
 * child still warming up: Node and the engine loading, seconds on a loaded runner). The cancel ends
 * that child, and the request, once it gets there, starts a fresh child and runs whole. Before
 * 2026-12-05 applyBounded then answered ok and the TDD lane's baseline was built despite the cancel
 * (tdd-baseline-limit failed so at load 14); it is a cancelled request now, which the caller rolls
 * back as after any cancel. The session is a stand-in for the child (the port's contract).
 */
import { applyBounded } from '../../src/lanes/check/time-limit.js';
import type { ApplyOptions, ApplyResult, MigrationSession } from '../../src/ports/migration-runner.js';

const OPTIONS: ApplyOptions = {
  databaseUrl: 'postgresql://consort@127.0.0.1:1/refused',
  dir: 'migrations',
  direction: 'up',
  migrationsTable: 'pgmigrations',
};
const FILES = [{ name: '1700000000001_add', file: 'migrations/1700000000001_add.sql', kind: 'sql' as const }];
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

it('a request that ran whole after the cancel reached it is reported cancelled, not applied', async () => {
  const controller = new AbortController();
  let stopped = 0;
  // The request is made, then the cancel comes while it waits for the warm-up; stop() ends the
  // warming child, and the request goes on in a fresh one, to the end.
  const session: MigrationSession = {
    warm: () => undefined,
    apply: async (): Promise<ApplyResult> => {
      setTimeout(() => controller.abort(new Error('SIGINT')), 10);
      await sleep(50);
      return {
        ok: true,
        applied: [{ name: FILES[0]!.name, file: FILES[0]!.file, sql: [], durationMs: 5, transactional: true }],
        log: [],
      };
    },
    stop: () => void stopped++,
    release: async () => undefined,
    close: async () => undefined,
  } as unknown as MigrationSession;
  const result = await applyBounded({ apply: session.apply, open: () => session }, OPTIONS, FILES, {
    signal: controller.signal,
    cancelled: 'cancelled before they started',
  });
  expect(result).toMatchObject({
    ok: false,
    applied: [{ name: '1700000000001_add' }],
    failed: { kind: 'load', error: { message: 'the run was cancelled while the migrations were applied' } },
  });
});

it('a request the cancel did not reach stands as it ended', async () => {
  const controller = new AbortController();
  const session = {
    warm: () => undefined,
    apply: async (): Promise<ApplyResult> => ({ ok: true, applied: [], log: [] }),
    stop: () => undefined,
    close: async () => undefined,
  } as unknown as MigrationSession;
  const result = await applyBounded({ apply: session.apply, open: () => session }, OPTIONS, FILES, {
    signal: controller.signal,
    cancelled: 'cancelled before they started',
  });
  controller.abort();
  expect(result).toEqual({ ok: true, applied: [], log: [] });
});
