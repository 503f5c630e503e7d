/**
 * A test file's side of a run: reopen the run's provider from its spec (no server check, no copies:
 * the run's setup refills the pool) and lease a branch; give it back at the end.
 */
import { TemplateBranchProvider, type ProviderSettingsSnapshot } from '../branches/template-provider.js';
import { withClient, withDatabase } from '../db/sql.js';
import { leaseBranch, releaseBranch, type Lease } from './lease.js';
import { RETURN_CHANNEL, type RunSpec } from './spec.js';

/** The worker's side: one provider for one file's lease, reopened from the run's spec. */
export class Leaser {
  private readonly provider: TemplateBranchProvider;

  constructor(private readonly spec: RunSpec) {
    const s: ProviderSettingsSnapshot = spec.settings;
    this.provider = new TemplateBranchProvider({
      ...s,
      cloneMode: async () => ({ clone: s.known.mode === 'clone', reason: s.known.modeReason }),
      refillPools: false, // the run's setup refills (watchPools)
    });
  }

  lease(): Promise<Lease> {
    return leaseBranch(this.provider, { template: this.spec.template, run: this.spec.run, ttlMs: this.spec.ttlMs });
  }

  /** Drop the lease now (the caller waits for the server's checkpoint). */
  release(name: string): Promise<void> {
    return releaseBranch(this.provider, name);
  }

  /** Give the lease back to the run's setup, which drops it in the background (and at its stop). */
  async giveBack(name: string): Promise<void> {
    const { adminUrl, catalogDatabase, namespace } = this.spec.settings;
    await withClient(
      withDatabase(adminUrl, catalogDatabase),
      (db) => db.query('SELECT pg_notify($1, $2)', [RETURN_CHANNEL, JSON.stringify([namespace, name])]),
      {
        applicationName: 'consort-lease',
      },
    );
  }

  close(): Promise<void> {
    return this.provider.close();
  }
}

/**
 * Lease a database for one test file: the URL, and a function that gives it back and closes
 * everything. The file's sessions should be closed by then; the drop ends any that are left.
 */
export async function leaseForFile(spec: RunSpec): Promise<{ lease: Lease; done: () => Promise<void> }> {
  const leaser = new Leaser(spec);
  let lease: Lease;
  try {
    lease = await leaser.lease();
  } catch (e) {
    await leaser.close();
    throw e;
  }
  return {
    lease,
    done: async () => {
      try {
        await leaser.giveBack(lease.name);
      } finally {
        await leaser.close();
      }
    },
  };
}
