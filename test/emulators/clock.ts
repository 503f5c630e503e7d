/**
 * A clock for tests: real time, but every wait is recorded and cut to a few milliseconds, so a
 * test can assert that a client waited as long as `Retry-After` said without actually waiting.
 */
import type { Clock } from '../../src/branches/http/retry.js';

export interface FastClock extends Clock {
  sleeps: number[];
}

export function fastClock(): FastClock {
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => Date.now(),
    sleep: async (ms) => {
      sleeps.push(ms);
      await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(ms, 0), 5)));
    },
  };
}

export interface VirtualClock extends FastClock {
  /** Move time on by `ms` at once (a test's "two seconds later"). */
  advance(ms: number): void;
}

/**
 * A clock for a client and an emulator that share it (the emulator's `now` option): real time plus
 * an offset, where every sleep is recorded and moves the offset on by what was asked instead of
 * waiting for it (it yields for a millisecond, so the emulator and other tasks run). Token expiry,
 * operation delays, rate-limit refills and Retry-After then cost no real time, and what the client
 * waited is still what it would have waited.
 */
export function virtualClock(): VirtualClock {
  const sleeps: number[] = [];
  let offset = 0;
  return {
    sleeps,
    now: () => Date.now() + offset,
    advance: (ms) => {
      offset += ms;
    },
    sleep: async (ms) => {
      sleeps.push(ms);
      offset += Math.max(ms, 0);
      await new Promise((resolve) => setTimeout(resolve, 1));
    },
  };
}
