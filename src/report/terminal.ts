/**
 * The CheckReport for a terminal: one line per stage, then what needs attention, then the verdict
 * with the database branch to inspect. Same content as the markdown, but plain text, capped to what
 * a person reads in a scrollback (the JSON report keeps everything), and free of escape sequences
 * from the PR unless this renderer adds its own colors.
 */
import { formatDuration } from '../core/duration.js';
import { STAGE_ORDER, STAGE_TITLES, type CheckReport } from './check-report.js';
import {
  lintHeading,
  planWarningLabel,
  count,
  irreversible,
  failsReversibility,
  migrationFailurePhrase,
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
  suiteEnding,
  failureNotes,
  verdict,
  type Phrase,
  type StageOutcome,
} from './content.js';
import { clip, oneLine, shellQuote, stripControl } from './escape.js';

export interface TerminalOptions {
  color?: boolean;
  /** Files git does not track yet (a local check of the working tree): renamed with `mv`, not `git mv`. */
  untracked?: ReadonlySet<string>;
  /** Columns to fit stage lines and prose into; code and output lines are left whole. */
  width?: number;
}

const LIST_MAX = 50;
const TAIL_LINES = 40;
const DIFF_LINES = 200;
/** Lines of a reversibility verdict's detail shown under it (the report keeps them all). */
const DETAIL_LINES = 20;
const BLOCK_LINES = 40;

type Paint = (s: string) => string;
interface Palette {
  red: Paint;
  green: Paint;
  yellow: Paint;
  dim: Paint;
  bold: Paint;
}

function palette(on: boolean): Palette {
  const sgr =
    (open: number, close: number): Paint =>
    (s) =>
      on ? `\u001b[${open}m${s}\u001b[${close}m` : s;
  return { red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), dim: sgr(2, 22), bold: sgr(1, 22) };
}

const SYMBOL: Record<StageOutcome, string> = { passed: '✓', failed: '✗', warned: '✗', skipped: '–', error: '!' };

function tint(p: Palette, o: StageOutcome): Paint {
  if (o === 'passed') return p.green;
  if (o === 'warned') return p.yellow;
  return o === 'skipped' ? p.dim : p.red;
}

/** A phrase as plain text on one line (the dry run's plan prints them too). */
export const phrase = (ph: Phrase): string =>
  ph.map((x) => (typeof x === 'string' ? x : oneLine('code' in x ? x.code : x.text))).join('');

