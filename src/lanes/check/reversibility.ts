/**
 * Prove each new migration reverses, on a throwaway branch of the baseline: apply them one at a
 * time (snapshotting the schema after each), take them down one at a time comparing each step with
 * the snapshot before that migration, then apply them all again and compare with the first pass.
 * node-pg-migrate's own `redo` compares nothing; this is what makes a down migration trustworthy.
 * A migration that cannot go down (declared irreversible, no down) is not a reason for a fresh copy:
 * the migrations before it are proven before it is applied, those after it on top of it.
 * On a branch that holds the migrations already, applied one at a time with a read after each (the
 * PR branch: `applied`), the first ups are those: the proof goes down from there and up again, and
 * leaves the branch holding them all, as it found it.
 */
import type { MigrationEngine } from '../../migrations/engine.js';
import type { MigrationFile } from '../../migrations/files.js';
import { bookkeepingTables, type MigrationPlacement } from '../../migrations/placement.js';
import type { ReversibilityVerdict } from '../../report/check-report.js';
import { diffSchemas, isEmptyDiff } from '../../schema/diff.js';
import { renderSchemaDiffText } from '../../schema/render.js';
import type { ApplyOptions, ApplyResult, MigrationRunner, MigrationSession } from '../../ports/migration-runner.js';
import type { SchemaReader } from '../../ports/schema-reader.js';
import type { SchemaSnapshot } from '../../schema/snapshot.js';
import { noopDrops } from './noop-drops.js';
import { thrownDownDetail, uninferableDownDetail } from './down-detail.js';
import { downTransactionBlockNote } from './transaction-note.js';

export interface ReversibilityInput {
  /** The throwaway branch, as the admin: its schema is read with it. */
  url: string;
  /**
   * The URL the migrations run with (a role confined to the branch, for a pull request's code),
   * asked at the start and again after each reset; without it they run with `url`.
   */
  runAs?: () => Promise<string>;
  /**
   * Apply the migrations with `url` all the same (`check.migrationsRole: admin` on the base); `runAs`
   * still makes the branch's role, so the snapshots hold the same grants as the PR branch's.
   */
  asAdmin?: boolean;
  migrations: readonly MigrationFile[];
  headDir: { dir: string; relativeTo: string };
  /** Where node-pg-migrate runs them and records them (migrations.schema, migrationsSchema, …). */
  placement: MigrationPlacement;
  checkOrder?: boolean;
  /** `migrations.ignorePattern`. */
  ignorePattern?: string;
  engine?: MigrationEngine;
  /**
   * Put the throwaway branch back to the baseline. With it, the migrations older than one that
   * cannot be taken down (declared irreversible, no down, a failing down) are still checked, on a
   * fresh copy holding only them; without it they are reported as not checked.
   */
  reset?: () => Promise<void>;
  /**
   * Applies each step: the run's session (one child for the lot, and one connection kept for all
   * the steps, released before a reset and at the end), or the port itself (a child and a
   * connection per step).
   */
  runner: Pick<MigrationRunner, 'apply'> & Partial<Pick<MigrationSession, 'apply' | 'release'>>;
  /** Reads the branch's schema before and after each step (over one kept connection where it can: `open`). */
  schemas: SchemaReader;
  /** The baseline's schema when the caller has read it already (a fresh copy of the baseline has the same). */
  before?: SchemaSnapshot;
  /**
   * The branch holds every one of `migrations` already, applied one at a time (the PR branch after
   * its migrations stage, applyOneByOne): the schema before them, then after each, read on this
   * branch with its role. The proof starts from the top (no first ups), and when a step left the
   * branch otherwise it puts it back (with `reset`) to every migration applied.
   */
  applied?: readonly SchemaSnapshot[];
  /**
   * Throws when the run was cancelled: called before each step, so a cancelled run's proof on a
   * throwaway copy stops there instead of going on through every down and up.
   */
  cancelPoint?: () => void;
}

export interface ReversibilityResult {
  migrations: { name: string; file: string; verdict: ReversibilityVerdict; detail?: string }[];
  /** The schema before any new migration ran (the baseline's), for the schema diff stage. */
  before: SchemaSnapshot;
}

type Verdicts = Map<string, { verdict: ReversibilityVerdict; detail?: string }>;

const DETAIL_LIMIT = 4000;
/** Verdicts from a down that ran and left the schema wrong: a later failure must not hide them. */
const KEEP_ON_REAPPLY: ReadonlySet<ReversibilityVerdict> = new Set(['not-restored', 'down-failed']);
/** Verdicts that already fail a migration: what goes wrong after them is added to their detail. */
const FAILED: ReadonlySet<ReversibilityVerdict> = new Set([...KEEP_ON_REAPPLY, 'missing-down', 'reapply-failed']);

