/** A fresh database for each App test file on the run's scratch PostgreSQL (or the server given), dropped afterwards. */
import { randomBytes } from 'node:crypto';
import { quoteIdent, withDatabase } from '../../../src/db/sql.js';
import { query } from '../../helpers/servers.js';
import { scratchPgUrl } from '../../setup/system-postgres.js';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function freshDatabase(adminUrl?: string): Promise<TestDatabase> {
  adminUrl ??= await scratchPgUrl();
  const name = `consort_app_t${randomBytes(4).toString('hex')}`;
  await query(adminUrl, `CREATE DATABASE ${quoteIdent(name)}`);
  return {
    url: withDatabase(adminUrl, name),
    drop: async () => {
      await query(adminUrl, `DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
    },
  };
}
