/** The Clock port (src/ports/clock.ts) over the host's clocks. */
import type { Clock } from '../ports/clock.js';

export const systemClock: Clock = {
  now: () => new Date(),
  monotonicMs: () => performance.now(),
};
