/**
 * The CheckReport as GitHub markdown, for the sticky PR comment and the job summary. Pure and
 * bounded: the same report always gives the same text, and it never exceeds `maxChars` (GitHub
 * rejects comments over 65,536 characters), dropping detail in stages and saying what it dropped.
 */
import { formatDuration } from '../core/duration.js';
import { STAGE_ORDER, STAGE_TITLES, type CheckReport } from './check-report.js';
import {
  lintHeading,
  planWarningLabel,
  count,
  irreversible,
  migrationFailurePhrase,
  confinedRolePhrase,
  OUTCOME_LABEL,
  orderedFindings,
  outcome,
  plural,
  postgresError,
  PROBLEM_TITLE,
  problemPhrase,
  renameCommand,
  REVERSIBILITY_LABEL,
  schemaTotals,
  shortSha,
  showSchemaDiff,
  showSuite,
  location,
  suitePhrase,
  failureNotes,
  verdict,
  type Phrase,
  type Reader,
  type StageOutcome,
} from './content.js';
import { clip, fenced, mdCode, mdText, oneLine, shellQuote, stripControl } from './escape.js';

export interface MarkdownOptions {
  /** Upper bound on the length of the result; defaults to 60,000, leaving room under GitHub's limit. */
  maxChars?: number;
  /** Replaces "Consort" in the heading, e.g. to tell two database checks apart. */
  title?: string;
  links?: { run?: string };
  /** Who reads it, so its advice names what they can do (default `cli`: `consort check --markdown`). */
  reader?: Reader;
}

/** How much detail one rendering keeps; each stage of shortening lowers one of these. */
interface Limits {
  tail: number;
  diff: number;
  items: number;
  summaryOnly: boolean;
}

interface Input {
  report: CheckReport;
  reader: Reader;
  title: string;
  run: string | null;
  maxChars: number;
  /** Sanitized once, because shortening renders many times. */
  tail: string;
  diff: string;
}

const FULL: Limits = { tail: Infinity, diff: Infinity, items: Infinity, summaryOnly: false };
// Single fields are capped on every rendering so one giant statement or message cannot crowd out the rest.
const STATEMENT_MAX = 8_000;
const MESSAGE_MAX = 2_000;
const CELL_MAX = 300;
const SUMMARY_MAX = 160;

const HEADING_EMOJI: Record<CheckReport['conclusion'], string> = {
  success: '✅',
  failure: '❌',
  error: '⚠️',
  cancelled: '⏹️',
};
const STAGE_EMOJI: Record<StageOutcome, string> = {
  passed: '✅',
  failed: '❌',
  warned: '⚠️',
  skipped: '⏭️',
  error: '💥',
};

const phrase = (p: Phrase): string =>
  p
    .map((x) =>
      typeof x === 'string' ? x : 'code' in x ? mdCode(clip(x.code, CELL_MAX)) : mdText(clip(x.text, CELL_MAX * 2)),
    )
    .join('');

/** Prose from outside: inline when it is one short line, otherwise a code block that keeps its lines. */
function prose(text: string, max = MESSAGE_MAX): string {
  const clean = stripControl(text).trim();
  if (!clean.includes('\n') && clean.length <= CELL_MAX) return mdText(clean);
  return fenced(clip(clean, max), 'text');
}

