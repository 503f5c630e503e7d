/** Every mode of the Action; the record type makes a mode in MODES without a handler a type error. */
import type { ActionContext } from '../context.js';
import type { ActionInputs, ActionMode } from '../inputs.js';
import { approveMode, buildMode } from './build.js';
import { checkMode } from './check.js';
import { cleanupMode } from './cleanup.js';

/** What a mode reports back to run(): success, or the one line the failed step shows. */
export type ModeResult = { conclusion: 'success' } | { conclusion: 'failure' | 'error' | 'cancelled'; message: string };

export type ModeHandler = (inputs: ActionInputs, ctx: ActionContext) => Promise<ModeResult>;

export const MODE_HANDLERS: Record<ActionMode, ModeHandler> = {
  check: checkMode,
  cleanup: cleanupMode,
  build: buildMode,
  approve: approveMode,
};
