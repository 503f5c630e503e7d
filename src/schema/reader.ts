/**
 * The SchemaReader port's adapter: the catalog queries of snapshot.ts and lint/context.ts, over a
 * connection of their own per read, or (a session, `open`) over one connection per URL kept for the
 * session's reads: a new backend's catalog caches are cold, so a kept one reads a snapshot in
 * about half the time (the reversibility proof reads one after every step on its branch), and its
 * catalog queries are prepared on it once (half again: 32 → 15 ms on a 31-migration schema).
 */
import pg from 'pg';
import { newClient, withClient } from '../db/sql.js';
import { readRelations } from '../lint/context.js';
import type { SchemaReader, SchemaSession } from '../ports/schema-reader.js';
import { snapshotSchema } from './snapshot.js';

export const pgSchemaReader: SchemaReader = {
  snapshot: (url, options) => withClient(url, (db) => snapshotSchema(db, options)),
  relations: (url) => withClient(url, readRelations),
  open: openSchemaSession,
};

interface Kept {
  client: Promise<pg.Client>;
  /** Reads on one connection take turns (a snapshot sets and restores its search_path). */
  turn: Promise<unknown>;
  lost: boolean;
}

export function openSchemaSession(): SchemaSession {
  const kept = new Map<string, Kept>();
  const connect = async (url: string): Promise<pg.Client> => {
    const client = newClient({
      connectionString: url,
      application_name: 'consort',
      connectionTimeoutMillis: 10_000,
    });
    try {
      await client.connect();
    } catch (e) {
      await client.end().catch(() => undefined);
      throw e;
    }
    return client;
  };
  const on = <T>(url: string, read: (db: pg.Client) => Promise<T>): Promise<T> => {
    let k = kept.get(url);
    if (!k || k.lost) {
      const entry: Kept = { client: connect(url), turn: Promise.resolve(), lost: false };
      // A connection that fails or is ended elsewhere is made again for the next read.
      entry.client.then(
        (c) => c.on('error', () => (entry.lost = true)).on('end', () => (entry.lost = true)),
        () => (entry.lost = true),
      );
      kept.set(url, (k = entry));
    }
    const entry = k;
    const run = entry.turn.then(async () => read(await entry.client));
    entry.turn = run.catch(() => undefined);
    return run;
  };
  return {
    snapshot: (url, options) => on(url, (db) => snapshotSchema(db, options, { reuse: true })),
    relations: (url) => on(url, readRelations),
    async release() {
      const all = [...kept.values()];
      kept.clear();
      await Promise.all(
        all.map(async (k) => {
          await k.turn;
          await (await k.client.catch(() => undefined))?.end().catch(() => undefined);
        }),
      );
    },
  };
}
