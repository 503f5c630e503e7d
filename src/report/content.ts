/**
 * What the report says, shared by the markdown and terminal renderers so a PR comment and a local
 * run word the same problem the same way. Sentences are phrases: Consort's own words plus `{ code }`
 * and `{ text }` parts for untrusted input, which each renderer formats (and escapes) its own way.
 */
import {
  STAGE_ORDER,
  STAGE_TITLES,
  type CheckReport,
  type PlanProblem,
  type ReversibilityVerdict,
  type StageName,
  type Stages,
} from './check-report.js';
import { collateNames } from '../migrations/files.js';

/** A plain string is Consort's own wording; `code` and `text` carry untrusted input (names, prose). */
export type Part = string | { code: string } | { text: string };
export type Phrase = Part[];
export type StageOutcome = 'passed' | 'failed' | 'warned' | 'skipped' | 'error';
type Stage = Stages[StageName];
type Suite = Stages['suite'];
type MigrationFailure = NonNullable<Stages['migrations']['failure']>;

export const plural = (n: number, one: string, many = `${one}s`): string => `${count(n)} ${n === 1 ? one : many}`;

/**
 * The lint section's heading, counted as the lint stage's summary counts: findings, then the
 * notes (findings that do not apply here) apart, then how many block.
 */
export function lintHeading(findings: readonly { blocking: boolean; note?: string }[]): string {
  const notes = findings.filter((f) => f.note !== undefined).length;
  const blocking = findings.filter((f) => f.blocking).length;
  return `Lint: ${plural(findings.length - notes, 'finding')}${notes > 0 ? ` and ${plural(notes, 'note')}` : ''}, ${count(blocking)} blocking`;
}
export const count = (n: number): string => n.toLocaleString('en-US');

export const shortSha = (sha: string | null): string | null => (sha === null ? null : sha.slice(0, 7));

/** A failed stage that does not block the merge is a warning, not a failure. */
export function outcome(stage: Stage): StageOutcome {
  if (stage.status === 'failed') return stage.blocking ? 'failed' : 'warned';
  return stage.status;
}

export const OUTCOME_LABEL: Record<StageOutcome, string> = {
  passed: 'passed',
  failed: 'failed',
  warned: 'failed (non-blocking)',
  skipped: 'skipped',
  error: 'error',
};

export function stagesWith(report: CheckReport, wanted: StageOutcome): string[] {
  return STAGE_ORDER.filter((n) => outcome(report.stages[n]) === wanted).map((n) => STAGE_TITLES[n]);
}

/**
 * The one-line verdict after the title: "database checks failed — 2 failing stages". It counts stages,
 * and says so: a stage with two problems is one failing stage, not "1 blocking problem".
 */
export function verdict(report: CheckReport): string {
  const failed = stagesWith(report, 'failed').length;
  const warned = stagesWith(report, 'warned').length;
  if (report.conclusion === 'error') return 'database checks could not run';
  if (report.conclusion === 'cancelled')
    return `database checks cancelled${report.cancelled ? ` (${report.cancelled.reason})` : ''}`;
  if (report.conclusion === 'failure') {
    return failed === 0 ? 'database checks failed' : `database checks failed — ${plural(failed, 'failing stage')}`;
  }
  return warned === 0 ? 'database checks passed' : `database checks passed with ${plural(warned, 'warning')}`;
}

/** The `git mv` that fixes a problem, when a rename does (plain `mv` for a file git does not track yet). */
export function renameCommand(
  p: PlanProblem,
  quote: (w: string) => string,
  untracked?: ReadonlySet<string>,
): string | null {
  if (p.kind !== 'order-conflict' && p.kind !== 'duplicate-prefix') return null;
  return `${untracked?.has(p.file) ? 'mv' : 'git mv'} ${quote(p.file)} ${quote(p.suggestedFile)}`;
}

const LISTED = 10;

function codeList(names: string[]): Phrase {
  const shown = names.slice(0, LISTED).flatMap((n, i): Phrase => (i === 0 ? [{ code: n }] : [', ', { code: n }]));
  return names.length > LISTED ? [...shown, ` and ${count(names.length - LISTED)} more`] : shown;
}

/** Whether node-pg-migrate's name comparison orders a duplicate prefix (a warning) or not (a problem). */
function duplicateOrdered(p: Extract<PlanProblem, { kind: 'duplicate-prefix' }>): boolean {
  return collateNames(p.conflictsWith, p.name) !== 0;
}

import { planWarningReason } from '../migrations/plan.js';
export { planWarningReason };

