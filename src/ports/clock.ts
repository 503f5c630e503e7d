/**
 * Time, as the lanes read it: the wall clock for what a report says (`startedAt`) and a monotonic
 * one for durations, which never goes back when the wall clock is set. The adapter is
 * src/runtime/clock.ts (systemClock); tests pass a clock of their own to pin both.
 */

export interface Clock {
  /** The wall clock. */
  now(): Date;
  /** Monotonic milliseconds from an arbitrary origin: only differences mean anything. */
  monotonicMs(): number;
}
