/**
 * Every secret the Action handles is registered with the runner (core.setSecret, which masks it in
 * the log) the moment it is known, and scrubbed from text Consort writes elsewhere — the job
 * summary, the PR comment, the failure message — where the runner's masking does not reach.
 */
import * as core from '@actions/core';
import { connectionSecrets, redact } from '../core/redact.js';
import { SECRET_INPUTS } from './inputs.js';

const known = new Set<string>();

export function registerSecret(value: string): void {
  // Masking a short value would blank out unrelated text all over the log.
  if (value.length < 4 || known.has(value)) return;
  known.add(value);
  core.setSecret(value);
}

export function registerConnectionString(url: string): void {
  for (const s of connectionSecrets(url)) registerSecret(s);
}

/** The secret inputs, registered before any input is parsed or any message printed. */
export function registerSecretInputs(): void {
  for (const name of SECRET_INPUTS) {
    const value = core.getInput(name);
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) registerConnectionString(value);
    else if (value) registerSecret(value);
  }
}

export function scrub(text: string): string {
  return redact(
    text,
    [...known].sort((a, b) => b.length - a.length),
  );
}
