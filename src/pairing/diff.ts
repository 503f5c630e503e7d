/** The schema of a paired branch against its parent: what this git branch's migrations changed. */
import type { ConsortConfig } from '../config/schema.js';
import { ConsortError } from '../core/errors.js';
import { withClient } from '../db/sql.js';
import { bookkeepingTables, migrationPlacement } from '../migrations/placement.js';
import type { BranchProvider } from '../ports/branch-provider.js';
import { diffCounts, diffSchemas, isEmptyDiff, type SchemaDiff } from '../schema/diff.js';
import { snapshotSchema } from '../schema/snapshot.js';
import { findPaired } from './service.js';

export interface PairDiff {
  gitBranch: string;
  branch: string;
  parent: string;
  empty: boolean;
  counts: ReturnType<typeof diffCounts>;
  diff: SchemaDiff;
}

export async function pairedSchemaDiff(
  provider: BranchProvider,
  config: ConsortConfig,
  gitBranch: string,
): Promise<PairDiff> {
  const paired = await findPaired(provider, config, gitBranch);
  if (!paired) {
    throw new ConsortError('branch-not-found', `The git branch "${gitBranch}" has no database branch yet.`, {
      hint: 'Run consort pair first.',
    });
  }
  if (paired.parent === null) {
    throw new ConsortError(
      'invalid-input',
      `"${gitBranch}" is paired with the root branch "${paired.name}", which has no parent to compare with.`,
      {
        hint: 'Check out a feature branch, or compare two branches with consort check.',
      },
    );
  }
  // node-pg-migrate's bookkeeping table differs whenever migrations did: not a schema change.
  const options = { ignoreTables: bookkeepingTables(migrationPlacement(config.migrations)) };
  const [before, after, caps] = await Promise.all([
    withClient(await provider.connectionUri(paired.parent), (db) => snapshotSchema(db, options)),
    withClient(await provider.connectionUri(paired.name), (db) => snapshotSchema(db, options)),
    provider.capabilities(),
  ]);
  // The parent may have moved on since the fork. On one server (local, postgres: a branch is a
  // database) an OID is never handed out twice, so it still tells a rename; separate servers
  // (Neon's, Lakebase's branches) hand the same OIDs to parent and child after they part.
  const oneServer = caps.provider === 'local' || caps.provider === 'postgres';
  const diff = diffSchemas(before, after, { renames: oneServer });
  return {
    gitBranch,
    branch: paired.name,
    parent: paired.parent,
    empty: isEmptyDiff(diff),
    counts: diffCounts(diff),
    diff,
  };
}
