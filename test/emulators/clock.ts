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