export async function proveReversibility(input: ReversibilityInput): Promise<ReversibilityResult> {
  // The steps and the reads each keep one connection to the throwaway branch: a new backend for
  // every one of them (cold catalog caches) cost as much as the work itself.
  const schemas = input.schemas.open?.();
  const kept: string[] = [];
  const release = async (): Promise<void> => {
    const urls = kept.splice(0);
    await Promise.all([schemas?.release(), ...urls.map((u) => input.runner.release?.(u))]);
  };
  // The kept connection is opened (and its catalog caches filled) while the role is made: a cheap read.
  void schemas?.relations(input.url).catch(() => undefined);
  try {
    return await prove({
      ...input,
      schemas: schemas ?? input.schemas,
      runner: {
        apply: (options: ApplyOptions) => {
          if (!kept.includes(options.databaseUrl)) kept.push(options.databaseUrl);
          return input.runner.apply(options, { keep: true, first: true });
        },
      },
      // Nothing of ours may hold the branch while it is put back.
      ...(input.reset ? { reset: () => release().then(input.reset) } : {}),
    });
  } finally {
    await release();
  }
}

async function prove(input: ReversibilityInput): Promise<ReversibilityResult> {
  const snapshot = () => input.schemas.snapshot(input.url, { ignoreTables: bookkeepingTables(input.placement) });
  const verdicts: Verdicts = new Map();
  const where = input.applied ? 'the branch' : 'the throwaway branch';
  const as = async (): Promise<{ confined: string; migrate: string }> => {
    const confined = input.runAs ? await input.runAs() : input.url;
    return { confined, migrate: input.asAdmin ? input.url : confined };
  };
  // Read after the role took the branch's objects (ownership is not in a snapshot; grants are, so
  // the baseline's snapshot stands for this branch only when no role of its own was made).
  let role = await as();
  const all = input.migrations;
  // The first ups as the caller made them, until a step of the proof changes the branch.
  let firstPass = input.applied;
  if (firstPass && firstPass.length !== all.length + 1)
    throw new Error(`applied: ${firstPass.length} schemas for ${all.length} migrations`);
  const before = firstPass
    ? firstPass[0]!
    : input.before !== undefined && role.confined === input.url
      ? input.before
      : await snapshot();
  // A migration that says it cannot be taken down (declared irreversible, or no down at all) is
  // never taken down: it splits the others into runs, each proven on the state the migrations
  // before it leave (the barrier applied without a check, only when a run follows it). So nothing
  // older waits for a fresh copy because a newer one cannot go down.
  const runs: { start: number; end: number }[] = [];
  all.forEach((m, i) => {
    if (m.hasDown === 'irreversible')
      verdicts.set(m.name, {
        verdict: 'irreversible',
        detail:
          'declared irreversible (down = false): not taken down; the migrations before it were checked without it',
      });
    else if (m.hasDown === false)
      verdicts.set(m.name, {
        verdict: 'missing-down',
        // A SQL file without a down section: node-pg-migrate loads it as `down = false` and refuses to
        // roll it back, but nothing says that was meant (a forgotten down reads the same), so it is
        // asked for here as the JS way is: a down, or the declaration.
        detail:
          m.kind === 'sql'
            ? m.downSqlLineOffset === undefined
              ? 'it has no `-- Down Migration` section, so node-pg-migrate refuses to roll it back; add one, or if that is intended declare it irreversible (`-- consort: irreversible`)'
              : 'its `-- Down Migration` section holds no statement; write the down, or if the migration cannot go down declare it irreversible (`-- consort: irreversible`)'
            : 'it cannot be rolled back; if that is intended, declare it irreversible (`exports.down = false`)',
      });
    else if (runs.length > 0 && runs[runs.length - 1]!.end === i) runs[runs.length - 1]!.end = i + 1;
    else runs.push({ start: i, end: i + 1 });
  });
  // The branch holds all[0..at) as first applied, and `current` is its schema
  // (undefined: a step left it in another state, so only a fresh copy can go on from there).
  let at = firstPass ? all.length : 0;
  let current: SchemaSnapshot | undefined = firstPass ? firstPass[all.length] : before;
  // On a branch that holds them all, the newest run goes first: its ups are the ones already made.
  if (firstPass) {
    const top = runs.findIndex((r) => r.end === all.length);
    if (top > 0) runs.unshift(...runs.splice(top, 1));
  }
  const reach = async (target: number): Promise<'ok' | 'no-reset' | { applyFailed: string }> => {
    if (at > target || current === undefined) {
      if (!input.reset) return 'no-reset';
      await input.reset();
      role = await as();
      at = 0;
      current = before;
      firstPass = undefined;
    }
    if (at < target) {
      const up = await step(input, role.migrate, 'up', target - at);
      if (!up.ok) {
        current = undefined; // it holds some of them: only a fresh copy goes on from here
        const which = up.failed.name ?? all[at]!.name;
        return { applyFailed: `applying ${which} on ${where} failed: ${up.failed.error.message}` };
      }
      at = target;
      current = await snapshot();
    }
    return 'ok';
  };
  // Each run in turn; what stopped the walk early (an up that failed) is the unchecked ones' reason.
  const walk = async (): Promise<string | undefined> => {
    while (runs.length > 0) {
      const run = runs.shift()!;
      const older = run.start < at; // a run the downs of a newer one did not reach, on a fresh copy
      // The newest run on a branch that holds them all: its first pass is the caller's ups.
      const given = firstPass && at === run.end && current !== undefined ? firstPass : undefined;
      if (!given) {
        const ready = await reach(run.start);
        if (ready === 'no-reset') {
          const why = older
            ? 'not reached: a newer migration in this PR cannot be taken down'
            : `not reached: an older migration in this PR left ${where} changed`;
          for (const r of [run, ...runs])
            for (const m of all.slice(r.start, r.end)) verdicts.set(m.name, { verdict: 'not-checked', detail: why });
          return undefined;
        }
        if (ready !== 'ok') return ready.applyFailed;
      }
      firstPass = undefined;
      const pass = await provePass(
        { ...input, runAs: role.migrate },
        all.slice(run.start, run.end),
        given ? given[run.start]! : current!,
        snapshot,
        verdicts,
        where,
        given?.slice(run.start, run.end + 1),
      );
      if (pass.applyFailed) {
        current = undefined;
        return pass.applyFailed;
      }
      at = run.end;
      current = pass.schema;
      // Older migrations than the one that stopped the downs get their own pass on a fresh copy.
      if (pass.stoppedAt > 0) runs.unshift({ start: run.start, end: run.start + pass.stoppedAt });
    }
    return undefined;
  };
  const stopped = await walk();
  // A branch that held them all holds them all again (the PR branch stays for the pull request).
  if (input.applied) {
    const back = await reach(all.length);
    if (typeof back === 'object') {
      // They applied once on this baseline and not a second time: not one to trust either.
      const m = all.find((x) => back.applyFailed.includes(x.name));
      const was = m && verdicts.get(m.name);
      const detail = `applying it again on a fresh copy of the baseline failed: ${back.applyFailed}`;
      if (m)
        verdicts.set(
          m.name,
          was && FAILED.has(was.verdict)
            ? { verdict: was.verdict, detail: `${was.detail ?? ''}\n${detail}` }
            : { verdict: 'reapply-failed', detail },
        );
    }
  }
  return finish(input, verdicts, before, stopped);
}

