/**
 * The reversibility stage: prove the new migrations reverse (reversibility.ts), as the branch's
 * confined role, and judge the verdicts. Where every new migration has a down, on the PR branch
 * itself once its migrations applied one at a time (applyOneByOne): down and up again from there,
 * with no copy, role or first pass of its own. Otherwise on a temporary copy of the baseline, started
 * beside the migrations: the ones before a migration that cannot go down are proven before it is
 * applied, which the PR branch, holding it already, cannot do.
 */
import type { BranchProvider } from '../../ports/branch-provider.js';
import type { MigrationEngine } from '../../migrations/engine.js';
import type { MigrationFile } from '../../migrations/files.js';
import type { MigrationPlacement } from '../../migrations/placement.js';
import type { ApplyOptions, ApplyResult, MigrationSession } from '../../ports/migration-runner.js';
import type { SchemaReader } from '../../ports/schema-reader.js';
import type { Stages } from '../../report/check-report.js';
import type { SchemaSnapshot } from '../../schema/snapshot.js';
import { confined, unconfinedNote } from './confined.js';
import { proveReversibility } from './reversibility.js';
import { count } from '../../core/plural.js';

export type ReversibilityOutcome = ReturnType<typeof reversibilityOutcome>;

/** What both ways of proving reversibility need: the migrations, how they run, and the run's hooks. */
export interface ProofSetting {
  provider: BranchProvider;
  migrations: readonly MigrationFile[];
  headDir: { dir: string; relativeTo: string };
  placement: MigrationPlacement;
  checkOrder: boolean;
  ignorePattern: string;
  engine: MigrationEngine;
  /** check.migrationsRole: admin on the base. */
  asAdmin: boolean;
  requireDown: boolean;
  runner: MigrationSession;
  /** Branches where the code ran with the provider's own credentials (filled in). */
  unconfined: Set<string>;
  cancelPoint: () => void;
  onTerminated: (line: string) => void;
}

/** The fields of a setting the proof itself takes (proveReversibility). */
const howTheyRun = (s: ProofSetting) => ({
  asAdmin: s.asAdmin,
  migrations: s.migrations,
  headDir: s.headDir,
  placement: s.placement,
  checkOrder: s.checkOrder,
  ignorePattern: s.ignorePattern,
  engine: s.engine,
  runner: s.runner,
});

export interface ReversibilityStageInput extends ProofSetting {
  /** The temporary branch to make (a child of `baseline`). */
  branch: string;
  baseline: string;
  ttlMs: number;
  annotations: Record<string, string>;
  schemas: SchemaReader;
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
    ...howTheyRun(input),
    schemas: input.schemas,
    // A throwaway copy: a cancelled run stops before its next step (the PR branch's proof, once
    // started, runs to its end, so the branch the pull request keeps holds its migrations).
    cancelPoint: input.cancelPoint,
    reset: async () => {
      input.cancelPoint();
      await provider.reset(branch, { terminateConnections: true, onTerminated: input.onTerminated });
    },
  });
  const outcome = reversibilityOutcome(result.migrations, input.requireDown);
  const note = input.unconfined.has(branch) ? unconfinedNote(provider.name) : '';
  return { ...outcome, summary: `${outcome.summary}${note}` };
}

/** Whether reversibility can be proven on the PR branch after its migrations: every one has a down. */
export function provableOnBranch(migrations: readonly MigrationFile[]): boolean {
  return migrations.every((m) => m.hasDown === true || m.hasDown === 'inferred');
}

/**
 * The PR branch's migrations, one request each with the schema read after each (over the
 * connections kept for the proof that follows), as one result: what the migrations stage reports,
 * and the proof's first pass. `schemas` has the one before them, then one per migration applied.
 */
export async function applyOneByOne(input: {
  runner: MigrationSession;
  options: Omit<ApplyOptions, 'direction' | 'count'>;
  count: number;
  before: SchemaSnapshot;
  snapshot: () => Promise<SchemaSnapshot>;
}): Promise<{ result: ApplyResult; schemas: SchemaSnapshot[] }> {
  const applied: ApplyResult['applied'] = [];
  const log: string[] = [];
  const schemas = [input.before];
  for (let i = 0; i < input.count; i++) {
    const r = await input.runner.apply(
      { ...input.options, direction: 'up', count: 1 },
      { keep: true, first: true }, // the critical path: the proof's steps follow on this branch
    );
    applied.push(...r.applied);
    log.push(...r.log);
    if (!r.ok) return { result: { ok: false, failed: r.failed, applied, log }, schemas };
    schemas.push(await input.snapshot());
  }
  return { result: { ok: true, applied, log }, schemas };
}

export interface BranchReversibilityInput extends ProofSetting {
  /** The PR branch, holding the new migrations (applyOneByOne). */
  branch: string;
  /** Its admin URL (the reads), and the confined one the migrations ran with (asked again after a reset). */
  url: string;
  confinedUrl: string;
  applied: readonly SchemaSnapshot[];
  /** The PR branch's kept reads (the same connection its before and after were read on). */
  schemas: SchemaReader;
  /** Ends what the run keeps on the PR branch besides the proof's own (its reads), before a reset. */
  releaseReads: () => Promise<void>;
}

/**
 * Reversibility on the PR branch after its migrations: down and up again from there, compared with
 * the schemas read as they applied. A step that leaves the branch otherwise has it reset to the
 * baseline and the migrations applied again, so the branch the pull request keeps holds them.
 */
export async function reversibilityOnBranch(input: BranchReversibilityInput): Promise<ReversibilityOutcome> {
  const { provider, branch, url } = input;
  let confinedUrl: string | undefined = input.confinedUrl;
  const result = await proveReversibility({
    url,
    // The role the migrations ran as; after a reset, made again for the fresh copy.
    runAs: async () => {
      const now = confinedUrl ?? (await confined(provider, branch, url, input.unconfined));
      confinedUrl = undefined;
      return now;
    },
    applied: input.applied,
    ...howTheyRun(input),
    schemas: input.schemas,
    reset: async () => {
      input.cancelPoint();
      await input.releaseReads();
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
    return {
      status: 'failed',
      summary: `${count(failed.length, 'migration')} ${failed.length === 1 ? 'does' : 'do'} not reverse: ${list}${tail}`,
      migrations,
    };
  }
  if (unchecked.length > 0)
    return {
      status: 'failed',
      summary: `${count(reversible, 'migration')} ${reversible === 1 ? 'reverses' : 'reverse'} cleanly${tail}`,
      migrations,
    };
  return {
    status: 'passed',
    summary: `${count(reversible, 'migration')} ${reversible === 1 ? 'reverses' : 'reverse'} cleanly${tail}`,
    migrations,
  };
}
