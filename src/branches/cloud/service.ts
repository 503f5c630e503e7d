/**
 * What a managed branching service (Lakebase, Neon) must offer so that `CloudBranchProvider`
 * can give it the exact semantics of `local`: the service speaks in its own ids and operations,
 * the provider in Consort's branch names, parents, TTLs, `prepare` and verification.
 */
import type { ProviderName } from '../../ports/branch-provider.js';

/** A branch as the service reports it. */
export interface RemoteBranch {
  /** The service's id (Lakebase: the branch id; Neon: `br-…`). */
  id: string;
  /** The name people see (Lakebase: the branch id; Neon: the branch name). */
  name: string;
  parentId: string | null;
  /** The project's default branch: Consort calls it `main`. */
  isDefault: boolean;
  createdAt: Date;
  expiresAt: Date | null;
  gitBranch: string | null;
}

export interface CreateRemoteBranch {
  name: string;
  parentId: string;
  /** Already clamped to `maxTtlMs`. */
  ttlMs?: number;
  /** Fork the parent as it was at this time (point-in-time branch). */
  at?: Date;
  gitBranch?: string;
  /** Who made it (PR number, commit), where the service can store it. */
  annotations: Record<string, string>;
}

export interface RestoreOptions {
  /** Keep the branch's old state (and its children) as a new branch of this name. */
  preserveUnderName?: string;
}

export interface ServiceDescription {
  serverVersion: string;
  modeReason: string;
}

export interface BranchService {
  readonly provider: ProviderName;
  /** The longest expiry the service accepts. */
  readonly maxTtlMs: number;
  /** Checks credentials and that the project exists; errors say which setting to fix. */
  describe(): Promise<ServiceDescription>;
  list(): Promise<RemoteBranch[]>;
  /** Create and wait until the branch is ready with a read-write endpoint. */
  create(options: CreateRemoteBranch): Promise<RemoteBranch>;
  /** Delete and wait; a branch that is already gone is not an error. */
  delete(branch: RemoteBranch): Promise<void>;
  /** Make `branch` a copy of `source`'s current state in place, if the service can (else delete + re-create). */
  restore?(branch: RemoteBranch, source: RemoteBranch, options?: RestoreOptions): Promise<void>;
  /** A login URL for the branch's read-write endpoint; undefined when it has none. */
  connectionUri(branch: RemoteBranch): Promise<string | undefined>;
  close(): Promise<void>;
}
