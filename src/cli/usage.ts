/**
 * Usage errors — a flag or argument the command cannot accept — exit with code 2, like commander's
 * own (unknown option, missing argument), so scripts can tell "called wrongly" from "check failed".
 */
import { ConsortError, isConsortError } from '../core/errors.js';

const USAGE = Symbol('consort.usage');

export function usageError(message: string, hint?: string): ConsortError {
  const e = new ConsortError('invalid-input', message, hint === undefined ? {} : { hint });
  Object.defineProperty(e, USAGE, { value: true });
  return e;
}

/** A usage error, or one raised while reading the command line (e.g. an unknown --provider or --ttl). */
export function isUsageError(e: unknown): boolean {
  return isConsortError(e) && (e as unknown as Record<symbol, unknown>)[USAGE] === true;
}

/** Re-throw a parse error of a flag's value as a usage error. */
export function asUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (isConsortError(e, 'invalid-input') || isConsortError(e, 'config')) throw usageError(e.message, e.hint);
    throw e;
  }
}
