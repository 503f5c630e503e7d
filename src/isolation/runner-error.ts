/**
 * jest and vitest print an error's message and stack, never a ConsortError's `hint`: an error that
 * reaches the user's test runner carries what to do next in its message, on a line of its own.
 */
import { ConsortError } from '../core/errors.js';

export function withHintInMessage(error: unknown): unknown {
  if (!(error instanceof ConsortError) || !error.hint || error.message.includes(error.hint)) return error;
  const out = new ConsortError(error.code, `${error.message}\n${error.hint}`, {
    hint: error.hint,
    ...(error.cause === undefined ? {} : { cause: error.cause }),
  });
  // The frames are the original's: where the problem was found, not this wrapper.
  const frames = error.stack?.split('\n').filter((line) => /^\s+at /.test(line));
  if (frames?.length) out.stack = [`${out.name}: ${out.message}`, ...frames].join('\n');
  return out;
}

/** `work()`, its ConsortError rethrown with the hint in the message. */
export async function hintingErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw withHintInMessage(error);
  }
}