/** Only http(s), with the characters that would end a markdown link destination encoded. */
function safeUrl(url: string | undefined): string | null {
  if (url === undefined || !/^https?:\/\//i.test(url)) return null;
  try {
    return new URL(url).href.replace(/\(/g, '%28').replace(/\)/g, '%29');
  } catch {
    return null;
  }
}

function details(summary: string, body: string): string {
  return `<details><summary>${summary}</summary>\n\n${body}\n\n</details>`;
}

/** The last `n` characters from a line start (unless one line is longer than that). */
function keepEnd(text: string, n: number): string {
  if (n >= text.length) return text;
  const s = text.slice(text.length - n);
  const nl = s.indexOf('\n');
  return nl >= 0 && nl < s.length - 1 ? s.slice(nl + 1) : s.replace(/^[\udc00-\udfff]/, '');
}

function keepStart(text: string, n: number): string {
  if (n >= text.length) return text;
  const s = text.slice(0, n);
  const nl = s.lastIndexOf('\n');
  return nl > 0 ? s.slice(0, nl) : s.replace(/[\ud800-\udbff]$/, '');
}

const lineCount = (text: string): number => (text === '' ? 0 : text.split('\n').length);

function header(i: Input): string {
  const r = i.report;
  const ref = (side: CheckReport['base']): string => {
    const sha = shortSha(side.sha);
    return `${mdCode(side.ref)}${sha === null ? '' : ` @ ${mdCode(sha)}`}`;
  };
  const meta = [
    `**Base** ${ref(r.base)} ← **head** ${ref(r.head)}`,
    r.pr === null ? '' : `PR #${r.pr}`,
    r.branch === null ? '' : `database branch ${mdCode(r.branch)}`,
    `provider ${mdCode(r.provider)}${r.branchMode === null ? '' : ` (${mdText(r.branchMode)})`}`,
  ].filter((s) => s !== '');
  return `## ${HEADING_EMOJI[r.conclusion]} ${mdText(i.title)}: ${verdict(r)}\n\n${meta.join(' · ')}`;
}

function stageTable(r: CheckReport, summaryMax: number): string {
  const rows = STAGE_ORDER.map((name) => {
    const s = r.stages[name];
    const o = outcome(s);
    const time = s.status === 'skipped' ? '—' : formatDuration(s.durationMs);
    return `| ${STAGE_TITLES[name]} | ${STAGE_EMOJI[o]} ${OUTCOME_LABEL[o]} | ${time} | ${mdText(clip(oneLine(s.summary), summaryMax))} |`;
  });
  return ['| Stage | Status | Time | Summary |', '| --- | --- | ---: | --- |', ...rows].join('\n');
}

function errorSection(r: CheckReport, max: number): string | null {
  if (r.error === undefined) return null;
  const hint = r.error.hint === undefined ? [] : [`**What to do:** ${mdText(clip(oneLine(r.error.hint), max))}`];
  return ['### ⚠️ The check could not run', prose(r.error.message, max), ...hint].join('\n\n');
}

/** The first `cap` items, and a line saying how many were left out (recorded for the closing note). */
function capped<T>(
  list: readonly T[],
  cap: number,
  what: string,
  omitted: string[],
): { shown: readonly T[]; more: string[] } {
  if (list.length <= cap) return { shown: list, more: [] };
  const left = list.length - cap;
  omitted.push(`${count(left)} of ${plural(list.length, what)}`);
  if (cap <= 0) return { shown: [], more: [`_${plural(list.length, what)} not listed._`] };
  return { shown: list.slice(0, cap), more: [`… and ${plural(left, `more ${what}`)}`] };
}

function planSection(r: CheckReport, reader: Reader, l: Limits, omitted: string[]): string | null {
  const problems = r.stages.plan.problems;
  const warnings = (r.stages.plan.warnings ?? []).map(
    (p) => `**${planWarningLabel(p, 'warning')}:** ${phrase(problemPhrase(p, reader))}`,
  );
  const ignored = r.stages.plan.ignoredSettings;
  if (problems.length === 0 && warnings.length === 0 && ignored === undefined) return null;
  const { shown, more } = capped(problems, l.items, 'plan problem', omitted);
  const lines = [
    ...(ignored === undefined ? [] : [`**Configuration:** ${mdText(ignored)}.`]),
    ...shown.map((p) => `**${PROBLEM_TITLE[p.kind]}:** ${phrase(problemPhrase(p, reader))}`),
    ...warnings.slice(0, Math.max(l.items, 0)),
  ];
  const renames = shown.flatMap((p) => renameCommand(p, shellQuote) ?? []);
  const fix = renames.length === 0 ? [] : ['Rename with:', fenced(renames.join('\n'), 'sh')];
  return ['### Migration plan', ...lines, ...more, ...fix].join('\n\n');
}

function migrationSection(r: CheckReport): string | null {
  const f = r.stages.migrations.failure;
  if (f === undefined) return null;
  return [
    '### Failed migration',
    phrase(migrationFailurePhrase(f)),
    fenced(clip(f.statement, STATEMENT_MAX), 'sql'),
    fenced(clip(postgresError(f), MESSAGE_MAX), 'text'),
    // The stage table clips its summary, which ends with this note.
    ...(f.note === undefined ? [] : [mdText(clip(`Note: ${f.note}`, MESSAGE_MAX))]),
    ...[confinedRolePhrase(r.stages.migrations)].flatMap((p) => (p ? [phrase(p)] : [])),
  ].join('\n\n');
}

function lintSection(r: CheckReport, l: Limits, omitted: string[]): string | null {
  const all = orderedFindings(r);
  if (all.length === 0) return null;
  const { shown, more } = capped(all, l.items, 'lint finding', omitted);
  const rows = shown.map((f) => {
    const advice = f.help === undefined ? f.message : `${f.message} — ${f.help}`;
    const message = f.note === undefined ? advice : `Note: ${f.note}. ${advice}`;
    return `| ${mdCode(clip(f.rule, CELL_MAX))} | ${mdCode(clip(location(f.file, f.line, f.column), CELL_MAX))} | ${mdText(clip(oneLine(message), CELL_MAX * 2))} | ${f.blocking ? '❌ yes' : f.note === undefined ? 'no' : 'no (note)'} |`;
  });
  const table =
    rows.length === 0
      ? []
      : [['| Rule | Location | Message | Blocking |', '| --- | --- | --- | --- |', ...rows].join('\n')];
  return [`### ${lintHeading(all)}`, ...table, ...more].join('\n\n');
}

/** A verdict's detail in one table cell, its lines (a schema diff, one object a line) kept apart with <br>. */
function detailCell(detail: string): string {
  const lines = clip(detail, CELL_MAX * 2)
    .split('\n')
    .filter((line) => line.trim() !== '');
  return lines.map((line) => mdText(line)).join('<br>');
}

function reversibilitySection(r: CheckReport, l: Limits, omitted: string[]): string | null {
  const bad = irreversible(r);
  if (bad.length === 0) return null;
  const { shown, more } = capped(bad, l.items, 'reversibility problem', omitted);
  const rows = shown.map(
    (m) =>
      `| ${mdCode(clip(m.file, CELL_MAX))} | ${REVERSIBILITY_LABEL[m.verdict]} | ${m.detail === undefined ? '' : detailCell(m.detail)} |`,
  );
  const table =
    rows.length === 0 ? [] : [['| Migration | Verdict | Detail |', '| --- | --- | --- |', ...rows].join('\n')];
  return ['### Reversibility', ...table, ...more].join('\n\n');
}

function schemaSection(i: Input, l: Limits, omitted: string[]): string | null {
  if (!showSchemaDiff(i.report)) return null;
  const t = schemaTotals(i.report.stages.schemaDiff.counts);
  const summary = `${count(t.added)} added, ${count(t.removed)} removed, ${count(t.changed)} changed`;
  const text = i.diff.replace(/\n+$/, '');
  if (text.trim() === '') return `### Schema diff\n\n${summary}`;
  const total = lineCount(text);
  if (l.diff <= 0) {
    omitted.push('the schema diff text');
    return `### Schema diff\n\n${summary} (${plural(total, 'line')} of diff left out)`;
  }
  const kept = keepStart(text, l.diff);
  const cut = kept.length < text.length;
  if (cut) omitted.push(`${count(total - lineCount(kept))} of ${plural(total, 'schema diff line')}`);
  const note = cut ? `\n\n_Showing the first ${count(lineCount(kept))} of ${plural(total, 'line')}._` : '';
  return `### Schema diff\n\n${details(summary, `${fenced(kept, 'diff')}${note}`)}`;
}

function suiteSection(i: Input, l: Limits, omitted: string[]): string | null {
  if (!showSuite(i.report)) return null;
  const s = i.report.stages.suite;
  const { shown, more } = capped(s.failures, l.items, 'test failure', omitted);
  const failures = shown.map((f) => {
    const head = `**❌** ${mdCode(clip(f.id, CELL_MAX))} (${failureNotes(f)
      .map((n) => mdText(clip(n, CELL_MAX)))
      .join(', ')})`;
    return f.message === undefined || f.message.trim() === '' ? head : `${head}\n\n${prose(f.message)}`;
  });
  const text = i.tail.replace(/\n+$/, '');
  const total = lineCount(text);
  let output: string[] = [];
  if (text.trim() !== '' && l.tail <= 0) {
    omitted.push('the suite output');
  } else if (text.trim() !== '') {
    const kept = keepEnd(text, l.tail);
    const cut = kept.length < text.length;
    if (cut) omitted.push(`${count(total - lineCount(kept))} of ${plural(total, 'suite output line')}`);
    const label = cut
      ? `Output (last ${count(lineCount(kept))} of ${plural(total, 'line')})`
      : `Output (last ${plural(total, 'line')})`;
    output = [details(label, fenced(kept, 'text'))];
  }
  return ['### Test suite', phrase(suitePhrase(s)), ...failures, ...more, ...output].join('\n\n');
}

function footer(i: Input): string {
  const r = i.report;
  const parts = [`${mdText(r.tool.name)} ${mdText(r.tool.version)}`, formatDuration(r.durationMs)];
  if (r.configSource !== null) parts.push(`config ${mdCode(r.configSource)}`);
  if (i.run !== null) parts.push(`[workflow run](${i.run})`);
  return `<sub>${parts.join(' · ')}</sub>`;
}

function omissionNote(i: Input, omitted: string[], summaryOnly: boolean): string | null {
  if (omitted.length === 0 && !summaryOnly) return null;
  const what = summaryOnly ? 'everything but the summary table' : omitted.join('; ');
  const where = i.run === null ? ' The JSON report has everything.' : ` The [workflow run](${i.run}) has everything.`;
  return `_Shortened to stay under ${count(i.maxChars)} characters. Left out: ${what}._${where}`;
}

function render(i: Input, l: Limits): string {
  const omitted: string[] = [];
  const r = i.report;
  const body = l.summaryOnly
    ? [errorSection(r, 300)]
    : [
        errorSection(r, MESSAGE_MAX),
        planSection(r, i.reader, l, omitted),
        migrationSection(r),
        lintSection(r, l, omitted),
        reversibilitySection(r, l, omitted),
        schemaSection(i, l, omitted),
        suiteSection(i, l, omitted),
      ];
  const table = stageTable(r, l.summaryOnly ? 80 : SUMMARY_MAX);
  const parts = [header(i), table, ...body, omissionNote(i, omitted, l.summaryOnly), footer(i)];
  return `${parts.filter((p): p is string => p !== null).join('\n\n')}\n`;
}

/** The largest n in [0, hi] that `ok` accepts, or null when even 0 is too much. */
function largest(hi: number, ok: (n: number) => boolean): number | null {
  if (!ok(0)) return null;
  let lo = 0;
  let top = hi + 1;
  while (top - lo > 1) {
    const mid = Math.floor((lo + top) / 2);
    if (ok(mid)) lo = mid;
    else top = mid;
  }
  return lo;
}

export function renderCheckMarkdown(report: CheckReport, options: MarkdownOptions = {}): string {
  const maxChars = options.maxChars ?? 60_000;
  const i: Input = {
    report,
    reader: options.reader ?? 'cli',
    maxChars,
    title: options.title ?? 'Consort',
    run: safeUrl(options.links?.run),
    tail: stripControl(report.stages.suite.outputTail),
    diff: stripControl(report.stages.schemaDiff.text),
  };
  const fits = (l: Limits): boolean => render(i, l).length <= maxChars;
  let l = FULL;
  if (fits(l)) return render(i, l);
  // In order of how little a reviewer loses: old output lines, then diff lines, then list entries.
  const r = report.stages;
  const longest = Math.max(
    r.lint.findings.length,
    r.suite.failures.length,
    r.plan.problems.length,
    r.reversibility.migrations.length,
  );
  // No more than maxChars characters of text, or maxChars / 20 list entries (none renders shorter), can fit.
  const stages: ['tail' | 'diff' | 'items', number][] = [
    ['tail', Math.min(i.tail.length, maxChars)],
    ['diff', Math.min(i.diff.length, maxChars)],
    ['items', Math.min(longest, Math.ceil(maxChars / 20))],
  ];
  for (const [key, hi] of stages) {
    const at = (n: number): Limits => ({ ...l, [key]: n });
    const n = largest(hi, (x) => fits(at(x)));
    if (n !== null) return render(i, at(n));
    l = at(0);
  }
  const summary = render(i, { ...l, summaryOnly: true });
  if (summary.length <= maxChars) return summary;
  const last = `## ${HEADING_EMOJI[report.conclusion]} ${mdText(i.title)}: ${verdict(report)}\n\n_The report is too large to show here; see the JSON report._\n`;
  return clip(last, maxChars);
}
