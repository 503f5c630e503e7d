/**
 * Lint the new migrations. SQL files are linted as written (their Up section), so findings point
 * at real file lines; JS/TS migrations are linted on the SQL they sent when applied, and each
 * finding is moved to the `pgm.*` call that sent the statement (or the file's first line, with
 * the statement quoted). Findings that cannot apply (a live-table rule on a table this PR creates,
 * NOT VALID advice for a UNIQUE or PRIMARY KEY, timeout advice for a migration that locks only
 * what it creates) become non-blocking notes that say why. A rule squawk reports once per column or
 * constraint of one statement becomes one finding naming them (see mergeRepeats).
 */
import type { ConsortConfig } from '../../config/schema.js';
import { lockMessage, noteReason, statementAt, type BaseRelations } from '../../lint/context.js';
import { locateStatements } from '../../lint/locate.js';
import { describeObjects, spanObject, statementObject, type LintObject } from '../../lint/objects.js';
import { statementsFrom, timeoutNote } from '../../lint/timeouts.js';
import { count } from '../../core/plural.js';
import { applySeverity, lintVerdict } from '../../lint/policy.js';
import type { MigrationFile } from '../../migrations/files.js';
import { parseSqlSections } from '../../migrations/files.js';
import type { AppliedMigration } from '../../ports/migration-runner.js';
import type { Linter, LintFinding, LintInput } from '../../ports/linter.js';
import type { Stages } from '../../report/check-report.js';

type Finding = Stages['lint']['findings'][number];

interface Linted {
  input: LintInput;
  /** False for a migration that ran outside a transaction (`pgm.noTransaction()`): CONCURRENTLY is right there. */
  transactional: boolean;
  /** JS/TS: the statements sent, the 0-based line each starts at in `input.sql`, the source. */
  sent?: { statements: string[]; startLines: number[]; source: string };
}

const QUOTE_MAX = 200;

function jsInput(m: MigrationFile, sent: readonly string[], transactional: boolean): Linted {
  const statements = sent.map((s) => `${s.trim().replace(/;$/, '')};`);
  const startLines: number[] = [];
  let line = 0;
  for (const s of statements) {
    startLines.push(line);
    line += s.split(/\r\n|\r|\n/).length;
  }
  return {
    input: { file: m.file, sql: statements.join('\n') },
    transactional,
    sent: { statements, startLines, source: m.content },
  };
}

/** The statement a finding is about, and for JS/TS where it lands in the source. */
function place(
  f: LintFinding,
  l: Linted,
): { statement: string; rest: string[]; line: number; column?: number; quote?: string } {
  if (!l.sent) {
    const at = f.line - 1 - (l.input.lineOffset ?? 0);
    return {
      statement: statementAt(l.input.sql, at),
      rest: statementsFrom(l.input.sql, at),
      line: f.line,
      ...(f.column ? { column: f.column } : {}),
    };
  }
  const { statements, startLines, source } = l.sent;
  let index = startLines.findIndex(
    (start, i) => f.line - 1 >= start && (i === startLines.length - 1 || f.line - 1 < startLines[i + 1]!),
  );
  if (index === -1) index = 0;
  const statement = statements[index] ?? '';
  const where = locateStatements(source, statements)[index] ?? { line: 1, exact: false };
  const oneLine = statement.replace(/\s+/g, ' ');
  return {
    statement,
    rest: statements.slice(index),
    line: where.line,
    ...(where.exact ? {} : { quote: oneLine.length > QUOTE_MAX ? `${oneLine.slice(0, QUOTE_MAX)}…` : oneLine }),
  };
}

/**
 * The statement squawk's span is in (from after the previous `;`), and the column or constraint the
 * span names, read from the statement's text before and in it. The span, not the line, tells apart
 * two statements on one SQL line.
 */
function spanned(sql: string, span: { start: number; end: number }): { statement: string; object?: LintObject } {
  const start = sql.lastIndexOf(';', span.start - 1) + 1;
  const end = sql.indexOf(';', span.start);
  const statement = sql.slice(start, end === -1 ? undefined : end + 1).trim();
  // The name is just before the span: a bounded tail keeps the patterns cheap on a long statement.
  const object = spanObject(sql.slice(span.start, span.end), sql.slice(Math.max(start, span.start - 500), span.start));
  return { statement, ...(object ? { object } : {}) };
}

