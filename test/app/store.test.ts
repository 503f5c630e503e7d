/**
 * The App's store on a real PostgreSQL: its migrations (also put through Consort's own check lane),
 * deliveries, runs with their leases and cancellation, and gates with approvals that go stale.
 */
import { testPorts } from '../helpers/check-ports.js';
import { setTimeout as delay } from 'node:timers/promises';
import path from 'node:path';
import { migrateStore, openStore, packageRoot, STORE_MIGRATIONS_DIR, type Store } from '../../app/store/db.js';
import { recordDelivery } from '../../app/store/pulls.js';
import {
  claimRun,
  finishRun,
  heartbeat,
  insertRun,
  prSubject,
  releaseRun,
  runsOf,
  type NewRun,
} from '../../app/store/runs.js';
import { defaultConfig } from '../../src/config/schema.js';
import { check as checkLane } from '../../src/lanes/check/run.js';
import { readMigrationSet } from '../../src/migrations/files.js';
import { postgresTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { freshDatabase, type TestDatabase } from './helpers/database.js';

let db: TestDatabase;
let store: Store;

beforeAll(async () => {
  db = await freshDatabase();
  store = openStore(db.url);
});
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const sha = (c: string): string => c.repeat(40);
const newRun = (over: Partial<NewRun> = {}): NewRun => ({
  kind: 'check',
  subject: prSubject(7, 1),
  repositoryId: 7,
  installationId: 1,
  owner: 'o',
  repo: 'r',
  pr: 1,
  headSha: sha('a'),
  headRef: 'feature',
  baseSha: sha('b'),
  baseRef: 'main',
  fork: false,
  merged: false,
  deliveryId: null,
  ...over,
});

describe('migrations', () => {
  it('applies the schema once, even when two processes start together', async () => {
    const [a, b] = await Promise.all([migrateStore(db.url), migrateStore(db.url)]);
    expect([...a, ...b]).toEqual([
      '1764460800000_consort_app_store',
      '1764547200000_drop_app_gates',
      '1764633600000_consort_app_dashboard',
      '1764720000000_consort_app_pull_event_time',
    ]);
    expect(await migrateStore(db.url)).toEqual([]);
    const tables = await query<{ table_name: string }>(
      db.url,
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'consort_app' ORDER BY 1",
    );
    // The App's gate store is gone (the TDD lane's records are the one gate model): the second migration drops it.
    expect(tables.map((t) => t.table_name)).toEqual([
      'check_history',
      'dashboard_features',
      'dashboard_files',
      'dashboard_turns',
      'deliveries',
      'fork_approvals',
      'pgmigrations',
      'pull_requests',
      'runs',
    ]);
  });

  it("passes Consort's own check lane: applies, lints clean and reverses", async () => {
    let t: TestProvider | undefined;
    try {
      t = await postgresTestProvider();
      const files = await readMigrationSet(STORE_MIGRATIONS_DIR(), { relativeTo: packageRoot() });
      const config = defaultConfig();
      const report = await checkLane({
        ...testPorts,
        workspace: packageRoot(),
        config: { ...config, suite: { ...config.suite, command: 'true' } },
        configSource: null,
        base: { ref: 'empty', sha: null, migrations: [] },
        head: { ref: 'app', sha: null, migrations: files.map((f) => ({ file: f.file, content: f.content })) },
        pr: null,
        provider: t.provider,
        env: process.env,
        toolVersion: 'test',
        cleanup: true,
      });
      expect(report.conclusion).toBe('success');
      expect(report.stages.lint.findings).toEqual([]);
      expect(report.stages.reversibility.migrations).toEqual(
        [
          '1764460800000_consort_app_store.sql',
          '1764547200000_drop_app_gates.sql',
          '1764633600000_consort_app_dashboard.sql',
          '1764720000000_consort_app_pull_event_time.sql',
        ].map((f) => expect.objectContaining({ file: path.posix.join('migrations', f), verdict: 'reversible' })),
      );
    } finally {
      await t?.cleanup();
    }
  });
});

describe('deliveries', () => {
  beforeAll(() => migrateStore(db.url));

  it('records a delivery id once; a redelivery finds it', async () => {
    const d = { id: 'delivery-1', event: 'pull_request', action: 'opened', repositoryId: 7 };
    expect(await recordDelivery(store.pool, d)).toBe(true);
    expect(await recordDelivery(store.pool, d)).toBe(false);
  });
});

describe('runs', () => {
  beforeAll(() => migrateStore(db.url));

  it('a newer run cancels the live older ones of its subject, and only those', async () => {
    const subject = prSubject(7, 10);
    const other = await insertRun(store.pool, newRun({ subject: prSubject(7, 11), pr: 11 }), 'x');
    const first = await insertRun(store.pool, newRun({ subject, pr: 10 }), 'unused');
    const second = await insertRun(store.pool, newRun({ subject, pr: 10, headSha: sha('c') }), 'superseded by ccccccc');
    const runs = await runsOf(store.pool, subject);
    expect(runs.map((r) => [r.id, r.cancelReason])).toEqual([
      [first.id, 'superseded by ccccccc'],
      [second.id, null],
    ]);
    expect((await runsOf(store.pool, other.subject))[0]!.cancelReason).toBeNull();
    // The cancelled run's job concludes it without running.
    expect(await claimRun(store.pool, first.id, 't1', 30)).toMatchObject({
      kind: 'cancelled',
      run: { state: 'cancelled', conclusion: 'cancelled' },
    });
  });

  it('one run of a subject at a time: a live lease makes the others wait; a passed lease lets another process take over', async () => {
    const subject = prSubject(7, 20);
    const a = await insertRun(store.pool, newRun({ subject, pr: 20, kind: 'close' }), 'x');
    const b = await insertRun(store.pool, newRun({ subject, pr: 20, kind: 'close' }), 'x'); // close runs do not cancel each other
    expect(await claimRun(store.pool, a.id, 'proc-1', 1)).toMatchObject({
      kind: 'claimed',
      run: { state: 'running', attempts: 1 },
    });
    expect(await claimRun(store.pool, b.id, 'proc-2', 30)).toEqual({ kind: 'busy', holder: a.id });
    expect(await claimRun(store.pool, a.id, 'proc-2', 30)).toMatchObject({ kind: 'done' }); // a duplicate job
    expect(await heartbeat(store.pool, a.id, 'proc-2', 30)).toEqual({ owned: false, cancelReason: null });
    await delay(1100); // proc-1 died: its lease passes
    expect(await claimRun(store.pool, a.id, 'proc-2', 30)).toMatchObject({ kind: 'claimed', run: { attempts: 2 } });
    expect(
      await finishRun(store.pool, a.id, 'proc-1', { state: 'completed', conclusion: 'success', summary: 'late' }),
    ).toBe(false);
    expect(
      await finishRun(store.pool, a.id, 'proc-2', { state: 'completed', conclusion: 'success', summary: 'ok' }),
    ).toBe(true);
    expect(await claimRun(store.pool, b.id, 'proc-2', 30)).toMatchObject({ kind: 'claimed' });
    await releaseRun(store.pool, b.id, 'proc-2');
    expect(await claimRun(store.pool, b.id, 'proc-3', 30)).toMatchObject({ kind: 'claimed', run: { attempts: 2 } });
  });

  it('a heartbeat renews the lease and tells a running job it was cancelled', async () => {
    const subject = prSubject(7, 30);
    const a = await insertRun(store.pool, newRun({ subject, pr: 30 }), 'x');
    await claimRun(store.pool, a.id, 'p', 30);
    expect(await heartbeat(store.pool, a.id, 'p', 30)).toEqual({ owned: true, cancelReason: null });
    await insertRun(store.pool, newRun({ subject, pr: 30, headSha: sha('d') }), 'superseded by ddddddd');
    expect(await heartbeat(store.pool, a.id, 'p', 30)).toEqual({ owned: true, cancelReason: 'superseded by ddddddd' });
  });
});
