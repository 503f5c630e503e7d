/**
 * Leases: a branch of a template handed to one test file (or one shell session) and returned after
 * it, taken from the template's warm pool when one is ready. A lease is an ordinary branch with an
 * expiry and a name that says what it is (`lease-<run>-<random>`), so nothing about it can leak:
 * `release` drops it, a test run's teardown drops every lease of the run, and one a crash left
 * behind expires — swept by the next lease setup and by `consort branch gc`.
 */
import { randomBytes } from 'node:crypto';
import { ConsortError } from '../core/errors.js';
import type { BranchProvider } from '../ports/branch-provider.js';

/** How long a lease lives unless returned (a test file that runs longer should pass its own). */
export const DEFAULT_LEASE_TTL_MS = 60 * 60_000;

const LEASE = /^lease-([a-z0-9]{1,12})-[a-z0-9]{1,12}$/;

export function isLeaseName(name: string): boolean {
  return LEASE.test(name);
}

/** A short random tag shared by the leases of one run (a test run, or one CLI call). */
export function newRunTag(): string {
  return randomBytes(4).toString('hex');
}

export interface Lease {
  name: string;
  template: string;
  url: string;
  /** The branch came ready-made from the template's warm pool. */
  pooled: boolean;
  /** Why a template with a pool did not hand one out (BranchRecord's): none ready, none of its current state, or sessions on it. */
  poolMiss?: 'empty' | 'stale' | 'busy';
  durationMs: number;
  expiresAt: Date | null;
}

export interface LeaseOptions {
  template: string;
  /** Groups the leases of one run, so the run's teardown can return whatever its files did not. */
  run?: string;
  ttlMs?: number;
  terminateConnections?: boolean;
}

export async function leaseBranch(provider: BranchProvider, options: LeaseOptions): Promise<Lease> {
  const started = performance.now();
  const name = `lease-${options.run ?? newRunTag()}-${randomBytes(4).toString('hex')}`;
  const branch = await provider.create({
    name,
    parent: options.template,
    ttlMs: options.ttlMs ?? DEFAULT_LEASE_TTL_MS,
    ...(options.terminateConnections ? { terminateConnections: true } : {}),
  });
  const url = await provider.connectionUri(name);
  return {
    name,
    template: options.template,
    url,
    pooled: branch.pooled === true,
    ...(branch.poolMiss ? { poolMiss: branch.poolMiss } : {}),
    durationMs: Math.round(performance.now() - started),
    expiresAt: branch.expiresAt,
  };
}

/** Return a lease: its database is dropped, whoever is still connected to it. */
export async function releaseBranch(provider: BranchProvider, name: string): Promise<void> {
  if (!isLeaseName(name)) {
    throw new ConsortError(
      'invalid-input',
      `"${name}" is not a lease (lease names look like lease-1a2b3c4d-5e6f7a8b).`,
      {
        hint: 'Delete an ordinary branch with `consort branch delete`.',
      },
    );
  }
  await provider.delete(name, { terminateConnections: true });
}

/** The lease whose database a connection URL names (`consort branch release "$DATABASE_URL"`). */
export async function leaseForUrl(provider: BranchProvider, url: string): Promise<string | undefined> {
  let database: string;
  try {
    database = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  } catch {
    return undefined;
  }
  return (await provider.list()).find((b) => b.database === database && isLeaseName(b.name))?.name;
}

/**
 * Return leases that nobody will: every lease of `run` (a run's teardown), or, without `run`, the
 * expired ones (a crashed run's). Returns the names dropped; a lease that cannot be dropped now is
 * left for the next sweep.
 */
export async function sweepLeases(
  provider: BranchProvider,
  options: { run?: string; now?: Date } = {},
): Promise<string[]> {
  const now = options.now ?? new Date();
  const due = (await provider.list()).filter((b) => {
    const m = LEASE.exec(b.name);
    if (!m) return false;
    return options.run !== undefined ? m[1] === options.run : b.expiresAt !== null && b.expiresAt <= now;
  });
  const dropped: string[] = [];
  for (const b of due) {
    try {
      await provider.delete(b.name, { terminateConnections: true, recursive: true });
      dropped.push(b.name);
    } catch {
      // Gone already (another sweep), or the server is going away: the next sweep tries again.
    }
  }
  return dropped;
}
