/**
 * Never write to the wrong database. A popular Neon action once handed out the parent's URL for a
 * new branch, and migrations meant for a preview branch ran on main. Before anything writes to a
 * new cloud branch Consort proves the URL reaches that branch and not its parent, in two steps:
 *
 * 1. Address: the URL's host, port and database must differ from the parent's URL (both built
 *    from each branch's own read-write endpoint, as the service reports it).
 * 2. Live: one read-only query on each URL returns the session's server identity — database,
 *    server address and port, postmaster start time and, on Neon-based services, the timeline id.
 *    Every branch has its own compute (its own postmaster), so two equal fingerprints mean the two
 *    URLs reach the same database: the branch URL leads to the parent, and Consort refuses.
 */
import { ConsortError } from '../../core/errors.js';
import { maskUrl } from '../../core/redact.js';
import { withClient } from '../../db/sql.js';

export interface Fingerprint {
  database: string;
  address: string | null;
  port: number | null;
  startedAt: string;
  timeline: string | null;
}

const FINGERPRINT_SQL = `SELECT current_database() AS database, inet_server_addr()::text AS address, inet_server_port() AS port,
  pg_postmaster_start_time()::text AS started, current_setting('neon.timeline_id', true) AS timeline`;

export async function fingerprint(url: string): Promise<Fingerprint> {
  return withClient(
    url,
    async (db) => {
      const { rows } = await db.query<{
        database: string;
        address: string | null;
        port: number | null;
        started: string;
        timeline: string | null;
      }>(FINGERPRINT_SQL);
      const r = rows[0]!;
      return {
        database: r.database,
        address: r.address,
        port: r.port,
        startedAt: r.started,
        timeline: r.timeline || null,
      };
    },
    { applicationName: 'consort-verify' },
  );
}

export function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return (
    a.database === b.database &&
    a.address === b.address &&
    a.port === b.port &&
    a.startedAt === b.startedAt &&
    a.timeline === b.timeline
  );
}

/** host:port/database of a connection URL (credentials and parameters ignored). */
export function urlAddress(url: string): string {
  const u = new URL(url);
  return `${u.hostname.toLowerCase()}:${u.port || '5432'}${decodeURIComponent(u.pathname)}`;
}

export interface VerifyInput {
  branch: string;
  url: string;
  parent: string;
  /** Undefined when the parent has no read-write endpoint (nothing it could be confused with). */
  parentUrl: string | undefined;
}

/** Throws unless `url` reaches `branch` itself; reads only. */
export async function verifyBranchUrl(input: VerifyInput): Promise<void> {
  const refuse = (why: string) =>
    new ConsortError(
      'internal',
      `The URL for branch "${input.branch}" (${maskUrl(input.url)}) ${why}; refusing to use it.`,
      {
        hint: 'Nothing was written. This is a service or provider bug: report it, and do not run migrations with this URL.',
      },
    );
  if (input.parentUrl && urlAddress(input.url) === urlAddress(input.parentUrl))
    throw refuse(`is the address of its parent "${input.parent}"`);
  let mine: Fingerprint;
  try {
    mine = await fingerprint(input.url);
  } catch (e) {
    throw new ConsortError(
      'service-error',
      `Could not connect to the new branch "${input.branch}" to verify it: ${(e as Error).message}`,
      {
        hint: 'The endpoint may still be starting, or the credentials lack access to the database: retry, and check the role/database settings.',
        cause: e,
      },
    );
  }
  if (!input.parentUrl) return;
  const theirs = await fingerprint(input.parentUrl);
  if (sameFingerprint(mine, theirs)) throw refuse(`reaches the same database as its parent "${input.parent}"`);
}
