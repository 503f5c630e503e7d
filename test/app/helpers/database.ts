/** A fresh database for each App test file on the system PostgreSQL (or the one given), dropped afterwards. */
import { randomBytes } from 'node:crypto';
import { quoteIdent, withDatabase } from '../../../src/db/sql.js';
import { query, SYSTEM_PG_URL } from '../../helpers/servers.js';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function freshDatabase(adminUrl: string = SYSTEM_PG_URL): Promise<TestDatabase> {
  const name = `consort_app_t${randomBytes(4).toString('hex')}`;
  await query(adminUrl, `CREATE DATABASE ${quoteIdent(name)}`);
  return {
    url: withDatabase(adminUrl, name),
    drop: async () => {
      await query(adminUrl, `DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
    },
  };
}
