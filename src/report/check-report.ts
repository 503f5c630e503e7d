/**
 * The CheckReport: one JSON document with every stage of the PR lane, its outcome and timing.
 * It is the contract between the lane and everything that shows it (PR comment, job summary,
 * check-run annotations, terminal, dashboards), so it is versioned and validated with zod.
 * Documented in docs/check-report.md; bump `schemaVersion` on any incompatible change.
 */
import { z } from 'zod';

export const CHECK_REPORT_VERSION = 1;

export const StageStatus = z.enum(['passed', 'failed', 'skipped', 'error']);
export type StageStatus = z.infer<typeof StageStatus>;

const Stage = z.object({
  status: StageStatus,
  /** Whether a failure of this stage fails the check (config `check.blocking`). */
  blocking: z.boolean(),
  durationMs: z.number().nonnegative(),
  /** One line for humans: what happened, or why the stage did not run. */
  summary: z.string(),
});

const PlanProblem = z.discriminatedUnion('kind', [
  /** A new migration sorts before the newest one on base; `suggestedFile` is the rename that fixes it. */
  z.object({
    kind: z.literal('order-conflict'),
    file: z.string(),
    name: z.string(),
    newestOnBase: z.string(),
    suggestedName: z.string(),
    suggestedFile: z.string(),
  }),
  /** A migration that exists on base was edited or deleted on head. */
  z.object({
    kind: z.literal('history-rewritten'),
    file: z.string(),
    name: z.string(),
    change: z.enum(['edited', 'deleted']),
  }),
  /** Two migrations share an order value. */
  z.object({
    kind: z.literal('duplicate-prefix'),
    file: z.string(),
    name: z.string(),
    conflictsWith: z.string(),
    suggestedName: z.string(),
    suggestedFile: z.string(),
  }),
  /** node-pg-migrate cannot load the file (no numeric prefix, not a migration type…). */
  z.object({ kind: z.literal('invalid-name'), file: z.string(), name: z.string(), reason: z.string() }),
  /** A warning: the project's scripts run node-pg-migrate on migrations.dir with a setting the check did not apply with. */
  z.object({
    kind: z.literal('deploy-setting'),
    file: z.string(),
    manifest: z.string(),
    script: z.string(),
    /** The shell script file the script runs node-pg-migrate in (`utils/migrate.sh`); absent: the script itself. */
    via: z.string().optional(),
    setting: z.string(),
    deploy: z.string(),
    configured: z.string().nullable(),
    how: z.string(),
    configFile: z.string(),
  }),
  /** A warning: a file of the project that base's migrations import was edited or deleted by the change. */
  z.object({
    kind: z.literal('imported-code-changed'),
    file: z.string(),
    change: z.enum(['edited', 'deleted']),
    importedBy: z.array(z.string()),
    /** The migrations read it (SQL they run, by a path from their folder) and import it nowhere. */
    read: z.literal(true).optional(),
  }),
  /** Added or edited in the base's migrations folder while the change's migrations.dir names another. */
  z.object({
    kind: z.literal('outside-migrations-dir'),
    file: z.string(),
    name: z.string(),
    dir: z.string(),
    baseDir: z.string(),
    change: z.enum(['added', 'edited']),
  }),
  /** A warning: added or edited in another folder the project's scripts run node-pg-migrate on, which the check does not apply. */
  z.object({
    kind: z.literal('unchecked-migrations-dir'),
    file: z.string(),
    name: z.string(),
    dir: z.string(),
    migrationsDir: z.string(),
    manifest: z.string(),
    script: z.string(),
    change: z.enum(['added', 'edited', 'deleted']),
  }),
  /** The parent database has migrations applied that base does not know. */
  z.object({ kind: z.literal('parent-ahead'), migrations: z.array(z.string()) }),
]);
export type PlanProblem = z.infer<typeof PlanProblem>;

const LintFinding = z.object({
  rule: z.string(),
  level: z.enum(['error', 'warning']),
  message: z.string(),
  help: z.string().optional(),
  file: z.string(),
  line: z.number().int(),
  column: z.number().int().optional(),
  blocking: z.boolean(),
  /**
   * What the finding is about, read from squawk's span: the columns or constraints of one statement
   * that one rule was reported for (merged into this one finding), and, when several statements on one
   * line draw the same rule, the table or index that tells them apart. Also named at the end of `message`.
   */
  objects: z.array(z.object({ kind: z.enum(['column', 'constraint', 'index', 'table']), name: z.string() })).optional(),
  /** Why this finding does not apply here (a table this PR creates, advice Postgres cannot follow): never blocking. */
  note: z.string().optional(),
});

export const ReversibilityVerdict = z.enum([
  'reversible',
  'irreversible',
  'missing-down',
  'not-restored',
  'down-failed',
  'reapply-failed',
  'not-checked',
]);
export type ReversibilityVerdict = z.infer<typeof ReversibilityVerdict>;

const TestFailure = z.object({
  id: z.string(),
  name: z.string(),
  state: z.enum(['failed', 'errored']),
  message: z.string().optional(),
  file: z.string().optional(),
});

/** A migration that failed: `code` is the SQLSTATE, `line` the line in the migration file. */
const MigrationFailure = z.object({
  name: z.string(),
  file: z.string(),
  statement: z.string(),
  message: z.string(),
  code: z.string().optional(),
  /** Postgres' DETAIL and HINT for the failing statement (the duplicated key, "New enum values must be committed…"). */
  detail: z.string().optional(),
  hint: z.string().optional(),
  line: z.number().int().optional(),
  /** Consort's own note on what the error means here and what to write (the summary's parenthesis, whole). */
  note: z.string().optional(),
});

