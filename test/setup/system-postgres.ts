/**
 * The one variable that names the PostgreSQL server the tests use as "the system server" (the
 * postgres provider's tests, the App's store, the cloud emulators' databases):
 * CONSORT_TEST_POSTGRES_URL. Unset, it is the server at 127.0.0.1:5432 with trust auth. When
 * nothing answers there, global-setup.mjs points the variable at an embedded stand-in, which the
 * first module to import this one starts (top-level await, so no test can reach it before).
 */
import { systemStandIn } from './clusters.js';

export const SYSTEM_PG_ENV = 'CONSORT_TEST_POSTGRES_URL';
export const DEFAULT_SYSTEM_PG_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

const standInPort = process.env.CONSORT_TEST_SYSTEM_STANDIN_PORT;
if (standInPort) await systemStandIn(Number(standInPort));

export function systemPgUrl(): string {
  return process.env[SYSTEM_PG_ENV] ?? DEFAULT_SYSTEM_PG_URL;
}
