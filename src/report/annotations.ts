/**
 * The CheckReport as file annotations: lint findings on their lines, the failed statement of a
 * migration, plan problems and irreversible migrations on their files. Pure data, so the Action
 * (workflow commands) and the App (check-run annotations) show the same ones.
 * Red (`error`) means "blocks the merge"; everything else is a warning.
 */
import type { CheckReport, PlanProblem } from './check-report.js';
import { collateNames } from '../migrations/files.js';
import { importedByWords, planWarningReason, postgresError } from './content.js';

export interface Annotation {
  level: 'error' | 'warning';
  /** Relative to the repository root, as the report records it. */
  file: string;
  line?: number;
  column?: number;
  title: string;
  message: string;
}

/** GitHub shows at most 50 annotations per step (10 of each level inline); more are noise. */
export const MAX_ANNOTATIONS = 50;

function planMessage(p: Exclude<PlanProblem, { kind: 'parent-ahead' }>): string {
  switch (p.kind) {
    case 'order-conflict':
      return `Sorts before ${p.newestOnBase}, the newest migration on the base branch, so it would never run where that one already has. Rename it to ${p.suggestedFile}.`;
    case 'history-rewritten':
      return `This migration exists on the base branch and was ${p.change} here; databases that already ran it will not see the change. Add a new migration instead.`;
    case 'duplicate-prefix':
      return `Shares its order prefix with ${p.conflictsWith}; node-pg-migrate orders them by the rest of the name${collateNames(p.conflictsWith, p.name) === 0 ? ', which cannot tell them apart' : ''}. Rename it to ${p.suggestedFile}.`;
    case 'invalid-name':
      return `node-pg-migrate cannot load it: ${p.reason}.`;
    case 'deploy-setting':
      return p.configured === null
        ? `The script "${p.script}"${p.via === undefined ? '' : ` (through ${p.via})`} runs node-pg-migrate with ${p.how}, which the check has no setting for: it applies the migrations without it.`
        : `The script "${p.script}"${p.via === undefined ? '' : ` (through ${p.via})`} runs node-pg-migrate ${p.file === p.manifest || p.file === p.via ? 'with' : 'reading'} ${p.how}, but the check applies the migrations with ${p.setting}: ${p.configured}. Set ${p.setting}: ${p.deploy} in ${p.configFile} so the check applies them as the deploy does.`;
    case 'imported-code-changed':
      if (p.read)
        return p.change === 'edited'
          ? `${importedByWords(p.importedBy)} read this file, which this change edits: databases that already ran ${p.importedBy.length === 1 ? 'it' : 'them'} will not get the change, while a database migrated from scratch will. Restore the file and put the change in a new migration.`
          : `${importedByWords(p.importedBy)} read this file, which this change deletes: a database migrated from scratch cannot run ${p.importedBy.length === 1 ? 'it' : 'them'}. Restore the file, and undo its effect in a new migration if needed.`;
      return `${importedByWords(p.importedBy)} import this file, which this change ${p.change === 'edited' ? 'edits' : 'deletes'}: a database migrated from scratch with this change runs ${p.importedBy.length === 1 ? 'it' : 'them'} with the new code, while databases that already ran ${p.importedBy.length === 1 ? 'it' : 'them'} keep what the old code made. Check ${p.importedBy.length === 1 ? 'it still makes' : 'they still make'} the same schema, or write the values ${p.importedBy.length === 1 ? 'it needs' : 'they need'} into the migration${p.importedBy.length === 1 ? '' : 's'} themselves.`;
    case 'outside-migrations-dir':
      return `This change points migrations.dir at ${p.dir} but ${p.change} this migration in ${p.baseDir}, the folder the base branch applies migrations from; the check reads ${p.dir} and never ran it. Move it into ${p.dir}, or keep migrations.dir as it was.`;
    case 'unchecked-migrations-dir':
      return p.change === 'deleted'
        ? `The script "${p.script}" of ${p.manifest} runs node-pg-migrate on ${p.dir}, from which this change deleted this migration; databases that ran it keep what it made, and the check applies ${p.migrationsDir} (migrations.dir) alone. Restore it, and undo its effect in a new migration if needed.`
        : `The script "${p.script}" of ${p.manifest} runs node-pg-migrate on ${p.dir}, where this change ${p.change} this migration; the check applies ${p.migrationsDir} (migrations.dir) alone and never ran it. Review it by hand, or check that folder in a second run (consort check --config with migrations.dir: ${p.dir}).`;
  }
}

export function checkAnnotations(report: CheckReport, max: number = MAX_ANNOTATIONS): Annotation[] {
  const { plan, migrations, lint, reversibility } = report.stages;
  const out: Annotation[] = [];
  for (const p of plan.problems) {
    if (p.kind !== 'parent-ahead')
      out.push({
        level: plan.blocking ? 'error' : 'warning',
        file: p.file,
        title: `Consort: ${p.kind}`,
        message: planMessage(p),
      });
  }
  for (const p of plan.warnings ?? []) {
    if (p.kind !== 'parent-ahead')
      out.push({
        level: 'warning',
        file: p.file,
        title: `Consort: ${p.kind} (${planWarningReason(p)})`,
        message: planMessage(p),
      });
  }
  const failure = migrations.failure;
  if (failure?.file) {
    out.push({
      level: migrations.blocking ? 'error' : 'warning',
      file: failure.file,
      ...(failure.line ? { line: failure.line } : {}),
      title: 'Consort: migration failed',
      message: postgresError(failure),
    });
  }
  for (const f of lint.findings) {
    out.push({
      level: f.blocking ? 'error' : 'warning',
      file: f.file,
      line: f.line,
      ...(f.column ? { column: f.column } : {}),
      title: `squawk: ${f.rule}${f.note === undefined ? '' : ' (note)'}`,
      message: [...(f.note === undefined ? [] : [`Note: ${f.note}.`]), f.message, ...(f.help ? [f.help] : [])].join(
        '\n',
      ),
    });
  }
  for (const m of reversibility.migrations) {
    if (m.verdict === 'reversible' || m.verdict === 'irreversible' || m.verdict === 'not-checked') continue;
    out.push({
      level: reversibility.blocking && reversibility.status === 'failed' ? 'error' : 'warning',
      file: m.file,
      title: `Consort: not reversible (${m.verdict})`,
      message: m.detail ?? `Down did not bring the schema back (${m.verdict}).`,
    });
  }
  return out.slice(0, max);
}