export const CheckReport = z.object({
  schemaVersion: z.literal(CHECK_REPORT_VERSION),
  tool: z.object({ name: z.literal('consort'), version: z.string() }),
  /**
   * success: every blocking stage passed; failure: a blocking stage failed; error: the lane could not
   * run; cancelled: the run was stopped (a signal, or a newer run of the same pull request) before its verdict.
   */
  conclusion: z.enum(['success', 'failure', 'error', 'cancelled']),
  startedAt: z.string(),
  durationMs: z.number().nonnegative(),
  provider: z.string(),
  branchMode: z.string().nullable(),
  base: z.object({ ref: z.string(), sha: z.string().nullable() }),
  head: z.object({ ref: z.string(), sha: z.string().nullable() }),
  pr: z.number().int().nullable(),
  /** The PR's database branch (kept for inspection unless --cleanup). */
  branch: z.string().nullable(),
  configSource: z.string().nullable(),
  /** Set when conclusion is `error`: what went wrong and what to do. */
  error: z.object({ message: z.string(), hint: z.string().optional() }).optional(),
  /** Set when conclusion is `cancelled`: why (`SIGINT`, `superseded by a newer run of pr-12`). */
  cancelled: z.object({ reason: z.string() }).optional(),
  stages: z.object({
    plan: Stage.extend({
      newMigrations: z.array(z.string()),
      problems: z.array(PlanProblem),
      /** Order conflicts allowed by `migrations.checkOrder: false`, and duplicate prefixes node-pg-migrate orders by name: reported, not failing. */
      warnings: z.array(PlanProblem).optional(),
      /**
       * The change's own verdict settings that were not used because they differ from the base's
       * (`check.blocking`, `lint.*`, `reversibility.*`, `migrations.checkOrder`, `migrations.ignorePattern`, `migrations.table`/`schema`/`createSchema`/`migrationsSchema`/`createMigrationsSchema`/`decamelize`, `database.parent`, `suite.passEnv`):
       * which, and whose configuration judged the check instead.
       */
      ignoredSettings: z.string().optional(),
    }),
    baseline: Stage.extend({
      name: z.string().nullable(),
      reused: z.boolean(),
      applied: z.array(z.string()),
      seeded: z.boolean(),
      /** One of base's migrations failed on the parent: the whole error, its stack included (the summary has its first line). */
      failure: MigrationFailure.optional(),
    }),
    migrations: Stage.extend({
      applied: z.array(
        z.object({ name: z.string(), file: z.string(), durationMs: z.number(), statements: z.number().int() }),
      ),
      failure: MigrationFailure.optional(),
      /** The node-pg-migrate that applied them: the project's installed copy, or Consort's bundled one. */
      nodePgMigrate: z
        .object({
          version: z.string(),
          source: z.enum(['project', 'lockfile', 'bundled']),
          typescript: z
            .object({ name: z.string(), version: z.string(), source: z.enum(['engine', 'project', 'lockfile']) })
            .optional(),
          /** What resolved TypeScript path aliases, as the project's deploy does (its scripts register tsconfig-paths, or run node-pg-migrate 9 with --tsconfig-paths). */
          pathAliases: z
            .object({
              name: z.enum(['tsconfig-paths', 'jiti']),
              version: z.string(),
              source: z.enum(['engine', 'project', 'lockfile']),
              how: z.string(),
            })
            .optional(),
        })
        .optional(),
      /**
       * Who applied them: `branch`, the role confined to the branch database; `admin`, the
       * provider's admin (`check.migrationsRole: admin` on the base, or a provider without branch roles).
       */
      ranAs: z.enum(['branch', 'admin']).optional(),
    }),
    lint: Stage.extend({ findings: z.array(LintFinding), squawkVersion: z.string().nullable() }),
    reversibility: Stage.extend({
      migrations: z.array(
        z.object({ name: z.string(), file: z.string(), verdict: ReversibilityVerdict, detail: z.string().optional() }),
      ),
    }),
    schemaDiff: Stage.extend({
      text: z.string(),
      counts: z.array(z.object({ kind: z.string(), added: z.number(), removed: z.number(), changed: z.number() })),
    }),
    suite: Stage.extend({
      command: z.string(),
      exitCode: z.number().int().nullable(),
      timedOut: z.boolean(),
      tests: z
        .object({ passed: z.number(), failed: z.number(), errored: z.number(), skipped: z.number(), total: z.number() })
        .nullable(),
      failures: z.array(TestFailure),
      /** The last few KB of the suite's output (secrets redacted). */
      outputTail: z.string(),
    }),
  }),
});
export type CheckReport = z.infer<typeof CheckReport>;
export type Stages = CheckReport['stages'];
export type StageName = keyof Stages;
export const STAGE_ORDER: readonly StageName[] = [
  'plan',
  'baseline',
  'migrations',
  'lint',
  'reversibility',
  'schemaDiff',
  'suite',
];

export const STAGE_TITLES: Record<StageName, string> = {
  plan: 'Migration plan',
  baseline: 'Baseline',
  migrations: 'Apply migrations',
  lint: 'Lint',
  reversibility: 'Reversibility',
  schemaDiff: 'Schema diff',
  suite: 'Test suite',
};

/** The conclusion follows from the stages: any blocking stage failed → failure; errored → error. */
export function concludeStages(stages: Stages): CheckReport['conclusion'] {
  const all = STAGE_ORDER.map((n) => stages[n]);
  if (all.some((s) => s.status === 'error')) return 'error';
  return all.some((s) => s.blocking && s.status === 'failed') ? 'failure' : 'success';
}
