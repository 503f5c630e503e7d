/**
 * Promote a merged pull request's migrations to the parent branch, with a way back: first a
 * snapshot branch of the parent as it was (`pre-merge-pr-<n>-<sha7>`), then the migrations applied
 * to the parent with node-pg-migrate. On success the snapshot is deleted; on failure it is kept
 * and the comment says how to restore the parent from it. Outcomes are a union, never a throw.
 */
import { ConsortError, isConsortError } from '../src/core/errors.js';
import type { MigrationEngine } from '../src/migrations/engine.js';
import type { MigrationPlacement } from '../src/migrations/placement.js';
import { applyMigrations } from '../src/migrations/runner.js';
import type { BranchProvider } from '../src/ports/branch-provider.js';
import { mdCode, shellQuote } from '../src/report/escape.js';
import { count } from '../src/core/plural.js';

export interface PromoteInput {
  provider: BranchProvider;
  parent: string;
  /** Where node-pg-migrate runs and records them (the project's migrations.table, schema, …). */
  placement: MigrationPlacement;
  /** The merged migrations on disk. */
  dir: string;
  relativeTo: string;
  pr: number;
  mergeSha: string;
  /** The same node-pg-migrate and order check as the project's deploy and its checks (default: bundled, checkOrder on). */
  engine?: MigrationEngine;
  checkOrder?: boolean;
}

export type PromoteOutcome =
  /** Nothing changed: the snapshot could not be made (e.g. someone is connected to the parent). */
  | { kind: 'not-started'; snapshot: string; reason: string }
  | { kind: 'promoted'; snapshot: string; applied: string[] }
  | { kind: 'failed'; snapshot: string; applied: string[]; migration: string; error: string };

export const snapshotName = (pr: number, sha: string): string => `pre-merge-pr-${pr}-${sha.slice(0, 7)}`;

export async function promote(input: PromoteInput): Promise<PromoteOutcome> {
  const snapshot = snapshotName(input.pr, input.mergeSha);
  try {
    if (await input.provider.get(snapshot)) await input.provider.delete(snapshot, { recursive: true });
    await input.provider.create({ name: snapshot, parent: input.parent });
  } catch (e) {
    if (!isConsortError(e)) throw e;
    return { kind: 'not-started', snapshot, reason: `${e.message}${e.hint ? ` ${e.hint}` : ''}` };
  }
  const url = await input.provider.connectionUri(input.parent);
  let result;
  try {
    result = await applyMigrations({
      databaseUrl: url,
      dir: input.dir,
      relativeTo: input.relativeTo,
      direction: 'up',
      ...input.placement,
      ...(input.engine ? { engine: input.engine } : {}),
      ...(input.checkOrder === undefined ? {} : { checkOrder: input.checkOrder }),
    });
  } catch (e) {
    if (!(e instanceof ConsortError)) throw e;
    return { kind: 'failed', snapshot, applied: [], migration: '(none)', error: e.message };
  }
  const applied = result.applied.map((m) => m.name);
  if (!result.ok)
    return {
      kind: 'failed',
      snapshot,
      applied,
      migration: result.failed.file ?? result.failed.name ?? 'a migration',
      error: result.failed.error.message,
    };
  await input.provider.delete(snapshot, { recursive: true });
  return { kind: 'promoted', snapshot, applied };
}

export interface PromoteContext {
  parent: string;
  /** How to reach the App's branches with the CLI (`consort --provider postgres --namespace …`). */
  cli: string;
}

/** The comment the App posts on the merged pull request. */
export function promoteComment(outcome: PromoteOutcome, ctx: PromoteContext): string {
  const parent = mdCode(ctx.parent);
  switch (outcome.kind) {
    case 'not-started':
      return `### ⚠️ Consort did not promote the migrations\n\nThe pre-migration snapshot of ${parent} could not be made, so nothing was changed: ${outcome.reason}\n\nApply the migrations to ${parent} by hand, or merge again after fixing the cause.`;
    case 'promoted':
      return outcome.applied.length === 0
        ? `### ✅ Consort: nothing to promote\n\n${parent} already had every migration of this merge.`
        : `### ✅ Consort promoted ${count(outcome.applied.length, 'migration')} to ${parent}\n\n${outcome.applied.map((n) => `- ${mdCode(n)}`).join('\n')}\n\nThe pre-migration snapshot was deleted.`;
    case 'failed': {
      const snap = shellQuote(outcome.snapshot);
      const done =
        outcome.applied.length === 0
          ? 'No migration was applied.'
          : `Applied before the failure: ${outcome.applied.map(mdCode).join(', ')}.`;
      return [
        `### ❌ Consort could not promote the migrations to ${parent}`,
        '',
        `${mdCode(outcome.migration)} failed: ${mdCode(outcome.error.slice(0, 500))}. ${done}`,
        '',
        `The state of ${parent} before the merge is kept in the branch ${mdCode(outcome.snapshot)}. To restore ${parent} from it (on the App's host, with the App's branch server):`,
        '',
        '```sh',
        `${ctx.cli} branch url ${snap}    # inspect the snapshot first`,
        `pg_dump -Fc "$(${ctx.cli} branch url ${snap})" \\`,
        `  | pg_restore --clean --if-exists --no-owner -d "$(${ctx.cli} branch url ${shellQuote(ctx.parent)})"`,
        `${ctx.cli} branch delete ${snap}   # once ${ctx.parent} is restored`,
        '```',
        '',
        `Or fix the migration in a new pull request; ${mdCode(outcome.snapshot)} stays until you delete it.`,
      ].join('\n');
    }
  }
}
