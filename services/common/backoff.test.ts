import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recordingClock } from '../../test/support/recording-clock.js';
import { AttemptsFailed, Backoff, backoffDelay, reconnectSchedule, retry, systemClock, type BackoffPolicy } from './backoff.js';

const SCHEDULE: BackoffPolicy = { attempts: 4, baseMs: 1_000, maxMs: 30_000, jitter: 'none' };

/** An attempt that throws the given errors in turn, then answers "ok". */
function failing(...errors: unknown[]): { attempt: (number: number) => Promise<string>; numbers: number[] } {
  const numbers: number[] = [];
  return {
    numbers,
    attempt: async (number) => {
      numbers.push(number);
      const error = errors[numbers.length - 1];
      if (error !== undefined) throw error;
      return 'ok';
    },
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${String(value)}`);
    },
    (error: unknown) => error,
  );
}

afterEach(() => {
  vi.useRealTimers();
});

describe('backoffDelay', () => {
  it('grows by the multiplier from the base and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((failure) => backoffDelay(SCHEDULE, failure))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000,
    ]);
    expect([1, 2, 3].map((failure) => backoffDelay({ ...SCHEDULE, baseMs: 10, multiplier: 3 }, failure))).toEqual([10, 30, 90]);
    // An endless run's count does not overflow the schedule.
    expect(backoffDelay(SCHEDULE, 100_000)).toBe(30_000);
  });

  it('keeps equal jitter between half the schedule and the schedule', () => {
    const policy: BackoffPolicy = { attempts: Infinity, baseMs: 100, maxMs: 1_000, jitter: 'equal' };
    expect([1, 2, 3, 4, 5, 40].map((failure) => backoffDelay(policy, failure, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([1, 2, 3, 4, 5, 40].map((failure) => backoffDelay(policy, failure, () => 0.999999))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 80 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (failure, random) => {
        const ceiling = backoffDelay({ ...policy, jitter: 'none' }, failure);
        const delay = backoffDelay(policy, failure, () => random);
        return delay >= Math.floor(ceiling / 2) && delay <= ceiling;
      }),
    );
  });

  it('keeps full jitter between 0 and the schedule', () => {
    const policy: BackoffPolicy = { attempts: Infinity, baseMs: 100, maxMs: 1_000, jitter: 'full' };
    expect(backoffDelay(policy, 3, () => 0)).toBe(0);
    expect(backoffDelay(policy, 3, () => 0.999999)).toBe(400);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 80 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (failure, random) => {
        const delay = backoffDelay(policy, failure, () => random);
        return delay >= 0 && delay <= backoffDelay({ ...policy, jitter: 'none' }, failure);
      }),
    );
  });

  it('spreads the waits of clients that failed together', () => {
    const policy: BackoffPolicy = { attempts: Infinity, baseMs: 1_000, maxMs: 30_000, jitter: 'equal' };
    const waits = new Set(Array.from({ length: 50 }, () => backoffDelay(policy, 3)));
    expect(waits.size).toBeGreaterThan(10);
  });
});

describe('retry', () => {
  it('succeeds after transient failures, numbering the attempts and waiting the schedule between them', async () => {
    const clock = recordingClock();
    const model = failing('busy', 'busy');
    const retries: unknown[] = [];
    await expect(retry(model.attempt, SCHEDULE, { clock, onRetry: (told) => retries.push(told) })).resolves.toBe('ok');
    expect(model.numbers).toEqual([1, 2, 3]);
    expect(clock.waits).toEqual([1_000, 2_000]);
    expect(retries).toEqual([
      { attempt: 1, error: 'busy', delayMs: 1_000 },
      { attempt: 2, error: 'busy', delayMs: 2_000 },
    ]);
  });

  it('gives up after `attempts` attempts, with the last error as the cause', async () => {
    const clock = recordingClock();
    const model = failing('a', 'b', 'c', 'd', 'e');
    const error = await rejection(retry(model.attempt, SCHEDULE, { clock }));
    expect(error).toBeInstanceOf(AttemptsFailed);
    expect(error).toMatchObject({
      reason: 'exhausted',
      attempts: 4,
      lastError: 'd',
      cause: 'd',
      message: 'gave up after 4 attempts (exhausted)',
    });
    expect(model.numbers).toEqual([1, 2, 3, 4]);
    expect(clock.waits).toEqual([1_000, 2_000, 4_000]);
  });

  it('makes one attempt when `attempts` is 1', async () => {
    const clock = recordingClock();
    const error = await rejection(retry(failing('a', 'b').attempt, { ...SCHEDULE, attempts: 1 }, { clock }));
    expect(error).toMatchObject({ reason: 'exhausted', attempts: 1 });
    expect(clock.waits).toEqual([]);
  });

  it('stops at once when the predicate says a failure is not worth another attempt', async () => {
    const clock = recordingClock();
    const model = failing('busy', 'bad request', 'busy');
    const judged: Array<[unknown, number]> = [];
    const judge = (failure: unknown, attempt: number) => {
      judged.push([failure, attempt]);
      return failure === 'busy';
    };
    const error = await rejection(retry(model.attempt, SCHEDULE, { clock, retry: judge }));
    expect(error).toMatchObject({ reason: 'permanent', attempts: 2, lastError: 'bad request' });
    expect(judged).toEqual([
      ['busy', 1],
      ['bad request', 2],
    ]);
    expect(clock.waits).toEqual([1_000]);
  });

  it('waits what a failure asks for instead of the schedule, never above the cap and without jitter', async () => {
    const clock = recordingClock();
    const waitOf = (error: unknown) => (typeof error === 'number' ? error : undefined);
    await retry(
      failing(7_000, 'busy', 0, 600_000).attempt,
      { ...SCHEDULE, attempts: 5, jitter: 'full' },
      { clock, waitOf, random: () => 0.5 },
    );
    // 'busy' after two failures: the schedule's 2 s, fully jittered by 0.5.
    expect(clock.waits).toEqual([7_000, 1_000, 0, 30_000]);
  });

  it('makes no wait that would reach the deadline', async () => {
    const clock = recordingClock();
    const model = failing('busy', 'busy', 'busy');
    // 1 s fits in 2.5 s; after it, 2 s does not fit in the 1.5 s left.
    const error = await rejection(retry(model.attempt, SCHEDULE, { clock, deadline: clock.now() + 2_500 }));
    expect(error).toMatchObject({ reason: 'deadline', attempts: 2, delayMs: 2_000 });
    expect(model.numbers).toEqual([1, 2]);
    expect(clock.waits).toEqual([1_000]);
    // A wait that would end exactly at the deadline is not made either.
    const exact = recordingClock();
    await expect(retry(failing('busy').attempt, SCHEDULE, { clock: exact, deadline: exact.now() + 1_000 })).rejects.toMatchObject({
      reason: 'deadline',
      delayMs: 1_000,
    });
  });

  it('goes on without limit until the attempt succeeds', async () => {
    const clock = recordingClock();
    const model = failing(...Array.from({ length: 40 }, () => 'down'));
    await expect(retry(model.attempt, { attempts: Infinity, baseMs: 10, maxMs: 100, jitter: 'none' }, { clock })).resolves.toBe('ok');
    expect(model.numbers).toHaveLength(41);
    expect(clock.waits.slice(0, 6)).toEqual([10, 20, 40, 80, 100, 100]);
  });

  it('cuts a wait when the signal aborts, with the signal’s reason, and makes no further attempt', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const model = failing('down', 'down');
    const run = retry(model.attempt, { attempts: Infinity, baseMs: 60_000, maxMs: 60_000, jitter: 'none' }, { signal: controller.signal });
    const outcome = rejection(run);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(model.numbers).toEqual([1]);
    controller.abort(new Error('stopping'));
    await expect(outcome).resolves.toMatchObject({ message: 'stopping' });
    // Nothing is left behind: no timer, and no attempt later.
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(model.numbers).toEqual([1]);
  });

  it('makes no attempt under a signal that already aborted', async () => {
    const model = failing();
    const error = await rejection(
      retry(model.attempt, SCHEDULE, { signal: AbortSignal.abort(new Error('gone')), clock: recordingClock() }),
    );
    expect(error).toMatchObject({ message: 'gone' });
    expect(model.numbers).toEqual([]);
  });

  it('ends with the signal’s reason, not as a failure to judge, when an attempt is cut by it', async () => {
    const controller = new AbortController();
    const judged: unknown[] = [];
    const attempt = async () => {
      controller.abort(new Error('deadline reached'));
      throw new Error('request aborted');
    };
    const judge = (failure: unknown) => {
      judged.push(failure);
      return true;
    };
    const error = await rejection(retry(attempt, SCHEDULE, { signal: controller.signal, clock: recordingClock(), retry: judge }));
    expect(error).toMatchObject({ message: 'deadline reached' });
    expect(judged).toEqual([]);
  });

  it('sleeps on the system clock by default, which fake timers drive', async () => {
    vi.useFakeTimers();
    const started = Date.now();
    const at: number[] = [];
    const run = retry(async () => {
      at.push(Date.now() - started);
      if (at.length < 3) throw new Error('busy');
      return 'ok';
    }, SCHEDULE);
    await vi.runAllTimersAsync();
    await expect(run).resolves.toBe('ok');
    expect(at).toEqual([0, 1_000, 3_000]);
  });

  it('systemClock.sleep rejects with the reason of a signal that aborts, and clears its timer', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const sleeping = rejection(systemClock.sleep(10_000, controller.signal));
    controller.abort('why');
    await expect(sleeping).resolves.toBe('why');
    expect(vi.getTimerCount()).toBe(0);
    await expect(rejection(systemClock.sleep(10, AbortSignal.abort('before')))).resolves.toBe('before');
  });
});

describe('Backoff: failures of a long-lived connection in a row', () => {
  it('counts the failures in a row, each wait within its jitter, and starts over after a success', () => {
    const backoff = new Backoff(reconnectSchedule(100, 400));
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
