import { backOff } from 'exponential-backoff';

/**
 * Retrying with exponential backoff: the one rule every loop that tries again uses (model calls,
 * MCP reconnects, A2A resubscribes, webhook deliveries, database reconnects).
 *
 *   await retry((attempt) => connect(), { attempts: Infinity, baseMs: 500, maxMs: 30_000, jitter: 'equal' }, { signal });
 *
 * The wait after failure n is `baseMs × multiplier^(n−1)`, never above `maxMs`, then jittered.
 * A run ends with the attempt's value, or throws:
 * - `AttemptsFailed` (reason `permanent`: `retry(error)` said no; `exhausted`: `attempts` were
 *   made; `deadline`: the next wait would reach `deadline`), with the last error as `cause`;
 * - the signal's reason, when `signal` aborts (a wait in progress is cut at once).
 *
 * exponential-backoff runs the attempts after the first (its count, its retry hook, its rethrow); the wait
 * between them is this module's, because the library's is a bare `setTimeout` that no signal
 * can cut and no server's Retry-After can replace. (The library still takes one zero-delay
 * timer before each retry: tests on fake timers advance past it.)
 */

/**
 * How a wait is spread, so that clients that failed together do not retry in step:
 * 'none' — the schedule exactly (a rule an operator configured); 'equal' — half fixed, half
 * random (never much shorter than the schedule); 'full' — anywhere from 0 to the schedule.
 */
type Jitter = 'none' | 'equal' | 'full';

export interface BackoffPolicy {
  /** Attempts in all, the first one included (4: one try and three retries); Infinity for no limit. */
  attempts: number;
  /** The wait after the first failure, ms. */
  baseMs: number;
  /** The longest wait, ms: the schedule stops growing here, and a requested wait is cut to it. */
  maxMs: number;
  /** How much each wait grows over the one before; 2 when not given. */
  multiplier?: number;
  jitter: Jitter;
}

export interface Clock {
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The process's own time; `setTimeout`-based, so tests with fake timers drive it. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const cut = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', cut);
        resolve();
      }, ms);
      signal?.addEventListener('abort', cut, { once: true });
    }),
};

export interface RetryOptions {
  /** Whether a failure is worth another attempt (a 429, a refused connection); every one is when not given. */
  retry?(error: unknown, attempt: number): boolean;
  /** The wait a failure asks for itself (a server's Retry-After), in place of the schedule's; cut to `maxMs`, not jittered. */
  waitOf?(error: unknown): number | undefined;
  /** A time on `clock` that no wait may reach: the run stops instead of sleeping into it. */
  deadline?: number;
  /** Cuts a wait short and starts no further attempt; the run then throws the signal's reason. */
  signal?: AbortSignal;
  /** Told before each wait; `attempt` is the number (from 1) of the attempt that just failed. */
  onRetry?(retry: { attempt: number; error: unknown; delayMs: number }): void;
  /** Time and sleep; `systemClock` when not given (tests pass one that records its waits). */
  clock?: Clock;
  /** In [0, 1); Math.random when not given. */
  random?: () => number;
}

type StopReason = 'permanent' | 'exhausted' | 'deadline';

/** The run gave up; `cause` is what the last attempt threw. */
export class AttemptsFailed extends Error {
  override name = 'AttemptsFailed';

  constructor(
    readonly lastError: unknown,
    readonly attempts: number,
    readonly reason: StopReason,
    /** For `deadline`: the wait that would have reached it. */
    readonly delayMs?: number,
  ) {
    super(`gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} (${reason})`, { cause: lastError });
  }
}

/** The schedule's wait after failure number `failure` (from 1), jittered by `random`. */
export function backoffDelay(policy: BackoffPolicy, failure: number, random: () => number = Math.random): number {
  // The exponent is capped so that an endless run's count cannot overflow to Infinity × 0.
  const exponent = Math.min(Math.max(failure - 1, 0), 64);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * (policy.multiplier ?? 2) ** exponent);
  if (policy.jitter === 'none') return ceiling;
  if (policy.jitter === 'full') return Math.round(random() * ceiling);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Runs `attempt` (numbered from 1) until it succeeds or the policy and options stop it; see the module's comment. */
export async function retry<T>(attempt: (number: number) => Promise<T>, policy: BackoffPolicy, options: RetryOptions = {}): Promise<T> {
  const { signal, clock = systemClock } = options;
  let number = 0;
  let ended: AttemptsFailed | undefined;
  const next = () => {
    signal?.throwIfAborted();
    number += 1;
    return attempt(number);
  };
  /** Whether to try again after `error`, having slept the wait; false with `ended` set when the run stops. */
  const again = async (error: unknown): Promise<boolean> => {
    // An attempt cut by the signal is no failure to judge: the run ends with the signal's reason.
    signal?.throwIfAborted();
    if (options.retry && !options.retry(error, number)) ended = new AttemptsFailed(error, number, 'permanent');
    else if (number >= policy.attempts) ended = new AttemptsFailed(error, number, 'exhausted');
    if (ended) return false;
    const asked = options.waitOf?.(error);
    const delayMs = asked === undefined ? backoffDelay(policy, number, options.random) : Math.min(Math.max(asked, 0), policy.maxMs);
    if (options.deadline !== undefined && delayMs >= options.deadline - clock.now()) {
      ended = new AttemptsFailed(error, number, 'deadline', delayMs);
      return false;
    }
    options.onRetry?.({ attempt: number, error, delayMs });
    await clock.sleep(delayMs, signal);
    return true;
  };
  // The first attempt is made here: most runs end with it (every model call goes through this),
  // and the library's generator machinery around one attempt costs more than the bookkeeping.
  try {
    return await next();
  } catch (error) {
    if (!(await again(error))) throw ended ?? error;
  }
  try {
    return await backOff(next, {
      numOfAttempts: policy.attempts - 1,
      // The library's own wait is none (a zero-delay timer before each of these attempts, the
      // first included): the wait is slept in `again`, on `clock` and cut by `signal`.
      startingDelay: 0,
      delayFirstAttempt: true,
      jitter: 'none',
      retry: again,
    });
  } catch (error) {
    throw ended ?? error;
  }
}

/**
 * The failures of one long-lived thing in a row (a connection that reconnects for as long as
 * the process runs): each `next()` is the jittered wait before the next try; `reset()` once it
 * worked, so the next outage starts from `baseMs` again.
 */
export class Backoff {
  private failures = 0;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    this.failures += 1;
    return backoffDelay(this.policy, this.failures, this.random);
  }

  reset(): void {
    this.failures = 0;
  }

  /** Failures since the last success. */
  get failuresInRow(): number {
    return this.failures;
  }
}

/** An endless reconnect schedule with equal jitter: from `baseMs`, doubled per failure, up to `maxMs`. */
export function reconnectSchedule(baseMs: number, maxMs: number): BackoffPolicy {
  return { attempts: Infinity, baseMs, maxMs, jitter: 'equal' };
}
