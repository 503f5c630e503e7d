/**
 * The one variable that names the PostgreSQL server the tests use as "the system server" (the
 * postgres provider's tests, the App's store, the cloud emulators' databases):
 * CONSORT_TEST_POSTGRES_URL. Unset, it is the server at 127.0.0.1:5432 with trust auth. When
 * nothing answers there, global-setup.mjs points the variable at an embedded stand-in, which the
 * first module to import this one starts (top-level await, so no test can reach it before).
 */
import { scratchServerUrl, systemStandIn } from './clusters.js';

export const SYSTEM_PG_ENV = 'CONSORT_TEST_POSTGRES_URL';
export const DEFAULT_SYSTEM_PG_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

const standInPort = process.env.CONSORT_TEST_SYSTEM_STANDIN_PORT;
if (standInPort) await systemStandIn(Number(standInPort));

export function systemPgUrl(): string {
  return process.env[SYSTEM_PG_ENV] ?? DEFAULT_SYSTEM_PG_URL;
}

let scratch: Promise<string> | undefined;

/**
 * The run's scratch PostgreSQL (test/setup/clusters.ts): trust auth as `postgres` on loopback, like
 * the system server, but embedded with fsync off, so making and copying databases is cheap. For a
 * test that needs a place for databases rather than the system server itself; the first caller of
 * the run starts it.
 */
export function scratchPgUrl(): Promise<string> {
  // Without a system server, its embedded stand-in (started above) is just such a server already.
  if (standInPort) return Promise.resolve(systemPgUrl());
  scratch ??= scratchServerUrl().catch((e: unknown) => {
    scratch = undefined;
    throw e;
  });
  return scratch;
}
