import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay } from './backoff.js';

describe('backoff with jitter', () => {
  it('doubles from the initial delay up to the cap, each delay between half its ceiling and the ceiling', () => {
    const policy = { initialMs: 100, maxMs: 1_000 };
    expect([1, 2, 3, 4, 5, 60].map((failures) => backoffDelay(policy, failures, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([1, 2, 3, 4, 5, 60].map((failures) => backoffDelay(policy, failures, () => 0.999999))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('counts the failures in a row, and starts over after a success', () => {
    const backoff = new Backoff({ initialMs: 100, maxMs: 400 });
    const delays = [backoff.next(), backoff.next(), backoff.next(), backoff.next()];
    expect(backoff.failuresInRow).toBe(4);
    for (const [index, ceiling] of [100, 200, 400, 400].entries()) {
      expect(delays[index]).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delays[index]).toBeLessThanOrEqual(ceiling);
    }
    backoff.reset();
    expect(backoff.failuresInRow).toBe(0);
    expect(backoff.next()).toBeLessThanOrEqual(100);
  });
});