/** The plan stage's summary tail for its warnings: `; 1 out of order (allowed: …); 2 duplicate prefixes (…)`. */
export function planWarningsNote(warnings: readonly PlanProblem[]): string {
  const outOfOrder = warnings.filter((w) => w.kind === 'order-conflict').length;
  const duplicates = warnings.filter((w) => w.kind === 'duplicate-prefix').length;
  const deploy = warnings.filter((w) => w.kind === 'deploy-setting').length;
  const importedOrRead = warnings.filter((w) => w.kind === 'imported-code-changed');
  const imported = importedOrRead.length;
  const verb = importedOrRead.every((w) => w.read)
    ? 'read'
    : importedOrRead.some((w) => w.read)
      ? 'import or read'
      : 'import';
  const unchecked = warnings.filter((w) => w.kind === 'unchecked-migrations-dir').length;
  return [
    outOfOrder > 0 ? `; ${outOfOrder} out of order (allowed: migrations.checkOrder is false)` : '',
    duplicates > 0
      ? `; ${plural(duplicates, 'duplicate prefix', 'duplicate prefixes')} (node-pg-migrate orders them by name)`
      : '',
    deploy > 0 ? `; ${plural(deploy, 'deploy setting')} the check did not apply with` : '',
    imported > 0 ? `; ${plural(imported, 'file')} base's migrations ${verb} changed` : '',
    unchecked > 0 ? `; ${plural(unchecked, 'migration')} in another folder not checked` : '',
  ].join('');
}

/** A plan warning's heading: what it is, and why it does not fail the plan. */
export function planWarningLabel(p: PlanProblem, allowed: 'allowed' | 'warning'): string {
  if (p.kind === 'deploy-setting' || p.kind === 'imported-code-changed' || p.kind === 'unchecked-migrations-dir')
    return p.kind === 'imported-code-changed' && p.read ? 'Read file changed' : PROBLEM_TITLE[p.kind];
  return `${PROBLEM_TITLE[p.kind]} (${allowed}: ${planWarningReason(p)})`;
}

/** The migrations importing a file, for a sentence: `a.ts`, `a.ts and b.ts`, `a.ts, b.ts and 3 more`. */
export function importedByWords(files: readonly string[]): string {
  if (files.length <= 2) return files.join(' and ');
  return `${files.slice(0, 2).join(', ')} and ${files.length - 2} more`;
}

export const PROBLEM_TITLE: Record<PlanProblem['kind'], string> = {
  'order-conflict': 'Order conflict',
  'history-rewritten': 'History rewritten',
  'duplicate-prefix': 'Duplicate prefix',
  'invalid-name': 'Invalid name',
  'deploy-setting': 'Deploy setting differs',
  'outside-migrations-dir': 'Outside the migrations folder',
  'unchecked-migrations-dir': 'Not checked: another migrations folder',
  'imported-code-changed': 'Imported code changed',
  'parent-ahead': 'Parent ahead',
};

/**
 * Who reads a report: someone who ran `consort check`, a workflow's Consort step (the Action), or
 * a pull request the App checks. Advice names what that reader can do, and only that.
 */
export type Reader = 'cli' | 'action' | 'app';

/** What builds the baseline from base alone, for each reader (the App has nothing that does). */
const REBUILD_BASELINE: Record<Reader, Phrase> = {
  cli: ['run ', { code: 'consort check --rebuild-baseline' }, ', which builds the baseline from base alone.'],
  action: [
    'set ',
    { code: 'rebuild-baseline: true' },
    " on the workflow's Consort step, which builds the baseline from base alone (as long as it is set).",
  ],
  app: [
    'commit them to the base branch as migrations, or undo them on the parent database: the App always builds the baseline on the parent (',
    { code: 'consort check --rebuild-baseline' },
    " and the Action's ",
    { code: 'rebuild-baseline' },
    ' input build it from base alone).',
  ],
};

