/**
 * Where a check's result goes in a workflow run: the JSON report under RUNNER_TEMP, the job
 * summary, annotations on the migration files, the step's outputs, and one sticky PR comment.
 * Commenting is best effort: a token that may not write (a fork's read-only GITHUB_TOKEN, missing
 * permissions) gives a warning, never a failed check.
 */
import * as core from '@actions/core';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkCommentMarker, upsertStickyComment } from '../github/sticky-comment.js';
import { isGitHubApiError } from '../ports/github.js';
import { checkAnnotations } from '../report/annotations.js';
import type { CheckReport } from '../report/check-report.js';
import { renderCheckMarkdown } from '../report/markdown.js';
import { commentKey } from './comment-key.js';
import type { ActionContext } from './context.js';
import type { ActionInputs } from './inputs.js';
import { setOutputs } from './outputs.js';
import { actionGitHub } from './github.js';
import { scrub } from './secrets.js';

export interface PublishInput {
  report: CheckReport;
  inputs: ActionInputs;
  ctx: ActionContext;
  /** The PR branch's connection string, when the branch was kept. */
  databaseUrl: string | null;
}

export async function publishCheck({ report, inputs, ctx, databaseUrl }: PublishInput): Promise<void> {
  const reportFile = path.join(ctx.runnerTemp, 'consort', 'check-report.json');
  await mkdir(path.dirname(reportFile), { recursive: true });
  await writeFile(reportFile, `${scrub(JSON.stringify(report, null, 2))}\n`);
  core.info(`Report: ${reportFile}`);

  // With several check jobs on one pull request, each comment's heading names its job's key.
  const key = commentKey(inputs);
  const markdown = scrub(
    renderCheckMarkdown(report, {
      reader: 'action',
      ...(key !== undefined ? { title: `Consort · ${key}` } : {}),
      ...(ctx.runUrl ? { links: { run: ctx.runUrl } } : {}),
    }),
  );
  if (ctx.stepSummary) await core.summary.addRaw(markdown).write();

  for (const a of checkAnnotations(report)) {
    const props = {
      title: a.title,
      file: a.file,
      ...(a.line ? { startLine: a.line } : {}),
      ...(a.column ? { startColumn: a.column } : {}),
    };
    (a.level === 'error' ? core.error : core.warning)(scrub(a.message), props);
  }

  setOutputs({ branch: report.branch, databaseUrl, report: reportFile, conclusion: report.conclusion });
  await comment(markdown, inputs, ctx, key);
}

async function comment(
  markdown: string,
  inputs: ActionInputs,
  ctx: ActionContext,
  key: string | undefined,
): Promise<void> {
  const ev = ctx.event;
  if (inputs.comment === 'off') return;
  if (ev.kind !== 'pull_request') {
    core.info(`No PR comment: a ${ctx.eventName} run has no pull request (the job summary has the report).`);
    return;
  }
  if (ev.fork) {
    core.info(
      'No PR comment: this pull request comes from a fork, and GitHub gives fork runs a read-only GITHUB_TOKEN. The job summary has the report.',
    );
    return;
  }
  if (!inputs.githubToken) {
    core.warning('No PR comment: the github-token input is empty.');
    return;
  }
  try {
    const r = await upsertStickyComment(
      actionGitHub(inputs.githubToken, ctx, inputs.githubWritePacing),
      ctx.repo,
      ev.number,
      markdown,
      {
        marker: checkCommentMarker(key),
      },
    );
    core.info(
      `PR comment ${r.action === 'create' ? 'created' : r.action === 'update' ? 'updated' : 'unchanged'}${r.url ? `: ${r.url}` : ''}`,
    );
  } catch (e) {
    if (!isGitHubApiError(e, 403)) throw e;
    core.warning(
      `Could not write the PR comment (${scrub(e.message)}). Give the job \`permissions: pull-requests: write\` (and \`issues: write\`); the job summary has the report.`,
    );
  }
}
