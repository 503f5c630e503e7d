/**
 * The PR lane's run lock, on the catalog database: a session advisory lock per key (the run's PR
 * branch) on a connection of its own, so a process killed outright releases it with its session.
 * With `supersede`, a run first writes its id into `consort.run_claims`; the run holding the lock
 * watches that row and is told when a newer run claimed the key, and a waiting run that sees a
 * newer claim than its own gives up. So of overlapping runs of one pull request the newest wins.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { newClient } from '../db/sql.js';
import type { RunLockOptions, RunLockResult } from '../ports/branch-provider.js';

const POLL_MS = 250;

export const RUN_CLAIMS_DDL = `
CREATE TABLE IF NOT EXISTS consort.run_claims (
  namespace  text        NOT NULL,
  key        text        NOT NULL,
  run_id     text        NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, key)
);`;

export async function acquireRunLock(
  catalogUrl: string,
  namespace: string,
  key: string,
  options: RunLockOptions,
): Promise<RunLockResult> {
  const me = randomUUID();
  const lockKey = `consort:run:${namespace}:${key}`;
  const client = newClient({ connectionString: catalogUrl, application_name: 'consort run lock' });
  await client.connect();
  const ours = async (): Promise<boolean> => {
    const { rows } = await client.query<{ run_id: string }>(
      'SELECT run_id FROM consort.run_claims WHERE namespace = $1 AND key = $2',
      [namespace, key],
    );
    return rows[0]?.run_id === me;
  };
  const giveUp = async (reason: 'superseded' | 'aborted'): Promise<RunLockResult> => {
    await client.end().catch(() => undefined);
    return { ok: false, reason };
  };
  try {
    if (options.supersede) {
      await client.query(
        `INSERT INTO consort.run_claims (namespace, key, run_id) VALUES ($1, $2, $3)
         ON CONFLICT (namespace, key) DO UPDATE SET run_id = EXCLUDED.run_id, claimed_at = now()`,
        [namespace, key, me],
      );
    }
    for (;;) {
      if (options.signal?.aborted) return await giveUp('aborted');
      if (options.supersede && !(await ours())) return await giveUp('superseded');
      const { rows } = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok',
        [lockKey],
      );
      if (rows[0]!.ok) break;
      await sleep(POLL_MS, undefined, options.signal ? { signal: options.signal } : {}).catch(() => undefined);
    }
  } catch (e) {
    await client.end().catch(() => undefined);
    throw e;
  }
  let watcher: NodeJS.Timeout | undefined;
  if (options.supersede && options.onSuperseded) {
    const notify = options.onSuperseded;
    watcher = setInterval(() => {
      ours().then(
        (still) => {
          if (still || watcher === undefined) return;
          clearInterval(watcher);
          watcher = undefined;
          notify();
        },
        () => undefined,
      );
    }, POLL_MS);
    watcher.unref();
  }
  return {
    ok: true,
    release: async () => {
      if (watcher) clearInterval(watcher);
      watcher = undefined;
      try {
        if (options.supersede)
          await client.query('DELETE FROM consort.run_claims WHERE namespace = $1 AND key = $2 AND run_id = $3', [
            namespace,
            key,
            me,
          ]);
      } finally {
        await client.end().catch(() => undefined); // ending the session releases the advisory lock
      }
    },
  };
}
