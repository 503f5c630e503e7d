/**
 * Live updates across App processes: the indexer and the check history announce a change with
 * `pg_notify('consort_dashboard', …)` in the transaction that makes it; each App process holds one
 * listening connection and hands each change (debounced per repository) to the open pages' event
 * streams. The connection is opened with the first subscriber and closed with the last.
 */
import pg from 'pg';
import { newClient } from '../../src/db/sql.js';
import { CHANGE_CHANNEL, ChangeNote } from './index-store.js';

type Listener = (change: { feature: string | null }) => void;

export class ChangeHub {
  private readonly listeners = new Map<number, Set<Listener>>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private readonly pending = new Map<number, Set<string | null>>();
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly debounceMs = 50,
  ) {}

  subscribe(repositoryId: number, listener: Listener): () => void {
    const set = this.listeners.get(repositoryId) ?? new Set<Listener>();
    set.add(listener);
    this.listeners.set(repositoryId, set);
    void this.connect();
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(repositoryId);
      if (this.listeners.size === 0) void this.close(false);
    };
  }

  /** Resolves once this process listens (tests wait for it before making a change). */
  ready(): Promise<void> {
    return this.connecting ?? Promise.resolve();
  }

  private connect(): Promise<void> {
    if (this.client !== null || this.connecting !== null) return this.connecting ?? Promise.resolve();
    const client = newClient({ connectionString: this.url, application_name: 'consort-app-dashboard' });
    client.on('notification', (msg) => this.note(msg.payload));
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    this.connecting = client
      .connect()
      .then(() => client.query(`LISTEN ${CHANGE_CHANNEL}`))
      .then(
        () => {
          this.client = client;
        },
        () => this.lost(client),
      )
      .finally(() => {
        this.connecting = null;
      });
    return this.connecting;
  }

  /** The connection went away: listen again shortly while anyone is subscribed. */
  private lost(client: pg.Client): void {
    if (this.client === client) this.client = null;
    void client.end().catch(() => undefined);
    if (this.listeners.size > 0 && this.retry === null) {
      this.retry = setTimeout(() => {
        this.retry = null;
        if (this.listeners.size > 0) void this.connect();
      }, 1000);
      this.retry.unref();
    }
  }

  private note(payload: string | undefined): void {
    let parsed;
    try {
      parsed = ChangeNote.safeParse(JSON.parse(payload ?? ''));
    } catch {
      return;
    }
    if (!parsed.success || !this.listeners.has(parsed.data.repositoryId)) return;
    const { repositoryId, feature } = parsed.data;
    const changed = this.pending.get(repositoryId) ?? new Set<string | null>();
    changed.add(feature);
    this.pending.set(repositoryId, changed);
    if (this.timers.has(repositoryId)) return;
    this.timers.set(
      repositoryId,
      setTimeout(() => {
        this.timers.delete(repositoryId);
        const features = [...(this.pending.get(repositoryId) ?? [])];
        this.pending.delete(repositoryId);
        for (const f of features) for (const l of this.listeners.get(repositoryId) ?? []) l({ feature: f });
      }, this.debounceMs),
    );
  }

  /** Stop listening; unless `force`d, only while nobody subscribed meanwhile (a page replacing another). */
  async close(force = true): Promise<void> {
    await this.connecting;
    if (!force && this.listeners.size > 0) return;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const client = this.client;
    this.client = null;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}
