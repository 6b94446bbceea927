import { status as GrpcStatus } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { parseConfig } from './config/load.js';
import { rateRules } from './config/schema.js';
import { RateLimiter, type RateClock } from './rate-limit.js';

/** A clock moved only by the limiter's own waits: the test reads what it waited for. */
function manualClock(): RateClock & { waits: number[] } {
  let now = 1_000_000;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
  };
}

describe('RateLimiter', () => {
  it('lets calls through up to the budget, then waits for the oldest to leave the window', async () => {
    const clock = manualClock();
    const limiter = new RateLimiter([{ pattern: 'resources_*', calls: 2, windowMs: 10_000 }], 30_000, 'tool', clock);
    await limiter.acquire('resources_add');
    await limiter.acquire('resources_list');
    expect(clock.waits).toEqual([]);
    await limiter.acquire('resources_remove');
    expect(clock.waits).toEqual([10_000]);
    // The window has moved on: the two first calls have left it.
    await limiter.acquire('resources_list');
    expect(clock.waits).toEqual([10_000]);
  });

  it('queues concurrent calls behind each other instead of letting them race for one slot', async () => {
    // Time stands still while all three ask at once.
    const waits: number[] = [];
    const clock: RateClock = { now: () => 5000, sleep: async (ms) => void waits.push(ms) };
    const limiter = new RateLimiter([{ pattern: '*', calls: 1, windowMs: 1000 }], 60_000, 'model', clock);
    await Promise.all([limiter.acquire('gemini-2.5-flash'), limiter.acquire('gemini-2.5-flash'), limiter.acquire('gemini-2.5-flash')]);
    expect(waits).toEqual([1000, 2000]);
  });

  it('fails with RESOURCE_EXHAUSTED when the next slot is beyond max_wait, naming the rule', async () => {
    const clock = manualClock();
    const limiter = new RateLimiter([{ pattern: 'gemini-*', calls: 1, windowMs: 60_000 }], 5000, 'model', clock);
    await limiter.acquire('gemini-2.5-flash');
    await expect(limiter.acquire('gemini-2.5-pro')).rejects.toMatchObject({
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      message: expect.stringMatching(
        /rate limit for model gemini-2\.5-pro \(rule "gemini-\*": 1 calls per 1m\) reached; the next slot is in 60000 ms, longer than the wait allowed \(rate_limits\.max_wait 5s\)/,
      ),
    });
    expect(clock.waits).toEqual([]);
  });

  it('never waits past the call deadline', async () => {
    const clock = manualClock();
    const limiter = new RateLimiter([{ pattern: '*', calls: 1, windowMs: 10_000 }], 60_000, 'tool', clock);
    await limiter.acquire('echo');
    await expect(limiter.acquire('echo', clock.now() + 5000)).rejects.toMatchObject({
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      message: expect.stringContaining("call's deadline"),
    });
  });

  it('applies the first matching rule, and leaves unmatched names alone', async () => {
    const clock = manualClock();
    const limiter = new RateLimiter(
      [
        { pattern: 'resources_add', calls: 1, windowMs: 1000 },
        { pattern: 'resources_*', calls: 100, windowMs: 1000 },
      ],
      10_000,
      'tool',
      clock,
    );
    await limiter.acquire('resources_add');
    await limiter.acquire('resources_add');
    expect(clock.waits).toEqual([1000]);
    for (let i = 0; i < 50; i++) await limiter.acquire('unlimited_tool');
    expect(clock.waits).toEqual([1000]);
  });

  it('reads its rules from rate_limits in config order', () => {
    const config = parseConfig(
      {
        rate_limits: {
          max_wait: '2s',
          tools: { 'resources_*': { calls: 5, window: '10s' } },
          models: { 'claude-*': { calls: 3, window: 20 } },
        },
      },
      'test.yaml',
    );
    expect(config.rate_limits.max_wait).toBe(2000);
    expect(rateRules(config.rate_limits.tools)).toEqual([{ pattern: 'resources_*', calls: 5, windowMs: 10_000 }]);
    expect(rateRules(config.rate_limits.models)).toEqual([{ pattern: 'claude-*', calls: 3, windowMs: 20_000 }]);
  });
});