/** One migration request on the throwaway branch: `count` steps up, or one down. */
function step(
  input: Omit<ReversibilityInput, 'runAs'>,
  runAs: string,
  direction: 'up' | 'down',
  count = 1,
): Promise<ApplyResult> {
  input.cancelPoint?.();
  return input.runner.apply({
    databaseUrl: runAs,
    dir: input.headDir.dir,
    relativeTo: input.headDir.relativeTo,
    direction,
    count,
    ...input.placement,
    ...(input.checkOrder === undefined ? {} : { checkOrder: input.checkOrder }),
    ...(input.ignorePattern === undefined ? {} : { ignorePattern: input.ignorePattern }),
    ...(input.engine === undefined ? {} : { engine: input.engine }),
  });
}

/**
 * One pass over `migrations` (a run with downs, all pending on the throwaway branch): up one at a
 * time, down newest first until one cannot be taken down, up again. Returns the index the downs
 * stopped at (0 when all went down), and the schema the branch is left with when it is the one the
 * first ups gave (none when a step left it otherwise: what follows needs a fresh copy).
 */
async function provePass(
  input: Omit<ReversibilityInput, 'runAs'> & { runAs: string },
  migrations: readonly MigrationFile[],
  before: SchemaSnapshot,
  snapshot: () => Promise<SchemaSnapshot>,
  verdicts: Verdicts,
  where: string,
  /** The schema before the run and after each of its ups, when the branch holds them already. */
  applied?: readonly SchemaSnapshot[],
): Promise<{ stoppedAt: number; applyFailed?: string; schema?: SchemaSnapshot }> {
  const run = (direction: 'up' | 'down'): Promise<ApplyResult> => step(input, input.runAs, direction);
  const after: SchemaSnapshot[] = applied ? [...applied] : [before];
  if (!applied)
    for (const m of migrations) {
      const up = await run('up');
      if (!up.ok)
        return {
          stoppedAt: 0,
          applyFailed: `applying ${m.name} on ${where} failed: ${up.failed.error.message}`,
        };
      after.push(await snapshot());
    }
  // Down, newest first: each down must restore the schema as it was before that migration.
  let lowest = migrations.length;
  let stoppedAt = 0;
  let changed = false;
  const residue = new Set<string>();
  for (let i = migrations.length - 1; i >= 0; i--) {
    const m = migrations[i]!;
    const stop = (verdict: ReversibilityVerdict, detail: string): void => {
      verdicts.set(m.name, { verdict, detail });
      stoppedAt = i;
    };
    const down = await run('down');
    if (!down.ok) {
      const note = downTransactionBlockNote(down.failed.error.code, m);
      stop(
        down.failed.kind === 'down-unavailable' ? 'missing-down' : 'down-failed',
        down.failed.kind === 'script'
          ? thrownDownDetail(m, down.failed.error)
          : ((down.failed.kind === 'down-unavailable'
              ? uninferableDownDetail(m, down.failed.error.message)
              : undefined) ?? `${down.failed.error.message}${note ? ` (${note})` : ''}`),
      );
      // A down that ran and failed may have left part of its work (no transaction): no state to build on.
      changed ||= down.failed.kind !== 'down-unavailable';
      break;
    }
    lowest = i;
    const diff = diffSchemas(after[i]!, await snapshot());
    // What a newer migration's down left behind is still there; only what this down leaves is its own.
    const own = isEmptyDiff(diff)
      ? []
      : renderSchemaDiffText(diff)
          .split('\n')
          .filter((l) => !residue.has(l));
    verdicts.set(
      m.name,
      own.length === 0
        ? {
            verdict: 'reversible',
            ...(residue.size > 0 ? { detail: 'restores what it changed (a newer migration left the rest)' } : {}),
          }
        : {
            verdict: 'not-restored',
            // The diff, then why a down that "succeeded" left it: a DROP … IF EXISTS of nothing.
            detail: [
              `after down, the schema differs from before up:\n${own.join('\n').slice(0, DETAIL_LIMIT)}`,
              ...noopDrops(
                down.applied.flatMap((a) => a.sql),
                after[i + 1]!,
              ),
              // node-pg-migrate's template for a JavaScript migration leaves `exports.down = (pgm) => {}`.
              ...(down.applied.every((a) => a.sql.length === 0)
                ? [
                    'its down ran no statement: write what undoes its up, or declare it irreversible (down = false) if nothing can',
                  ]
                : []),
            ].join('\n'),
          },
    );
    for (const l of own) residue.add(l);
  }
  // Up again from where the downs stopped, in one request (no read between these steps): the
  // result must equal the first pass. A failure names the migration that failed.
  if (lowest < migrations.length) {
    const up = await step(input, input.runAs, 'up', migrations.length - lowest);
    if (!up.ok) {
      const named = migrations.findIndex((m, i) => i >= lowest && m.name === up.failed.name);
      const m = migrations[named >= 0 ? named : Math.min(lowest + up.applied.length, migrations.length - 1)]!;
      // A down that left the schema wrong keeps its verdict and diff: re-applying on top of a
      // wrong schema failing is a consequence, not the finding.
      const was = verdicts.get(m.name);
      const failure = `up after down failed: ${up.failed.error.message}`;
      verdicts.set(
        m.name,
        was && KEEP_ON_REAPPLY.has(was.verdict)
          ? { verdict: was.verdict, detail: `${was.detail ?? ''}\n${failure}` }
          : { verdict: 'reapply-failed', detail: failure },
      );
      return { stoppedAt };
    }
  }
  // Nothing went down (the newest cannot): the schema is the one already read after the last up.
  if (lowest === migrations.length) return changed ? { stoppedAt } : { stoppedAt, schema: after[migrations.length]! };
  const final = diffSchemas(after[migrations.length]!, await snapshot());
  if (isEmptyDiff(final)) return { stoppedAt, schema: after[migrations.length]! };
  // Blame the newest migration that otherwise looked fine; a not-restored one already explains it.
  const suspect = [...migrations].reverse().find((m) => verdicts.get(m.name)?.verdict === 'reversible');
  if (suspect)
    verdicts.set(suspect.name, {
      verdict: 'reapply-failed',
      detail: `up → down → up does not give the same schema:\n${renderSchemaDiffText(final).slice(0, DETAIL_LIMIT)}`,
    });
  return { stoppedAt };
}

function finish(
  input: ReversibilityInput,
  verdicts: Verdicts,
  before: SchemaSnapshot,
  notCheckedReason = 'not reached: a newer migration in this PR cannot be taken down',
): ReversibilityResult {
  return {
    before,
    migrations: input.migrations.map((m) => ({
      name: m.name,
      file: m.file,
      ...(verdicts.get(m.name) ?? { verdict: 'not-checked' as const, detail: notCheckedReason }),
    })),
  };
}
