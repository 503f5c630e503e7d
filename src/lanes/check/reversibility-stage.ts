/**
 * The reversibility stage: prove the new migrations reverse (reversibility.ts) on a temporary copy
 * of the baseline, as the branch's confined role, and judge the verdicts. It needs nothing from the
 * PR branch, so the run starts it beside the migrations.
 */
import type { BranchProvider } from '../../ports/branch-provider.js';
import type { MigrationEngine } from '../../migrations/engine.js';
import type { MigrationFile } from '../../migrations/files.js';
import type { MigrationSession } from '../../ports/migration-runner.js';
import type { SchemaReader } from '../../ports/schema-reader.js';
import type { Stages } from '../../report/check-report.js';
import { confined, unconfinedNote } from './confined.js';
import { proveReversibility } from './reversibility.js';

export type ReversibilityOutcome = ReturnType<typeof reversibilityOutcome>;

export interface ReversibilityStageInput {
  provider: BranchProvider;
  /** The temporary branch to make (a child of `baseline`). */
  branch: string;
  baseline: string;
  ttlMs: number;
  annotations: Record<string, string>;
  migrations: readonly MigrationFile[];
  headDir: { dir: string; relativeTo: string };
  table: string;
  checkOrder: boolean;
  engine: MigrationEngine;
  /** check.migrationsRole: admin on the base. */
  asAdmin: boolean;
  requireDown: boolean;
  runner: MigrationSession;
  schemas: SchemaReader;
  /** Branches where the code ran with the provider's own credentials (filled in). */
  unconfined: Set<string>;
  cancelPoint: () => void;
  onTerminated: (line: string) => void;
}

export async function reversibilityStage(input: ReversibilityStageInput): Promise<ReversibilityOutcome> {
  const { provider, branch } = input;
  await provider.create({ name: branch, parent: input.baseline, ttlMs: input.ttlMs, annotations: input.annotations });
  input.cancelPoint();
  const url = await provider.connectionUri(branch);
  const result = await proveReversibility({
    url,
    // Asked again after each reset: a fresh copy needs its role's grants again.
    runAs: () => confined(provider, branch, url, input.unconfined),
    asAdmin: input.asAdmin,
    migrations: input.migrations,
    headDir: input.headDir,
    table: input.table,
    checkOrder: input.checkOrder,
    engine: input.engine,
    runner: input.runner,
    schemas: input.schemas,
    reset: async () => {
      input.cancelPoint();
      await provider.reset(branch, { terminateConnections: true, onTerminated: input.onTerminated });
    },
  });
  const outcome = reversibilityOutcome(result.migrations, input.requireDown);
  const note = input.unconfined.has(branch) ? unconfinedNote(provider.name) : '';
  return { ...outcome, summary: `${outcome.summary}${note}` };
}

const FAILED_VERDICTS: ReadonlySet<string> = new Set(['missing-down', 'not-restored', 'down-failed', 'reapply-failed']);

/**
 * The stage's status and summary. "do not reverse" counts only migrations that were checked and
 * failed; unchecked ones are counted apart (and fail the stage: nothing was proven), and a
 * migration declared irreversible fails it only when the configuration requires downs.
 */
export function reversibilityOutcome(
  migrations: Stages['reversibility']['migrations'],
  requireDown: boolean,
): Pick<Stages['reversibility'], 'status' | 'summary' | 'migrations'> {
  const names = (ms: typeof migrations): string => ms.map((m) => m.name).join(', ');
  const failed = migrations.filter(
    (m) => FAILED_VERDICTS.has(m.verdict) || (requireDown && m.verdict === 'irreversible'),
  );
  const unchecked = migrations.filter((m) => m.verdict === 'not-checked');
  const declared = migrations.filter((m) => m.verdict === 'irreversible');
  const reversible = migrations.filter((m) => m.verdict === 'reversible').length;
  const notes = [
    ...(declared.length > 0
      ? [
          `${declared.length} declared irreversible${requireDown ? ' (reversibility.requireDown: true)' : ''}: ${names(declared)}`,
        ]
      : []),
    ...(unchecked.length > 0
      ? [
          `${unchecked.length} not checked: ${names(unchecked)}${unchecked[0]?.detail ? ` (${unchecked[0].detail})` : ''}`,
        ]
      : []),
  ];
  const tail = notes.length > 0 ? `; ${notes.join('; ')}` : '';
  if (failed.length > 0) {
    const list = failed.map((m) => `${m.name} (${m.verdict})`).join(', ');
    return { status: 'failed', summary: `${failed.length} migration(s) do not reverse: ${list}${tail}`, migrations };
  }
  if (unchecked.length > 0)
    return { status: 'failed', summary: `${reversible} migration(s) reverse cleanly${tail}`, migrations };
  return { status: 'passed', summary: `${reversible} migration(s) reverse cleanly${tail}`, migrations };
}
