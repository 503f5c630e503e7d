/**
 * The real databases behind an emulated cloud project: every emulated branch is a database on the
 * run's scratch PostgreSQL (scratchPgUrl in test/setup/system-postgres.ts: embedded, trust auth,
 * fsync off, so a fork costs a copy rather than a durable server's fsyncs), forked from its parent's with
 * `CREATE DATABASE … TEMPLATE parent STRATEGY FILE_COPY`, all under one random prefix so tests
 * never collide and `dropAll` leaves nothing behind.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { copyDatabaseSettings } from '../../src/branches/database-settings.js';
import { scratchPgUrl, systemPgUrl } from '../setup/system-postgres.js';

/** The system server (kept for importers); the emulators' databases live on scratchPgUrl(). */
export const SYSTEM_PG_URL = systemPgUrl();

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export class PhysicalDatabases {
  readonly prefix = `emu_${randomBytes(4).toString('hex')}_`;
  private counter = 0;
  /** The role that owns every branch database (the service's admin); the scratch superuser by default. */
  owner: string | undefined;

  private async admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: await scratchPgUrl(), application_name: 'consort-emulator' });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** A new database, empty or a copy of `template`; returns its name. */
  async create(template?: string): Promise<string> {
    const name = `${this.prefix}${++this.counter}`;
    await this.copy(name, template);
    return name;
  }

  /** Replace `name` by a fresh copy of `template` (a restore), keeping the name. */
  async replace(name: string, template: string): Promise<void> {
    await this.drop(name);
    await this.copy(name, template);
  }

  async drop(name: string): Promise<void> {
    await this.admin((c) => c.query(`DROP DATABASE IF EXISTS ${quote(name)} WITH (FORCE)`));
  }

  async dropAll(): Promise<void> {
    const names = await this.admin(
      async (c) =>
        (
          await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [
            this.prefix,
          ])
        ).rows,
    );
    for (const { datname } of names) await this.drop(datname);
  }

  /**
   * A cloud service forks while the parent is in use; PostgreSQL cannot copy a template that has
   * sessions, so wait for short-lived ones (verification queries) to end.
   */
  private async copy(name: string, template: string | undefined): Promise<void> {
    const sql = `CREATE DATABASE ${quote(name)}${template ? ` TEMPLATE ${quote(template)} STRATEGY FILE_COPY` : ''}${this.owner ? ` OWNER ${quote(this.owner)}` : ''}`;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.admin(async (c) => {
          await c.query(sql);
          // A service's branch copies the whole cluster, its databases' own settings (ALTER DATABASE … SET) too.
          if (template) await copyDatabaseSettings(c, template, name);
          // Every branch is a cluster of its own on the service: a role made on one cannot log in on
          // another. Here they share a server, so a branch's database is closed to PUBLIC instead.
          await c.query(`REVOKE CONNECT, TEMPORARY ON DATABASE ${quote(name)} FROM PUBLIC`);
        });
        return;
      } catch (e) {
        if ((e as { code?: string }).code !== '55006' || attempt >= 100) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
}
