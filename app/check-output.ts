/**
 * What the App shows on GitHub for a check, as pure functions: the check run's conclusion, title,
 * summary and annotations from a CheckReport (or from the reason it could not produce one), and
 * the sticky PR comment. Annotations point at repository files, so only relative paths qualify.
 */
import type { ConfigProblem } from '../src/config/load.js';
import { redact } from '../src/core/redact.js';
import { STAGE_TITLES, type CheckReport } from '../src/report/check-report.js';
import { postgresError, problemPhrase, REVERSIBILITY_LABEL, verdict, type Phrase } from '../src/report/content.js';
import { renderCheckMarkdown } from '../src/report/markdown.js';
import { MAX_ANNOTATIONS } from '../src/github/check-limits.js';
import type { Annotation, CheckResult } from '../src/ports/github.js';
import { docsUrl } from '../src/core/docs-url.js';
import { count } from '../src/core/plural.js';

export const CHECK_NAME = 'Consort / database';
/** Not the Action's `<!-- consort:check -->`: a repository may run both, each keeping its own comment. */
export const STICKY_MARKER = '<!-- consort:app:check -->';
const SUMMARY_MAX = 60_000;

export type CheckOutcome = CheckResult;

const plain = (p: Phrase): string =>
  p.map((x) => (typeof x === 'string' ? x : 'code' in x ? `\`${x.code}\`` : x.text)).join('');
const capitalize = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const isRepoPath = (file: string | undefined): file is string =>
  file !== undefined && file !== '' && !file.startsWith('/') && !file.split('/').includes('..');

export function reportAnnotations(report: CheckReport): Annotation[] {
  const s = report.stages;
  const out: Annotation[] = [];
  const add = (
    file: string | undefined,
    line: number | undefined,
    level: Annotation['annotation_level'],
    title: string,
    message: string,
  ): void => {
    if (!isRepoPath(file)) return;
    const at = Math.max(1, line ?? 1);
    out.push({
      path: file,
      start_line: at,
      end_line: at,
      annotation_level: level,
      title,
      message: redact(message).slice(0, 4000),
    });
  };
  for (const p of s.plan.problems)
    if ('file' in p) add(p.file, 1, 'failure', STAGE_TITLES.plan, plain(problemPhrase(p)));
  const f = s.migrations.failure;
  if (f)
    add(
      f.file,
      f.line,
      s.migrations.blocking ? 'failure' : 'warning',
      'Migration failed',
      `${postgresError(f)}\n\n${f.statement.slice(0, 2000)}`,
    );
  for (const l of s.lint.findings) {
    add(
      l.file,
      l.line,
      l.blocking ? 'failure' : l.level === 'error' ? 'warning' : 'notice',
      `squawk: ${l.rule}`,
      l.help ? `${l.message}\n${l.help}` : l.message,
    );
  }
  for (const m of s.reversibility.migrations) {
    if (m.verdict === 'reversible' || m.verdict === 'irreversible') continue;
    add(
      m.file,
      1,
      s.reversibility.blocking ? 'failure' : 'warning',
      `Reversibility: ${REVERSIBILITY_LABEL[m.verdict]}`,
      m.detail ?? REVERSIBILITY_LABEL[m.verdict],
    );
  }
  for (const t of s.suite.failures)
    add(t.file, 1, s.suite.blocking ? 'failure' : 'warning', `Test ${t.state}: ${t.name}`, t.message ?? t.id);
  return out;
}

function withAnnotationNote(summary: string, total: number): string {
  return total > MAX_ANNOTATIONS ? `${summary}\n\n_Showing ${MAX_ANNOTATIONS} of ${total} annotations._` : summary;
}

export function reportOutcome(report: CheckReport): CheckOutcome {
  if (report.conclusion === 'cancelled')
    return cancelledOutcome(report.cancelled?.reason ?? 'stopped before its verdict');
  const annotations = reportAnnotations(report);
  const summary = renderCheckMarkdown(report, { maxChars: SUMMARY_MAX, title: CHECK_NAME, reader: 'app' });
  return {
    conclusion: report.conclusion === 'success' ? 'success' : 'failure',
    output: {
      title: capitalize(verdict(report)),
      summary: withAnnotationNote(summary, annotations.length),
      annotations: annotations.slice(0, MAX_ANNOTATIONS),
    },
  };
}

export function cancelledOutcome(reason: string): CheckOutcome {
  return { conclusion: 'cancelled', output: { title: 'Cancelled', summary: `This check was cancelled: ${reason}.` } };
}

export function configOutcome(file: string, problems: readonly ConfigProblem[]): CheckOutcome {
  const lines = problems.map((p) => `- ${p.line === null ? p.file : `${p.file}:${p.line}`}: ${p.message}`);
  const annotations = problems
    .filter((p) => isRepoPath(p.file))
    .map((p): Annotation => ({
      path: p.file,
      start_line: p.line ?? 1,
      end_line: p.line ?? 1,
      annotation_level: 'failure',
      title: 'Consort configuration',
      message: p.message,
    }));
  return {
    conclusion: 'failure',
    output: {
      title: 'Invalid Consort configuration',
      summary: withAnnotationNote(
        [
          `The Consort configuration in \`${file}\` has ${count(problems.length, 'problem')}; nothing was checked.`,
          '',
          ...lines,
          '',
          `Every key is described in [docs/configuration.md](${docsUrl('configuration.md')}).`,
        ].join('\n'),
        annotations.length,
      ),
      annotations: annotations.slice(0, MAX_ANNOTATIONS),
    },
  };
}

export function errorOutcome(message: string, hint?: string): CheckOutcome {
  const text = redact(message);
  return {
    conclusion: 'failure',
    output: {
      title: 'The check could not run',
      summary: [
        `The database check could not run: ${text}`,
        ...(hint ? ['', `**What to do:** ${redact(hint)}`] : []),
      ].join('\n'),
    },
  };
}

export const forkWaitingText = (sha: string): string =>
  [
    `This pull request comes from a fork, so its migrations and test suite have not run.`,
    '',
    `Someone with write access to this repository can review the changes at \`${sha.slice(0, 7)}\` and comment \`/consort allow-run\` to run them. Each new push needs a new approval.`,
  ].join('\n');

/** `detailsUrl`: the pull request comment that says who can approve, and how. */
export function forkWaitingOutcome(sha: string, detailsUrl: string): CheckOutcome {
  return {
    conclusion: 'action_required',
    detailsUrl,
    output: { title: 'Waiting for approval to run code from a fork', summary: forkWaitingText(sha) },
  };
}

/** The web page of a pull request (or one of its comments) on the GitHub the App talks to. */
export function pullUrl(webUrl: string, repo: { owner: string; repo: string }, pr: number, commentId?: number): string {
  const at = `${webUrl.replace(/\/+$/, '')}/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}/pull/${pr}`;
  return commentId === undefined ? at : `${at}#issuecomment-${commentId}`;
}

/** The sticky PR comment: the marker (how the App finds its own comment again) and the report. */
export function stickyBody(markdown: string): string {
  return `${STICKY_MARKER}\n${markdown}`;
}

export function checkReportComment(report: CheckReport): string {
  return stickyBody(renderCheckMarkdown(report, { maxChars: SUMMARY_MAX, title: CHECK_NAME, reader: 'app' }));
}
