import { describe, expect, it } from 'vitest';
import { recordingClock } from '../../test/support/recording-clock.js';
import { AttemptsFailed, backoffDelay, retry, type Clock } from '../common/backoff.js';
import { configSchema } from '../common/config/schema.js';
import type { Logger } from '../common/log.js';
import { modelRetryRun, type FailureReading } from './generate.js';
import { parseRetryAfter, retryPolicyFrom, type AttemptFailure } from './retry.js';
import type { ModelRoute } from './routing.js';

// The default policy, as the configuration gives it.
const DEFAULTS = retryPolicyFrom(configSchema.parse({}).llm.retry);
const TRANSIENT: AttemptFailure = { transient: true };
const ROUTE = { provider: 'openai', model: 'gpt-test' } as ModelRoute;
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

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

/** 'busy' is transient, 'slow down' asks for 3 s, anything else is permanent. */
const reading: FailureReading = {
  classify: (error) =>
    error === 'busy'
      ? TRANSIENT
      : error === 'slow down'
        ? { transient: true, retryAfterMs: 3_000 }
        : error === 'wait long'
          ? { transient: true, retryAfterMs: 600_000 }
          : { transient: false },
  status: () => 'none',
  describe: String,
};

/** A model call's retry run as Generate makes it, with `budgetMs` left and the fake clock. */
function modelRun(clock: Clock, budgetMs = 60_000, signal = new AbortController().signal, log = quiet) {
  return modelRetryRun({ clock, log }, { route: ROUTE, budgetMs, signal }, reading);
}

describe('the model call retry policy', () => {
  it('doubles from 1 s and stops at 30 s, without jitter', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((retry) => backoffDelay(DEFAULTS, retry))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000,
    ]);
    expect(DEFAULTS).toMatchObject({ attempts: 4, jitter: 'none' });
  });

  it('follows the configured multiplier and retry count', () => {
    const policy = retryPolicyFrom(
      configSchema.parse({ llm: { retry: { max_retries: 0, initial_backoff: '10ms', multiplier: 3 } } }).llm.retry,
    );
    expect([1, 2, 3].map((retry) => backoffDelay(policy, retry))).toEqual([10, 30, 90]);
    expect(policy.attempts).toBe(1);
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

describe('a model call retried', () => {
  it('succeeds after two transient failures, having waited 1 s and then 2 s, with a warning each', async () => {
    const clock = recordingClock();
    const model = failing('busy', 'busy');
    const warnings: unknown[] = [];
    const log: Logger = { ...quiet, warn: (msg, fields) => void warnings.push([msg, fields?.attempt, fields?.retry_in_ms]) };
    expect(await retry(model.attempt, DEFAULTS, modelRun(clock, 60_000, undefined, log))).toBe('ok');
    expect(model.calls()).toBe(3);
    expect(clock.waits).toEqual([1_000, 2_000]);
    expect(warnings).toEqual([
      ['model call failed, retrying', 1, 1_000],
      ['model call failed, retrying', 2, 2_000],
    ]);
  });

  it('waits what Retry-After asks instead of the backoff, but no longer than max_backoff', async () => {
    const clock = recordingClock();
    await retry(failing('slow down', 'busy', 'wait long').attempt, DEFAULTS, modelRun(clock, 3_600_000));
    expect(clock.waits).toEqual([3_000, 2_000, 30_000]);
  });

  it('gives up after max_retries retries with the last error and the attempt count', async () => {
    const clock = recordingClock();
    const model = failing('busy', 'busy', 'busy', 'busy', 'busy');
    const failure = await gaveUp(retry(model.attempt, DEFAULTS, modelRun(clock)));
    expect(model.calls()).toBe(4);
    expect(failure).toMatchObject({ lastError: 'busy', attempts: 4, reason: 'exhausted' });
    expect(clock.waits).toEqual([1_000, 2_000, 4_000]);
  });

  it('does not retry a permanent failure', async () => {
    const clock = recordingClock();
    const model = failing('bad request');
    const failure = await gaveUp(retry(model.attempt, DEFAULTS, modelRun(clock)));
    expect(model.calls()).toBe(1);
    expect(failure).toMatchObject({ lastError: 'bad request', attempts: 1, reason: 'permanent' });
    expect(clock.waits).toEqual([]);
  });

  it('makes no retry whose wait would pass the deadline', async () => {
    const clock = recordingClock();
    const model = failing('busy', 'busy', 'busy');
    // 1 s fits in 2.5 s; after it, 2 s does not fit in the 1.5 s left.
    const failure = await gaveUp(retry(model.attempt, DEFAULTS, modelRun(clock, 2_500)));
    expect(model.calls()).toBe(2);
    expect(clock.waits).toEqual([1_000]);
    expect(failure).toMatchObject({ attempts: 2, reason: 'deadline', delayMs: 2_000 });
    // Retry-After counts the same way.
    const asked = recordingClock();
    await expect(gaveUp(retry(failing('slow down').attempt, DEFAULTS, modelRun(asked, 2_000)))).resolves.toMatchObject({
      reason: 'deadline',
      delayMs: 3_000,
    });
  });

  it('lets an abort during a wait through as it is', async () => {
    const controller = new AbortController();
    const clock: Clock = {
      now: () => 0,
      sleep: async (_ms, signal) => {
        controller.abort(new Error('deadline reached'));
        signal?.throwIfAborted();
      },
    };
    await expect(retry(failing('busy').attempt, DEFAULTS, modelRun(clock, 60_000, controller.signal))).rejects.toThrow('deadline reached');
  });
});