interface Placed {
  finding: LintFinding;
  note?: string | undefined;
  /** The message before the objects and the quote are added. */
  said: string;
  /** The statement the finding is about, as squawk's span tells it. */
  statement: string;
  objects: LintObject[];
  quote?: string;
}

/**
 * Squawk reports a rule once per column or constraint, and a JS/TS statement's findings all land on
 * the call that sent it: one rule's findings on one statement at one line become one finding that
 * names every object (`columns \`a\`, \`b\``), so a PR comment says the advice once, with what to change.
 * Findings of one rule on one line that are about different statements (a loop of `pgm.createTable`,
 * two statements on a SQL line) stay apart, each naming its table or index when nothing else tells
 * them apart. The message ends with the objects, then the quoted statement when it was not located.
 */
function mergeRepeats(all: readonly Placed[]): Omit<Placed, 'said' | 'statement' | 'quote'>[] {
  const groups = new Map<string, Placed>();
  for (const p of all) {
    const f = p.finding;
    const key = JSON.stringify([f.file, f.line, f.rule, f.level, p.said, f.help, p.note, p.statement, p.quote]);
    const seen = groups.get(key);
    if (seen)
      seen.objects.push(...p.objects.filter((o) => !seen.objects.some((s) => s.kind === o.kind && s.name === o.name)));
    else groups.set(key, { ...p, objects: [...p.objects] });
  }
  const merged = [...groups.values()];
  const label = (p: Placed) =>
    JSON.stringify([p.finding.file, p.finding.line, p.finding.rule, describeObjects(p.objects)]);
  const labels = merged.map(label);
  return merged.map((p, i) => {
    let objects = p.objects;
    if (labels.indexOf(labels[i]!) !== labels.lastIndexOf(labels[i]!)) {
      const subject = statementObject(p.statement);
      if (subject && !objects.some((o) => o.kind === subject.kind && o.name === subject.name))
        objects = [subject, ...objects];
    }
    const what = objects.length > 0 ? describeObjects(objects) : undefined;
    const where = p.quote ? `in \`${p.quote}\`` : undefined;
    const tail = what && where ? `${what} ${where}` : (what ?? where);
    return {
      finding: { ...p.finding, message: tail ? `${p.said} (${tail})` : p.said },
      note: p.note,
      objects,
    };
  });
}

/**
 * One typo makes the parser report a syntax error at every statement after it; the first one in
 * each file is the one to fix, the rest are echoes of it.
 */
export function firstSyntaxErrors<F extends Pick<LintFinding, 'rule' | 'file' | 'line'>>(findings: readonly F[]): F[] {
  const first = new Map<string, F>();
  for (const f of findings) {
    if (f.rule !== 'syntax-error') continue;
    const seen = first.get(f.file);
    if (seen === undefined || f.line < seen.line) first.set(f.file, f);
  }
  return findings.filter((f) => f.rule !== 'syntax-error' || first.get(f.file) === f);
}