// Our own color codes take no columns; the text they wrap was stripped of foreign ones already.
// eslint-disable-next-line no-control-regex -- measuring around escape sequences is the point
const visible = (s: string): number => s.replace(/\u001b\[\d+m/g, '').length;

/** Greedy word wrap; a word longer than the line stays whole rather than being split. */
function wrap(text: string, width: number, indent: string, hang = indent): string[] {
  const lines: string[] = [];
  let line = indent;
  for (const word of text.split(' ').filter((w) => w !== '')) {
    const fresh = line === indent || line === hang;
    if (!fresh && visible(line) + 1 + visible(word) > width) {
      lines.push(line);
      line = hang + word;
    } else {
      line = fresh ? line + word : `${line} ${word}`;
    }
  }
  return [...lines, line];
}

/** A block of foreign text, indented, with at most `max` lines from its start or its end. */
function block(text: string, indent: string, max: number, from: 'start' | 'end', p: Palette): string[] {
  const lines = stripControl(text).replace(/\n+$/, '').split('\n');
  const shown = from === 'start' ? lines.slice(0, max) : lines.slice(-max);
  const note =
    lines.length > max ? [p.dim(`${indent}… ${plural(lines.length - max, 'more line')} in the JSON report`)] : [];
  const body = shown.map((l) => (l === '' ? indent.trimEnd() : `${indent}${l}`));
  return from === 'start' ? [...body, ...note] : [...note, ...body];
}

function more(total: number, shown: number, indent: string, p: Palette): string[] {
  return total > shown ? [p.dim(`${indent}… and ${count(total - shown)} more`)] : [];
}

function header(r: CheckReport): string {
  const ref = (side: CheckReport['base']): string => {
    const sha = shortSha(side.sha);
    // The working tree is not a commit: its sha is the commit it was checked out from (often the
    // base's own, on main with changes not committed), said so rather than as "@ sha" on both sides.
    if (side.ref === 'working tree' && sha !== null) return `working tree (changes on ${oneLine(sha)})`;
    return `${oneLine(side.ref)}${sha === null ? '' : ` @ ${oneLine(sha)}`}`;
  };
  return [
    `${oneLine(r.tool.name)} ${oneLine(r.tool.version)}`,
    `${ref(r.head)} → ${ref(r.base)}`,
    r.pr === null ? '' : `PR #${r.pr}`,
    `${oneLine(r.provider)}${r.branchMode === null ? '' : ` (${oneLine(r.branchMode)})`}`,
  ]
    .filter((s) => s !== '')
    .join(' · ');
}

/** A stage line's lead (`  ✗ Test suite        19s  `): its symbol, title and time. */
const LEAD_WIDTH = 2 + 1 + 1 + 16 + 1 + 6 + 2;
/** Room for a stage's summary on its line; a longer one is clipped there. */
const summaryRoom = (width: number): number => Math.max(10, width - LEAD_WIDTH);

function stageLines(r: CheckReport, width: number, p: Palette): string[] {
  return STAGE_ORDER.map((name) => {
    const s = r.stages[name];
    const o = outcome(s);
    const time = s.status === 'skipped' ? '–' : formatDuration(s.durationMs);
    const summary = o === 'warned' ? `${oneLine(s.summary)} (non-blocking)` : oneLine(s.summary);
    const lead = `  ${SYMBOL[o]} ${STAGE_TITLES[name].padEnd(16)} ${time.padStart(6)}  `;
    return `${tint(p, o)(lead.slice(0, 4))}${lead.slice(4)}${clip(summary, summaryRoom(width))}`;
  });
}

function sections(r: CheckReport, width: number, p: Palette, untracked?: ReadonlySet<string>): string[][] {
  const out: string[][] = [];
  if (r.error !== undefined) {
    const hint = r.error.hint === undefined ? [] : wrap(`What to do: ${oneLine(r.error.hint)}`, width, '  ', '    ');
    out.push([p.bold('The check could not run'), ...block(r.error.message, '  ', BLOCK_LINES, 'start', p), ...hint]);
  }
  const ignored = r.stages.plan.ignoredSettings;
  if (ignored !== undefined)
    out.push([p.bold('Configuration'), ...wrap(`! ${oneLine(ignored)}.`, width, '  ', '    ')]);
  const problems = r.stages.plan.problems;
  if (problems.length > 0) {
    const lines = problems.slice(0, LIST_MAX).flatMap((pr) => {
      const rename = renameCommand(pr, (w) => shellQuote(stripControl(w)), untracked);
      return [
        ...wrap(`${p.red('✗')} ${PROBLEM_TITLE[pr.kind]}: ${phrase(problemPhrase(pr))}`, width, '  ', '    '),
        ...(rename === null ? [] : [`    $ ${rename}`]),
      ];
    });
    out.push([p.bold('Migration plan'), ...lines, ...more(problems.length, LIST_MAX, '  ', p)]);
  }
  const warnings = r.stages.plan.warnings ?? [];
  if (warnings.length > 0) {
    const lines = warnings
      .slice(0, LIST_MAX)
      .flatMap((pr) => wrap(`! ${planWarningLabel(pr, 'allowed')}: ${phrase(problemPhrase(pr))}`, width, '  ', '    '));
    out.push([p.bold('Migration plan warnings'), ...lines, ...more(warnings.length, LIST_MAX, '  ', p)]);
  }
  const f = r.stages.migrations.failure;
  if (f !== undefined) {
    out.push([
      p.bold('Failed migration'),
      ...wrap(phrase(migrationFailurePhrase(f)), width, '  ', '    '),
      ...block(f.statement, '    ', BLOCK_LINES, 'start', p),
      ...block(postgresError(f), '  ', BLOCK_LINES, 'start', p).map(p.red),
      // The stage's line clips its summary, which ends with this note.
      ...(f.note === undefined ? [] : wrap(oneLine(`Note: ${f.note}`), width, '  ', '    ')),
    ]);
  }
  const findings = orderedFindings(r);
  if (findings.length > 0) {
    const lines = findings
      .slice(0, LIST_MAX)
      .flatMap((x) => [
        `  ${x.blocking ? p.red('✗') : p.yellow('·')} ${oneLine(x.rule)}  ${oneLine(location(x.file, x.line, x.column))}${x.blocking ? '' : p.dim(x.note === undefined ? ' (non-blocking)' : ' (note)')}`,
        ...(x.note === undefined ? [] : wrap(oneLine(`Note: ${x.note}.`), width, '      ')),
        ...wrap(oneLine(x.help === undefined ? x.message : `${x.message} — ${x.help}`), width, '      '),
      ]);
    out.push([p.bold(lintHeading(findings)), ...lines, ...more(findings.length, LIST_MAX, '  ', p)]);
  }
  const bad = irreversible(r);
  if (bad.length > 0) {
    const lines = bad.slice(0, LIST_MAX).flatMap((m) => {
      // The detail's first line follows the verdict; the rest (a schema diff, one object a line) keep their lines.
      const [first, ...rest] = (m.detail ?? '').split('\n').filter((l) => l.trim() !== '');
      return [
        ...wrap(
          `${failsReversibility(r, m) ? p.red('✗') : p.yellow('·')} ${oneLine(m.file)}: ${REVERSIBILITY_LABEL[m.verdict]}${first === undefined ? '' : ` — ${oneLine(first)}`}`,
          width,
          '  ',
          '    ',
        ),
        ...rest.slice(0, DETAIL_LINES).flatMap((l) => wrap(oneLine(l), width, '      ', '        ')),
        ...(rest.length > DETAIL_LINES ? [p.dim(`      … ${rest.length - DETAIL_LINES} more lines`)] : []),
      ];
    });
    out.push([p.bold('Reversibility'), ...lines, ...more(bad.length, LIST_MAX, '  ', p)]);
  }
  if (showSchemaDiff(r)) {
    const t = schemaTotals(r.stages.schemaDiff.counts);
    const text = r.stages.schemaDiff.text;
    const diff = text.trim() === '' ? [] : block(text, '    ', DIFF_LINES, 'start', p);
    out.push([
      p.bold(`Schema diff: ${count(t.added)} added, ${count(t.removed)} removed, ${count(t.changed)} changed`),
      ...diff,
    ]);
  }
  if (showSuite(r)) out.push(suiteLines(r, width, p));
  return out;
}

const sentence = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

function suiteLines(r: CheckReport, width: number, p: Palette): string[] {
  const s = r.stages.suite;
  const failures = s.failures.slice(0, LIST_MAX).flatMap((x) => {
    const head = `  ${p.red('✗')} ${oneLine(x.id)} (${failureNotes(x).map(oneLine).join(', ')})`;
    return x.message === undefined || x.message.trim() === ''
      ? [head]
      : [head, ...block(x.message, '      ', 20, 'start', p)];
  });
  const tail =
    s.outputTail.trim() === '' ? [] : [p.dim('  Output:'), ...block(s.outputTail, '  │ ', TAIL_LINES, 'end', p)];
  return [
    p.bold('Test suite'),
    // The command on a line of its own, whole (wrapping it would break it where a shell splits words).
    `  $ ${oneLine(s.command)}`,
    // A summary the stage line had to clip is given whole in place of the bare ending: it may end
    // with the fix (a missing test script, the credential-looking variables suite.passEnv did not
    // pass, an unusable JUnit report), which the clipped line cut off.
    ...wrap(
      oneLine(s.summary).length > summaryRoom(width) ? `${sentence(oneLine(s.summary))}.` : sentence(suiteEnding(s)),
      width,
      '  ',
      '    ',
    ),
    ...failures,
    ...more(s.failures.length, LIST_MAX, '  ', p),
    ...tail,
  ];
}

function conclusion(r: CheckReport, p: Palette): string {
  const symbol =
    r.conclusion === 'success'
      ? p.green('✓')
      : r.conclusion === 'failure'
        ? p.red('✗')
        : r.conclusion === 'cancelled'
          ? p.dim('■')
          : p.red('!');
  const text = verdict(r);
  const line = `${symbol} ${p.bold(text.charAt(0).toUpperCase() + text.slice(1))}`;
  if (r.branch === null) return line;
  const branch = oneLine(r.branch);
  return `${line} · database branch ${branch} · ${p.dim(`consort branch url ${shellQuote(branch)}`)}`;
}

export function renderCheckTerminal(report: CheckReport, options: TerminalOptions = {}): string {
  const p = palette(options.color ?? false);
  const width = Math.max(40, options.width ?? 100);
  const parts = [
    [header(report)],
    stageLines(report, width, p),
    ...sections(report, width, p, options.untracked),
    [conclusion(report, p)],
  ];
  return `${parts.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}