export function problemPhrase(p: PlanProblem, reader: Reader = 'cli'): Phrase {
  switch (p.kind) {
    case 'order-conflict':
      return [
        { code: p.file },
        ' sorts before ',
        { code: p.newestOnBase },
        ', the newest migration on the base branch, so it would run out of order once both are merged. Rename it to ',
        { code: p.suggestedFile },
        '.',
      ];
    case 'history-rewritten':
      return p.change === 'edited'
        ? [
            { code: p.file },
            ' already ran on the base branch and was edited in this PR. Databases that ran it will not get the change: restore it and put the change in a new migration.',
          ]
        : [
            { code: p.file },
            ' already ran on the base branch and was deleted in this PR. Restore it, and undo its effect in a new migration if needed.',
          ];
    case 'duplicate-prefix':
      return [
        { code: p.file },
        ' has the same order value as ',
        { code: p.conflictsWith },
        duplicateOrdered(p)
          ? ', so node-pg-migrate orders them by the rest of the name. Rename it to '
          : ', and node-pg-migrate cannot tell the names apart, so their order is whatever the directory listing gives. Rename it to ',
        { code: p.suggestedFile },
        ' to make the order plain.',
      ];
    case 'invalid-name':
      return ['node-pg-migrate cannot load ', { code: p.file }, ': ', { text: p.reason }, '.'];
    case 'imported-code-changed': {
      const one = p.importedBy.length === 1;
      if (p.read)
        return [
          ...p.importedBy.slice(0, 2).flatMap((f, i): Phrase => [i > 0 ? ' and ' : '', { code: f }]),
          p.importedBy.length > 2 ? ` and ${p.importedBy.length - 2} more` : '',
          one ? ', a migration of the base branch, reads ' : ', migrations of the base branch, read ',
          { code: p.file },
          p.change === 'edited'
            ? `, which this PR edits: databases that already ran ${one ? 'it' : 'them'} will not get the change, while a database migrated from scratch with this PR will (the check built its baseline from the base branch's file). Restore the file and put the change in a new migration.`
            : `, which this PR deletes: a database migrated from scratch with this PR cannot run ${one ? 'it' : 'them'}. Restore the file, and undo its effect in a new migration if needed.`,
        ];
      return [
        ...p.importedBy.slice(0, 2).flatMap((f, i): Phrase => [i > 0 ? ' and ' : '', { code: f }]),
        p.importedBy.length > 2 ? ` and ${p.importedBy.length - 2} more` : '',
        one ? ', a migration of the base branch, imports ' : ', migrations of the base branch, import ',
        { code: p.file },
        p.change === 'edited' ? ', which this PR edits' : ', which this PR deletes',
        `: a database migrated from scratch with this PR runs ${one ? 'it' : 'them'} with the new code, while databases that already ran ${one ? 'it' : 'them'} keep what the old code made (the check built its baseline from the base branch's code). Check ${one ? 'it still makes' : 'they still make'} the same schema, or write the values ${one ? 'it needs' : 'they need'} into the migration${one ? '' : 's'} themselves.`,
      ];
    }
    case 'outside-migrations-dir':
      return [
        { code: p.file },
        p.change === 'added' ? ' is new in ' : ' was edited in ',
        { code: p.baseDir },
        ', the folder the base branch applies migrations from, but this change points ',
        { code: 'migrations.dir' },
        ' at ',
        { code: p.dir },
        ', so the check never ran it. Move it into ',
        { code: p.dir },
        ', or keep ',
        { code: 'migrations.dir' },
        ' as it was.',
      ];
    case 'unchecked-migrations-dir':
      return [
        { code: p.file },
        p.change === 'added' ? ' is new in ' : p.change === 'edited' ? ' was edited in ' : ' was deleted from ',
        { code: p.dir },
        ', which ',
        { code: p.manifest },
        "'s script ",
        { code: p.script },
        ' runs node-pg-migrate on, but the check applies ',
        { code: p.migrationsDir },
        ' (',
        { code: 'migrations.dir' },
        p.change === 'deleted'
          ? ') alone: databases that ran it keep what it made. Restore it, and undo its effect in a new migration if needed; check that folder too with a second configuration whose '
          : ') alone and never ran it. Review it by hand, or check that folder too with a second configuration whose ',
        { code: 'migrations.dir' },
        ' is ',
        { code: p.dir },
        ' (',
        { code: 'consort check --config' },
        ').',
      ];
    case 'deploy-setting':
      return [
        { code: p.manifest },
        "'s script ",
        { code: p.script },
        ...(p.via === undefined ? [] : [' (through ', { code: p.via }, ')']),
        // The repository's words (a configuration file's value and name): text, escaped where it is shown.
        ...(p.how.startsWith('-')
          ? [' runs node-pg-migrate with ', { code: p.how }]
          : [
              p.file === p.manifest ? ' runs node-pg-migrate with ' : ' runs node-pg-migrate reading ',
              { text: p.how },
            ]),
        ...(p.configured === null
          ? [', which the check has no setting for: it applies the migrations without it.']
          : [
              ', but the check applies the migrations with ',
              { code: `${p.setting}: ${p.configured}` },
              '. Set ',
              { code: `${p.setting}: ${p.deploy}` },
              ' in ',
              { code: p.configFile },
              ' so the check applies them as the deploy does.',
            ]),
      ];
    case 'parent-ahead':
      return [
        "The parent database has migrations this PR's base does not: ",
        ...codeList(p.migrations),
        '. If base has gained them since this PR branched, merge the base branch into this PR; if they were applied to the parent by hand and are on no branch, ',
        ...REBUILD_BASELINE[reader],
      ];
  }
}

export const REVERSIBILITY_LABEL: Record<ReversibilityVerdict, string> = {
  reversible: 'reversible',
  irreversible: 'irreversible (marked so)',
  'missing-down': 'no down migration',
  'not-restored': 'down did not restore the schema',
  'down-failed': 'down migration failed',
  'reapply-failed': 'up failed after down',
  'not-checked': 'not checked',
};

