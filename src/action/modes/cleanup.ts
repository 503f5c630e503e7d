/**
 * `mode: cleanup` — on `pull_request: closed`, delete the PR's database branches: `pr-<n>` with its
 * children, and the helpers a killed run may have left (`pr-<n>-rev` is a child of the baseline).
 * It runs no code from the pull request, so it may also run on pull_request_target (where fork PRs
 * get the secrets a `postgres` provider needs).
 */
import * as core from '@actions/core';
import { loadConfig } from '../../config/load.js';
import { ConsortError } from '../../core/errors.js';
import { cleanupPull } from '../../lanes/check/cleanup.js';
import type { ActionContext } from '../context.js';
import type { ActionInputs } from '../inputs.js';
import { setOutputs } from '../outputs.js';
import { openActionProvider } from '../provider.js';
import type { ModeResult } from './index.js';

export async function cleanupMode(inputs: ActionInputs, ctx: ActionContext): Promise<ModeResult> {
  const ev = ctx.event;
  if (ev.kind !== 'pull_request') {
    throw new ConsortError(
      'invalid-input',
      `mode: cleanup deletes a pull request's branch, but this run is a ${ctx.eventName} event.`,
      {
        hint: 'Run it on `pull_request: types: [closed]`.',
      },
    );
  }
  if (ev.action !== 'closed')
    core.info(
      `Deleting the branch of pull request #${ev.number} although it is not closed (event action: ${ev.action}).`,
    );
  const { config } = await loadConfig(ctx.workspace, inputs.config !== undefined ? { path: inputs.config } : {});
  const provider = await openActionProvider(inputs, config, ctx);
  try {
    const deleted = await cleanupPull(provider, ev.number);
    if (deleted.length > 0)
      core.info(`Deleted database branch${deleted.length === 1 ? '' : 'es'} ${deleted.join(', ')}.`);
    else core.info(`No database branch of pull request #${ev.number}: nothing to delete.`);
  } finally {
    await provider.close();
  }
  setOutputs({ branch: null, databaseUrl: null, report: null, conclusion: 'success' });
  return { conclusion: 'success' };
}
