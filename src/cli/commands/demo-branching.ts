/**
 * `consort demo branching`: a short tour of database branches on the embedded default. Forks a
 * branch, proves a destructive change in it leaves its parent untouched, resets it, cleans up.
 * Ctrl-C (or SIGTERM), or a step that fails, still removes the branches it made (exit 130/143 after
 * a signal, as a shell reports it); a second signal exits at once.
 */
import { randomBytes } from 'node:crypto';
import type { BranchProvider } from '../../ports/branch-provider.js';
import type { CliContext } from '../context.js';
import { printJson } from '../output.js';

export async function branchingTour(c: CliContext): Promise<void> {
  const { withClient } = await import('../../db/sql.js');
  const { onTermination, abortReason, throwIfCancelled } = await import('../../lanes/check/cancel.js');
  const controller = new AbortController();
  const steps: { step: string; ms: number }[] = [];
  const say = (text: string) => (c.json ? undefined : c.io.out(text));
  const timed = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
    throwIfCancelled(controller.signal);
    const t0 = performance.now();
    const result = await fn();
    steps.push({ step, ms: Math.round(performance.now() - t0) });
    return result;
  };
  // The tour's branches, once made: removed however the tour ends.
  let made: string | undefined;
  const tour = async (p: BranchProvider): Promise<void> => {
    try {
      const caps = await timed('start server', () => p.capabilities());
      say(
        `1. ${c.providerName} provider, PostgreSQL ${caps.serverVersion}, branch mode: ${caps.mode} (${caps.modeReason})`,
      );
      const parent = `demo-${randomBytes(3).toString('hex')}`;
      const child = `${parent}-try`;
      made = parent;
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
      made = undefined;
      say(
        `6. Deleted ${parent} and ${child}. Try it yourself: consort branch create my-branch && consort branch url my-branch`,
      );
      if (c.json) printJson(c.io, { provider: c.providerName, mode: caps.mode, steps });
    } finally {
      if (made !== undefined)
        await p.delete(made, { recursive: true, terminateConnections: true }).catch(() => undefined);
    }
  };
  const stopping = (sig: NodeJS.Signals) =>
    `${sig}: stopping the tour (its branches are removed first; ${sig} again to exit at once)`;
  try {
    await onTermination(
      controller,
      () => c.withProvider(tour, { local: true }),
      (m) => c.io.err(m),
      stopping,
    );
  } catch (e) {
    if (!controller.signal.aborted) throw e;
  }
  if (controller.signal.aborted) {
    const sig = abortReason(controller.signal);
    if (c.json) printJson(c.io, { ok: false, cancelled: sig, steps });
    else c.io.err(`Tour cancelled (${sig}): its branches were removed.`);
    c.setExitCode(sig === 'SIGINT' ? 130 : sig === 'SIGTERM' ? 143 : 1);
  }
}