/** Verdicts worth a reviewer's attention; `not-checked` is said in the stage summary instead. */
export function irreversible(report: CheckReport): Stages['reversibility']['migrations'] {
  return report.stages.reversibility.migrations.filter(
    (m) => m.verdict !== 'reversible' && m.verdict !== 'not-checked',
  );
}

/**
 * Whether a listed verdict fails the stage. A migration declared irreversible is reported, not
 * failed, unless the base's configuration requires downs, which the stage's summary then says
 * (reversibilityOutcome writes `(reversibility.requireDown: true)` only then).
 */
export function failsReversibility(report: CheckReport, m: Stages['reversibility']['migrations'][number]): boolean {
  if (m.verdict !== 'irreversible') return true;
  const stage = report.stages.reversibility;
  return stage.status === 'failed' && stage.summary.includes('reversibility.requireDown: true');
}

/** Blocking findings first, so a capped list still shows what blocks the merge. */
export function orderedFindings(report: CheckReport): Stages['lint']['findings'] {
  const f = report.stages.lint.findings;
  return [...f.filter((x) => x.blocking), ...f.filter((x) => !x.blocking)];
}

export const location = (file: string, line?: number, column?: number): string =>
  `${file}${line === undefined ? '' : `:${line}`}${line === undefined || column === undefined ? '' : `:${column}`}`;

export function migrationFailurePhrase(f: MigrationFailure): Phrase {
  return [{ code: f.name }, ' failed at ', { code: location(f.file, f.line) }, ':'];
}

/**
 * Under a migration refused a privilege (42501) while it ran as the branch's confined role: the
 * opt-out, and that it counts only from the base (the stage's summary says it too, but a PR
 * comment's table cell shortens it).
 */
export function confinedRolePhrase(m: Stages['migrations']): Phrase | null {
  if (m.failure?.code !== '42501' || m.ranAs !== 'branch') return null;
  return [
    'It ran as a role confined to the branch database (no superuser, no other database, no roles). A migration that needs more runs as the admin only with ',
    { code: 'check.migrationsRole: admin' },
    " in the Consort configuration of the base branch, which must land on the base first: the pull request's own setting is ignored.",
  ];
}

/** As psql shows it: the error, then Postgres' DETAIL and HINT on lines of their own. */
export const postgresError = (f: MigrationFailure): string =>
  [
    `ERROR${f.code === undefined ? '' : ` ${f.code}`}: ${f.message}`,
    ...(f.detail === undefined ? [] : [`DETAIL: ${f.detail}`]),
    ...(f.hint === undefined ? [] : [`HINT: ${f.hint}`]),
  ].join('\n');

/** How the suite's command ended, with its counts: `timed out.`, `exited with code 1: 2 failed, … of 120 tests.` */
export function suiteEnding(suite: Suite): string {
  const ended = suite.timedOut
    ? 'timed out'
    : suite.exitCode === null
      ? 'did not finish'
      : `exited with code ${suite.exitCode}`;
  const t = suite.tests;
  if (t === null) return `${ended}.`;
  const parts = [
    t.failed > 0 ? `${count(t.failed)} failed` : '',
    t.errored > 0 ? `${count(t.errored)} errored` : '',
    `${count(t.passed)} passed`,
    t.skipped > 0 ? `${count(t.skipped)} skipped` : '',
  ].filter((s) => s !== '');
  return `${ended}: ${parts.join(', ')} of ${plural(t.total, 'test')}.`;
}

export function suitePhrase(suite: Suite): Phrase {
  return [{ code: suite.command }, ` ${suiteEnding(suite)}`];
}

/** A failed test is named by its id; its name and file are added only where the id does not already say them. */
export function failureNotes(f: Suite['failures'][number]): string[] {
  const notes: string[] = [f.state];
  if (!f.id.includes(f.name)) notes.push(f.name);
  if (f.file !== undefined && !f.id.includes(f.file)) notes.push(f.file);
  return notes;
}

export function schemaTotals(counts: Stages['schemaDiff']['counts']): {
  added: number;
  removed: number;
  changed: number;
} {
  const sum = (f: 'added' | 'removed' | 'changed'): number => counts.reduce((n, c) => n + c[f], 0);
  return { added: sum('added'), removed: sum('removed'), changed: sum('changed') };
}

/** The schema diff needs a section when something changed, or when the stage itself failed. */
export function showSchemaDiff(report: CheckReport): boolean {
  const d = report.stages.schemaDiff;
  const t = schemaTotals(d.counts);
  return t.added + t.removed + t.changed > 0 || d.status === 'failed' || d.status === 'error';
}

export function showSuite(report: CheckReport): boolean {
  const s = report.stages.suite;
  return s.status === 'failed' || s.status === 'error' || s.failures.length > 0;
}
