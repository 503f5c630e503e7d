/**
 * `mode: build` and `mode: approve` — the TDD lane on a pull request: parse the request from the
 * event, build the lane's ports (src/action/ports.ts), hand over to the lane's pull-request
 * workflow (src/lanes/tdd/pull-request.ts), and report the outcome as the step's summary, outputs
 * and conclusion.
 */
import * as core from '@actions/core';
import { ConsortError } from '../../core/errors.js';
import { runOnPullRequest } from '../../lanes/tdd/index.js';
import { renderRunSummary } from '../../report/turn-markdown.js';
import type { ActionContext } from '../context.js';
import type { ActionInputs } from '../inputs.js';
import { setLaneOutputs } from '../outputs.js';
import { laneRequest } from '../lane/trigger.js';
import { tddPorts } from '../ports.js';
import { scrub } from '../secrets.js';
import type { ModeResult } from './index.js';
import { count } from '../../core/plural.js';

export const buildMode = (inputs: ActionInputs, ctx: ActionContext) => laneMode('build', inputs, ctx);
export const approveMode = (inputs: ActionInputs, ctx: ActionContext) => laneMode('approve', inputs, ctx);

async function laneMode(mode: 'build' | 'approve', inputs: ActionInputs, ctx: ActionContext): Promise<ModeResult> {
  const asked = laneRequest(mode, ctx.event, inputs.lane);
  if (asked.kind === 'ignore') {
    core.info(`Nothing to do: ${asked.why}.`);
    return { conclusion: 'success' };
  }
  if (!inputs.githubToken) {
    throw new ConsortError(
      'invalid-input',
      `mode: ${mode} needs the github-token input (it checks permissions, pushes turns and posts comments).`,
      {
        hint: 'Leave github-token at its default, and give the job contents, pull-requests and statuses write permissions.',
      },
    );
  }
  const abort = new AbortController();
  // The runner sends SIGINT (then SIGTERM) on cancel and timeout: stop the turn, keep what was pushed.
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const outcome = await runOnPullRequest(await tddPorts(inputs, ctx, inputs.githubToken, abort.signal), asked);
    if (outcome.kind === 'ignored') core.info(`Nothing to do: ${outcome.why}.`);
    if (outcome.kind !== 'ran') return { conclusion: 'success' };
    const { feature, result, turns, next } = outcome;
    if (ctx.stepSummary)
      await core.summary
        .addRaw(scrub(renderRunSummary({ feature, stop: result.stop, message: result.message, turns, next })))
        .write();
    setLaneOutputs({ feature, stop: result.stop, turns: result.turns, costUsd: result.costUsd });
    core.info(
      `${feature}: ${result.stop} — ${result.message} (${count(result.turns, 'turn')}, $${result.costUsd.toFixed(4)})`,
    );
    if (result.stop === 'escalated' || result.stop === 'stalled')
      return { conclusion: 'failure', message: `Consort: ${feature} ${result.stop}: ${result.message.split('\n')[0]}` };
    if (result.stop === 'interrupted')
      return {
        conclusion: 'failure',
        message: `Consort: the run was cancelled; \`/consort build ${feature}\` resumes from the last pushed turn.`,
      };
    return { conclusion: 'success' };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
