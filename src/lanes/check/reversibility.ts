/**
 * Prove each new migration reverses, on a throwaway branch of the baseline: apply them one at a
 * time (snapshotting the schema after each), take them down one at a time comparing each step with
 * the snapshot before that migration, then apply them all again and compare with the first pass.
 * node-pg-migrate's own `redo` compares nothing; this is what makes a down migration trustworthy.
 */
import { withClient } from '../../db/sql.js';
import type { MigrationFile } from '../../migrations/files.js';
import { applyMigrations, type ApplyResult } from '../../migrations/runner.js';
import type { ReversibilityVerdict } from '../../report/check-report.js';
import { diffSchemas, isEmptyDiff } from '../../schema/diff.js';
import { renderSchemaDiffText } from '../../schema/render.js';
import { snapshotSchema, type SchemaSnapshot } from '../../schema/snapshot.js';

export interface ReversibilityInput {
  url: string;
  migrations: readonly MigrationFile[];
  headDir: { dir: string; relativeTo: string };
  table: string;
}

export interface ReversibilityResult {
  migrations: { name: string; file: string; verdict: ReversibilityVerdict; detail?: string }[];
  /** The schema before any new migration ran (the baseline's), for the schema diff stage. */
  before: SchemaSnapshot;
}

const DETAIL_LIMIT = 4000;

export async function proveReversibility(input: ReversibilityInput): Promise<ReversibilityResult> {
  const snapshot = () => withClient(input.url, (db) => snapshotSchema(db, { ignoreTables: [input.table] }));
  const run = (direction: 'up' | 'down'): Promise<ApplyResult> => applyMigrations({
    databaseUrl: input.url, dir: input.headDir.dir, relativeTo: input.headDir.relativeTo, direction, count: 1, migrationsTable: input.table,
  });
  const verdicts = new Map<string, { verdict: ReversibilityVerdict; detail?: string }>();
  const before = await snapshot();
  const after: SchemaSnapshot[] = [before];
  for (const m of input.migrations) {
    const up = await run('up');
    if (!up.ok) return finish(input, verdicts, before, `applying ${m.name} on the throwaway branch failed: ${up.failed.error.message}`);
    after.push(await snapshot());
  }
  // Down, newest first: each down must restore the schema as it was before that migration.
  let lowest = input.migrations.length;
  for (let i = input.migrations.length - 1; i >= 0; i--) {
    const m = input.migrations[i]!;
    if (m.hasDown === 'irreversible') {
      verdicts.set(m.name, { verdict: 'irreversible', detail: 'declared irreversible; older migrations in this PR were not taken down past it' });
      break;
    }
    if (m.hasDown === false) {
      verdicts.set(m.name, { verdict: 'missing-down', detail: 'no down migration: it cannot be rolled back (declare it irreversible if that is intended)' });
      break;
    }
    const down = await run('down');
    if (!down.ok) {
      const kind = down.failed.kind === 'down-unavailable' ? 'missing-down' : 'down-failed';
      verdicts.set(m.name, { verdict: kind, detail: down.failed.error.message });
      break;
    }
    lowest = i;
    const diff = diffSchemas(after[i]!, await snapshot());
    verdicts.set(m.name, isEmptyDiff(diff)
      ? { verdict: 'reversible' }
      : { verdict: 'not-restored', detail: `after down, the schema differs from before up:\n${renderSchemaDiffText(diff).slice(0, DETAIL_LIMIT)}` });
  }
  // Up again from where the downs stopped: the result must equal the first pass.
  for (let i = lowest; i < input.migrations.length; i++) {
    const m = input.migrations[i]!;
    const up = await run('up');
    if (!up.ok) {
      verdicts.set(m.name, { verdict: 'reapply-failed', detail: `up after down failed: ${up.failed.error.message}` });
      return finish(input, verdicts, before);
    }
  }
  const final = diffSchemas(after[input.migrations.length]!, await snapshot());
  if (!isEmptyDiff(final)) {
    // Blame the newest migration that otherwise looked fine; a not-restored one already explains it.
    const suspect = [...input.migrations].reverse().find((m) => verdicts.get(m.name)?.verdict === 'reversible');
    if (suspect) verdicts.set(suspect.name, { verdict: 'reapply-failed', detail: `up → down → up does not give the same schema:\n${renderSchemaDiffText(final).slice(0, DETAIL_LIMIT)}` });
  }
  return finish(input, verdicts, before);
}

function finish(
  input: ReversibilityInput,
  verdicts: Map<string, { verdict: ReversibilityVerdict; detail?: string }>,
  before: SchemaSnapshot,
  notCheckedReason = 'not reached: a newer migration in this PR cannot be taken down',
): ReversibilityResult {
  return {
    before,
    migrations: input.migrations.map((m) => ({ name: m.name, file: m.file, ...(verdicts.get(m.name) ?? { verdict: 'not-checked' as const, detail: notCheckedReason }) })),
  };
}
