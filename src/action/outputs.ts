/** The Action's outputs (action.yml). `database-url` carries a password: it is masked first. */
import * as core from '@actions/core';
import { registerConnectionString } from './secrets.js';

export const OUTPUT = {
  branch: 'branch',
  databaseUrl: 'database-url',
  report: 'report',
  conclusion: 'conclusion',
  feature: 'feature',
  stop: 'stop',
  turns: 'turns',
  costUsd: 'cost-usd',
} as const;

export interface ActionOutputs {
  branch: string | null;
  databaseUrl: string | null;
  report: string | null;
  conclusion: 'success' | 'failure' | 'error' | 'cancelled';
}

export function setOutputs(o: ActionOutputs): void {
  if (o.databaseUrl !== null) {
    registerConnectionString(o.databaseUrl);
    core.setOutput(OUTPUT.databaseUrl, o.databaseUrl);
  }
  core.setOutput(OUTPUT.branch, o.branch ?? '');
  core.setOutput(OUTPUT.report, o.report ?? '');
  core.setOutput(OUTPUT.conclusion, o.conclusion);
}

/** The TDD lane's outputs (modes build and approve). */
export function setLaneOutputs(o: { feature: string; stop: string; turns: number; costUsd: number }): void {
  core.setOutput(OUTPUT.feature, o.feature);
  core.setOutput(OUTPUT.stop, o.stop);
  core.setOutput(OUTPUT.turns, String(o.turns));
  core.setOutput(OUTPUT.costUsd, o.costUsd.toFixed(4));
}
