/** The Action's outputs (action.yml). `database-url` carries a password: it is masked first. */
import * as core from '@actions/core';
import { registerConnectionString } from './secrets.js';

export const OUTPUT = {
  branch: 'branch',
  databaseUrl: 'database-url',
  report: 'report',
  conclusion: 'conclusion',
} as const;

export interface ActionOutputs {
  branch: string | null;
  databaseUrl: string | null;
  report: string | null;
  conclusion: 'success' | 'failure' | 'error';
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
