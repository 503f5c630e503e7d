/**
 * Where a lane says what it is doing: one message a call, with structured fields an operator can
 * search for (a run's id, a branch). Each shell builds its own (src/runtime/log.ts: lines on a
 * stream for the CLI and the Action's step log; the App's JSON log), so a lane never writes to the
 * console itself.
 */

export type LogFields = Record<string, unknown>;

export interface Log {
  /** Detail wanted only when debugging (the Action shows it with step debug logging on). */
  debug(message: string, fields?: LogFields): void;
  /** Progress: stages started and finished, branches removed, sessions ended. */
  info(message: string, fields?: LogFields): void;
  /** Something went wrong that the lane works around (a temporary branch it could not remove). */
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}
