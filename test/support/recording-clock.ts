import type { Clock } from '../../services/common/backoff.js';

/** A clock for the backoff module that moves only when slept on, and remembers every wait. */
export function recordingClock(start = 1_000_000): Clock & { waits: number[] } {
  let now = start;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      waits.push(ms);
      now += ms;
    },
  };
}
