/**
 * The Action's one entry point: mask the secret inputs, parse inputs and context once, run the
 * mode, and turn a failed check or any error into a failed step. The only try/catch that
 * reports; everything below throws typed errors or returns results.
 */
import * as core from '@actions/core';
import { VERSION } from '../cli/version.js';
import { isConsortError } from '../core/errors.js';
import { readActionContext } from './context.js';
import { parseInputs } from './inputs.js';
import { registerSecretInputs, scrub } from './secrets.js';

export async function run(): Promise<void> {
  try {
    registerSecretInputs();
    const inputs = parseInputs((name) => core.getInput(name));
    core.info(`Consort ${VERSION}: mode ${inputs.mode}`);
    const ctx = await readActionContext(process.env);
    // Loaded after the first log line: the modes pull in Octokit, pg and node-pg-migrate, whose
    // start-up would otherwise delay every line (and an input error) by ~120 ms.
    const { MODE_HANDLERS } = await import('./modes/index.js');
    const result = await MODE_HANDLERS[inputs.mode](inputs, ctx);
    if (result.conclusion !== 'success') core.setFailed(scrub(result.message));
  } catch (e) {
    if (isConsortError(e)) core.setFailed(scrub(`${e.message}${e.hint ? ` ${e.hint}` : ''}`));
    else {
      core.setFailed(scrub(`Unexpected error: ${e instanceof Error ? e.message : String(e)}`));
      if (e instanceof Error && e.stack) core.debug(scrub(e.stack));
    }
  }
}