export async function lintStage(
  linter: Linter,
  config: ConsortConfig,
  migrations: readonly MigrationFile[],
  applied: readonly AppliedMigration[],
  serverVersion: string,
  baseRelations?: BaseRelations,
): Promise<Pick<Stages['lint'], 'status' | 'summary' | 'findings' | 'squawkVersion'>> {
  const linted: Linted[] = [];
  // JS/TS migrations that sent nothing to read: they never ran (an earlier one failed), or their
  // own code threw first.
  const unread: string[] = [];
  for (const m of migrations) {
    if (m.kind === 'sql') {
      linted.push({
        input: { file: m.file, sql: parseSqlSections(m.content).up, lineOffset: m.upSqlLineOffset ?? 0 },
        transactional: true,
      });
    } else {
      const ran = applied.find((a) => a.name === m.name);
      if (ran && ran.sql.length > 0) linted.push(jsInput(m, ran.sql, ran.transactional));
      else if (!ran) unread.push(m.file);
    }
  }
  const notRead =
    unread.length === 0
      ? ''
      : `; not linted: ${unread.join(', ')} (${unread.length === 1 ? 'it sent' : 'they sent'} no SQL: JS/TS migrations are linted on the SQL they send as they apply)`;
  if (linted.length === 0)
    return {
      status: unread.length > 0 ? 'skipped' : 'passed',
      summary: unread.length > 0 ? notRead.slice(2) : 'nothing to lint',
      findings: [],
      squawkVersion: null,
    };
  // node-pg-migrate wraps each migration in a transaction unless it opted out: lint each as it ran.
  const runs = await Promise.all(
    [true, false].map((inTx) => {
      const inputs = linted.filter((l) => l.transactional === inTx).map((l) => l.input);
      return inputs.length === 0
        ? undefined
        : linter.lint(inputs, { exclude: config.lint.rules, pgVersion: serverVersion, assumeInTransaction: inTx });
    }),
  );
  const result = {
    // In node-pg-migrate's transaction a BEGIN left open (`COMMIT; BEGIN;` in a .sql migration, to use
    // an enum value it adds) is committed by node-pg-migrate with the migration's record: not
    // uncommitted. Outside one (pgm.noTransaction()) nothing commits it, and the finding stands.
    findings: runs.flatMap(
      (r, i) => r?.findings.filter((f) => i === 1 || f.rule !== 'ban-uncommitted-transaction') ?? [],
    ),
    squawkVersion: runs.find((r) => r !== undefined)?.squawkVersion ?? null,
  };
  const byFile = new Map(linted.map((l) => [l.input.file, l]));
  const placed = mergeRepeats(
    applySeverity(firstSyntaxErrors(result.findings), config.lint.severity).map((f) => {
      const { column: _column, sqlSpan, ...rest } = f;
      const l = byFile.get(f.file);
      if (!l) {
        return {
          finding: { ...rest, ...(f.column ? { column: f.column } : {}) },
          said: f.message,
          statement: '',
          objects: [],
        };
      }
      const p = place(f, l);
      const note = baseRelations
        ? (noteReason(f, p.statement, baseRelations) ?? timeoutNote(f.rule, p.rest, baseRelations))
        : undefined;
      const said = (baseRelations && lockMessage(f, p.statement, baseRelations)) ?? f.message;
      const within = sqlSpan ? spanned(l.input.sql, sqlSpan) : undefined;
      const finding: LintFinding = {
        ...rest,
        ...(note ? { level: 'warning' as const } : {}),
        line: p.line,
        ...(p.column ? { column: p.column } : {}),
      };
      return {
        finding,
        note,
        said,
        // A JS/TS statement is known whole (a `;` in its text does not cut it); a SQL one by its span.
        statement: l.sent ? p.statement : (within?.statement ?? p.statement),
        objects: within?.object ? [within.object] : [],
        ...(p.quote ? { quote: p.quote } : {}),
      };
    }),
  );
  // Notes are reported, never counted against failOn.
  const verdict = lintVerdict(
    placed.filter((p) => !p.note).map((p) => p.finding),
    config.lint.failOn,
  );
  const blocking = new Set(verdict.blocking);
  const findings: Finding[] = placed.map((p) => ({
    ...p.finding,
    blocking: blocking.has(p.finding),
    ...(p.objects.length > 0 ? { objects: p.objects } : {}),
    ...(p.note ? { note: p.note } : {}),
  }));
  const notes = findings.filter((f) => f.note !== undefined).length;
  const counted = findings.filter((f) => f.note === undefined);
  const errors = counted.filter((f) => f.level === 'error').length;
  const noteText = notes > 0 ? `, ${count(notes, 'note')}` : '';
  const summary =
    findings.length === 0
      ? `${count(linted.length, 'migration')} clean`
      : `${count(counted.length, 'finding')}: ${count(errors, 'error')}, ${count(counted.length - errors, 'warning')}${noteText}${verdict.passed ? '' : `; ${verdict.blocking.length} blocking`}`;
  const told = `${summary}${notRead}`;
  return {
    status: verdict.passed ? 'passed' : 'failed',
    summary: told,
    findings,
    squawkVersion: result.squawkVersion,
  };
}
