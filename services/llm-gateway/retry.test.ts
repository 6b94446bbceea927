import { describe, expect, it } from 'vitest';
import { AttemptsFailed, backoffMs, decideRetry, parseRetryAfter, withRetries, type AttemptFailure, type RetryClock, type RetryPolicy } from './retry.js';

// Seed 002's defaults.
const SEED: RetryPolicy = { maxRetries: 3, initialBackoffMs: 1_000, multiplier: 2, maxBackoffMs: 30_000 };
const TRANSIENT: AttemptFailure = { transient: true };
const HOUR = 3_600_000;

/** A clock that moves only when slept on, and remembers every wait. */
function fakeClock(start = 1_000_000): RetryClock & { waits: number[] } {
  let now = start;
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

/** An attempt that throws the given errors in turn, then answers "ok". */
function failing(...errors: unknown[]): { attempt: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    calls: () => calls,
    attempt: async () => {
      const error = errors[calls];
      calls += 1;
      if (error !== undefined) throw error;
      return 'ok';
    },
  };
}

async function gaveUp(promise: Promise<unknown>): Promise<AttemptsFailed> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!(error instanceof AttemptsFailed)) throw new Error(`expected AttemptsFailed, got ${String(error)}`);
  return error;
}

describe('backoffMs', () => {
  it('doubles from 1 s and stops at 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((retry) => backoffMs(SEED, retry))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });

  it('follows the configured multiplier', () => {
    expect([1, 2, 3].map((retry) => backoffMs({ ...SEED, initialBackoffMs: 10, multiplier: 3 }, retry))).toEqual([10, 30, 90]);
  });
});

describe('decideRetry', () => {
  it('retries a transient failure with the backoff of its retry number', () => {
    expect(decideRetry(SEED, 1, TRANSIENT, HOUR)).toEqual({ action: 'retry', delayMs: 1_000 });
    expect(decideRetry(SEED, 3, TRANSIENT, HOUR)).toEqual({ action: 'retry', delayMs: 4_000 });
  });

  it('stops after max_retries retries', () => {
    expect(decideRetry(SEED, 4, TRANSIENT, HOUR)).toEqual({ action: 'stop', reason: 'exhausted' });
    expect(decideRetry({ ...SEED, maxRetries: 0 }, 1, TRANSIENT, HOUR)).toEqual({ action: 'stop', reason: 'exhausted' });
  });

  it('never retries a permanent failure', () => {
    expect(decideRetry(SEED, 1, { transient: false }, HOUR)).toEqual({ action: 'stop', reason: 'permanent' });
  });

  it("waits what Retry-After asks instead of the backoff, but no longer than max_backoff", () => {
    expect(decideRetry(SEED, 1, { transient: true, retryAfterMs: 7_000 }, HOUR)).toEqual({ action: 'retry', delayMs: 7_000 });
    expect(decideRetry(SEED, 3, { transient: true, retryAfterMs: 0 }, HOUR)).toEqual({ action: 'retry', delayMs: 0 });
    expect(decideRetry(SEED, 1, { transient: true, retryAfterMs: 600_000 }, HOUR)).toEqual({ action: 'retry', delayMs: 30_000 });
  });

  it('stops when the wait would reach the deadline', () => {
    expect(decideRetry(SEED, 2, TRANSIENT, 2_000)).toEqual({ action: 'stop', reason: 'deadline', delayMs: 2_000 });
    expect(decideRetry(SEED, 2, TRANSIENT, 2_001)).toEqual({ action: 'retry', delayMs: 2_000 });
    expect(decideRetry(SEED, 1, { transient: true, retryAfterMs: 5_000 }, 4_000)).toEqual({ action: 'stop', reason: 'deadline', delayMs: 5_000 });
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('3', now)).toBe(3_000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('1.5', now)).toBe(1_500);
  });

  it('reads an HTTP-date as the time until then, and a past date as now', () => {
    expect(parseRetryAfter('Sat, 21 Nov 2026 12:00:07 GMT', now)).toBe(7_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 11:59:00 GMT', now)).toBe(0);
  });

  it('ignores an absent or unreadable value', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
  });
});

describe('withRetries', () => {
  const classify = (error: unknown): AttemptFailure => (error === 'busy' ? TRANSIENT : error === 'slow down' ? { transient: true, retryAfterMs: 3_000 } : { transient: false });

  it('succeeds after two transient failures, having waited 1 s and then 2 s', async () => {
    const clock = fakeClock();
    const model = failing('busy', 'busy');
    const retries: unknown[] = [];
    const result = await withRetries(model.attempt, { policy: SEED, deadline: clock.now() + 60_000, clock, classify, onRetry: (retry) => retries.push(retry) });
    expect(result).toBe('ok');
    expect(model.calls()).toBe(3);
    expect(clock.waits).toEqual([1_000, 2_000]);
    expect(retries).toEqual([
      { attempt: 1, error: 'busy', delayMs: 1_000 },
      { attempt: 2, error: 'busy', delayMs: 2_000 },
    ]);
  });

  it('waits what the failure asked for', async () => {
    const clock = fakeClock();
    await withRetries(failing('slow down', 'busy').attempt, { policy: SEED, deadline: clock.now() + 60_000, clock, classify });
    expect(clock.waits).toEqual([3_000, 2_000]);
  });

  it('gives up after max_retries retries with the last error and the attempt count', async () => {
    const clock = fakeClock();
    const model = failing('busy', 'busy', 'busy', 'busy', 'busy');
    const failure = await gaveUp(withRetries(model.attempt, { policy: SEED, deadline: clock.now() + 60_000, clock, classify }));
    expect(model.calls()).toBe(4);
    expect(failure).toMatchObject({ lastError: 'busy', attempts: 4, decision: { action: 'stop', reason: 'exhausted' } });
    expect(clock.waits).toEqual([1_000, 2_000, 4_000]);
  });

  it('does not retry a permanent failure', async () => {
    const clock = fakeClock();
    const model = failing('bad request');
    const failure = await gaveUp(withRetries(model.attempt, { policy: SEED, deadline: clock.now() + 60_000, clock, classify }));
    expect(model.calls()).toBe(1);
    expect(failure).toMatchObject({ lastError: 'bad request', attempts: 1, decision: { reason: 'permanent' } });
    expect(clock.waits).toEqual([]);
  });

  it('makes no retry whose wait would pass the deadline', async () => {
    const clock = fakeClock();
    const model = failing('busy', 'busy', 'busy');
    // 1 s fits in 2.5 s; after it, 2 s does not fit in the 1.5 s left.
    const failure = await gaveUp(withRetries(model.attempt, { policy: SEED, deadline: clock.now() + 2_500, clock, classify }));
    expect(model.calls()).toBe(2);
    expect(clock.waits).toEqual([1_000]);
    expect(failure).toMatchObject({ attempts: 2, decision: { reason: 'deadline', delayMs: 2_000 } });
  });

  it('lets an abort during a wait through as it is', async () => {
    const controller = new AbortController();
    const clock: RetryClock = {
      now: () => 0,
      sleep: async (_ms, signal) => {
        controller.abort(new Error('deadline reached'));
        signal?.throwIfAborted();
      },
    };
    await expect(withRetries(failing('busy').attempt, { policy: SEED, deadline: 60_000, clock, classify, signal: controller.signal })).rejects.toThrow('deadline reached');
  });
});
