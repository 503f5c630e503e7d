/**
 * The `local` provider leaves its embedded server running for the next command (starting it takes
 * seconds). A command that started it says so once, with the command that stops it and the disk
 * its data directory uses, so nobody discovers a PostgreSQL process and a cache folder later.
 */
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { CliContext } from '../context.js';

async function server(c: CliContext) {
  const { serverDir } = await import('../../branches/local/paths.js');
  const { EmbeddedServer } = await import('../../branches/local/server.js');
  return new EmbeddedServer(serverDir(c.root, c.env));
}

/** Whether the embedded server already runs (asked before a command that may start it). */
export async function serverRunning(c: CliContext): Promise<boolean> {
  return (await (await server(c)).status()).running;
}

/** Bytes on disk (allocated blocks, so copy-on-write clones that share extents are not double-counted by size). */
export async function diskUse(dir: string): Promise<number> {
  let total = 0;
  const walk = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    await Promise.all(
      entries.map(async (e) => {
        const p = path.join(d, e.name);
        const st = await lstat(p).catch(() => undefined);
        if (!st) return;
        total += st.blocks * 512;
        if (e.isDirectory()) await walk(p);
      }),
    );
  };
  await walk(dir);
  return total;
}

export function formatBytes(n: number): string {
  if (n < 1024 * 1024) return `${Math.max(1, Math.round(n / 1024))} KB`;
  if (n < 1024 ** 3) return `${Math.round(n / 1024 / 1024)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}

/** The outputs (one per command run) told already: a command that opens the provider twice says it once. */
const told = new WeakSet<object>();

/** Said after the command's own output, on stderr, once; silent when the server ran before or is gone. */
export async function serverNotice(c: CliContext, wasRunning: boolean): Promise<void> {
  if (wasRunning || c.json || told.has(c.io)) return;
  const s = await (await server(c)).status();
  if (!s.running) return;
  told.add(c.io);
  c.io.err(
    `\nThe embedded PostgreSQL server keeps running for the next command (pid ${s.pid}, data in ${s.dataDir}, ${formatBytes(await diskUse(s.dataDir))} on disk). Stop it with: consort db stop`,
  );
}
