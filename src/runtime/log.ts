/**
 * Adapters of the Log port (src/ports/log.ts): lines handed to a writer (the CLI's stderr, the
 * Action's step log), and a log that drops everything. A line is the message, then its fields as
 * ` key=value` pairs (JSON for values that are not strings), so a message without fields is
 * written exactly as given.
 */
import type { Log, LogFields } from '../ports/log.js';

export function formatLine(message: string, fields?: LogFields): string {
  const pairs = Object.entries(fields ?? {})
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return pairs.length > 0 ? `${message} ${pairs.join(' ')}` : message;
}

export interface LineLogOptions {
  /** Where warnings and errors go (default: `write`). */
  problem?: (line: string) => void;
  /** Where debug lines go (default: nowhere). */
  debug?: (line: string) => void;
}

/** A Log that writes each message as one line. */
export function lineLog(write: (line: string) => void, options: LineLogOptions = {}): Log {
  const problem = options.problem ?? write;
  const debug = options.debug;
  return {
    debug: (m, f) => debug?.(formatLine(m, f)),
    info: (m, f) => write(formatLine(m, f)),
    warn: (m, f) => problem(formatLine(m, f)),
    error: (m, f) => problem(formatLine(m, f)),
  };
}

export const silentLog: Log = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
