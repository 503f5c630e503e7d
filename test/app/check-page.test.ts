/**
 * The dashboard's check history on the App (index-store.ts checkPage): a page and its total come
 * from one snapshot. A check recorded while a page is read (the App's job finishing one as a person
 * looks) is either in both or in neither — never counted without its row, which the dashboard showed
 * as "1 check" over an empty table. On the run's scratch PostgreSQL, the App's own migrations.
 */
import type pg from 'pg';
import { checkPage, recordCheck } from '../../app/dashboard/index-store.js';
import { migrateStore, openStore, type Store } from '../../app/store/db.js';
import { insertRun, prSubject } from '../../app/store/runs.js';
import { checkReport, T0 } from '../dashboard/fixture.js';
import { freshDatabase, type TestDatabase } from './helpers/database.js';

const REPOSITORY = 4242;
let db: TestDatabase;
let store: Store;
beforeAll(async () => {
  db = await freshDatabase();
  await migrateStore(db.url);
  store = openStore(db.url);
}, 60_000);
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

let made = 0;
/** A check finished and recorded, as the App's check job records one. */
async function recordOne(): Promise<void> {
  const i = made++;
  const run = await insertRun(
    store.pool,
    {
      kind: 'check',
      subject: prSubject(REPOSITORY, 12),
      repositoryId: REPOSITORY,
      installationId: 77,
      owner: 'acme',
      repo: 'shop',
      pr: 12,
      headSha: `${i}`.padStart(40, 'c'),
      headRef: 'feature',
      baseSha: 'b'.repeat(40),
      baseRef: 'main',
      fork: false,
      merged: false,
      deliveryId: null,
    },
    'superseded',
  );
  const report = checkReport(i, T0 + i * 60_000);
  await recordCheck(store.pool, run, { state: 'completed', conclusion: report.conclusion, summary: '' }, report);
}

/**
 * The store's pool, with a check recorded (and committed) between every statement a page read sends
 * and the next: what a page read on two connections side by side could meet.
 */
function recordingBetweenStatements(): pg.Pool {
  const pool = store.pool;
  let sent = 0;
  return new Proxy(pool, {
    get(target, key, receiver) {
      if (key !== 'query') return Reflect.get(target, key, receiver) as unknown;
      return async (...args: Parameters<pg.Pool['query']>) => {
        if (sent++ > 0) await recordOne();
        return (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
      };
    },
  });
}

it('counts exactly the rows its page was read from, with a check recorded during the read', async () => {
  await recordOne();
  for (const [offset, limit] of [
    [0, 50],
    [0, 1],
    [1, 50],
  ] as const) {
    const page = await checkPage(recordingBetweenStatements(), REPOSITORY, offset, limit);
    expect(page.rows).toHaveLength(Math.max(0, Math.min(limit, page.total - offset)));
  }
});

it('a page past the end: no rows, and the total', async () => {
  await recordOne();
  await recordOne();
  const { total } = await checkPage(store.pool, REPOSITORY, 0, 500);
  expect(total).toBeGreaterThan(0);
  expect(await checkPage(store.pool, REPOSITORY, total + 10, 5)).toEqual({ rows: [], total });
  const newest = await checkPage(store.pool, REPOSITORY, 0, 2);
  expect(newest.rows.map((r) => r.headSha)).toEqual([`${made - 1}`.padStart(40, 'c'), `${made - 2}`.padStart(40, 'c')]);
});
