/**
 * `consort demo branching`: a short tour of database branches on the embedded default. Forks a
 * branch, proves a destructive change in it leaves its parent untouched, resets it, cleans up.
 */
import { randomBytes } from 'node:crypto';
import type { CliContext } from '../context.js';
import { printJson } from '../output.js';

export async function branchingTour(c: CliContext): Promise<void> {
  const { withClient } = await import('../../db/sql.js');
  const steps: { step: string; ms: number }[] = [];
  const say = (text: string) => (c.json ? undefined : c.io.out(text));
  const timed = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const result = await fn();
    steps.push({ step, ms: Math.round(performance.now() - t0) });
    return result;
  };
  await c.withProvider(
    async (p) => {
      const caps = await timed('start server', () => p.capabilities());
      say(
        `1. ${c.providerName} provider, PostgreSQL ${caps.serverVersion}, branch mode: ${caps.mode} (${caps.modeReason})`,
      );
      const parent = `demo-${randomBytes(3).toString('hex')}`;
      const child = `${parent}-try`;
      await timed('create parent', () => p.create({ name: parent, ttlMs: 3_600_000 }));
      await withClient(await p.connectionUri(parent), (db) =>
        db.query(
          "CREATE TABLE accounts (id int PRIMARY KEY, owner text NOT NULL, balance numeric NOT NULL); INSERT INTO accounts SELECT g, 'user ' || g, 100 FROM generate_series(1, 10000) g",
        ),
      );
      say(`2. Branch ${parent} holds 10,000 accounts`);
      const b = await timed('fork branch', () => p.create({ name: child, parent, ttlMs: 3_600_000 }));
      say(`3. Forked ${b.name} from ${parent} in ${steps.at(-1)!.ms} ms`);
      await withClient(await p.connectionUri(child), (db) =>
        db.query('DELETE FROM accounts WHERE id % 2 = 0; ALTER TABLE accounts DROP COLUMN balance'),
      );
      const count = (name: string) =>
        p
          .connectionUri(name)
          .then((u) =>
            withClient(
              u,
              async (db) => (await db.query('SELECT count(*)::int AS n FROM accounts')).rows[0].n as number,
            ),
          );
      say(
        `4. Destructive test in ${child}: ${await count(child)} accounts left there, still ${await count(parent)} in ${parent}`,
      );
      await timed('reset branch', () => p.reset(child));
      say(`5. Reset ${child} to its parent in ${steps.at(-1)!.ms} ms: ${await count(child)} accounts again`);
      await timed('delete branches', () => p.delete(parent, { recursive: true }));
      say(
        `6. Deleted ${parent} and ${child}. Try it yourself: consort branch create my-branch && consort branch url my-branch`,
      );
      if (c.json) printJson(c.io, { provider: c.providerName, mode: caps.mode, steps });
    },
    { local: true },
  );
}
