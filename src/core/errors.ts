/**
 * Typed errors for unexpected outcomes. Every ConsortError carries a `hint` that tells the user
 * what to do next; shells print `message` and `hint` on one line and exit non-zero.
 */
export type ErrorCode =
  | 'invalid-input'
  | 'branch-exists'
  | 'branch-not-found'
  | 'branch-busy'
  | 'branch-has-children'
  | 'protected-branch'
  | 'server-unavailable'
  | 'unsupported-server'
  | 'data-dir'
  | 'config'
  | 'tools-unavailable'
  | 'auth'
  | 'project-not-found'
  | 'quota-exceeded'
  | 'branch-limit'
  | 'timeout'
  | 'service-error'
  | 'internal';

export class ConsortError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ConsortError';
    this.code = code;
    this.hint = options.hint;
  }
}

export function isConsortError(e: unknown, code?: ErrorCode): e is ConsortError {
  return e instanceof ConsortError && (code === undefined || e.code === code);
}
