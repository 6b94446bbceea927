import { setTimeout as wait } from 'node:timers/promises';
import type { AgentConfig } from '../common/config/schema.js';

/**
 * Retries of one model call with exponential backoff (seed 002, "Retry Strategy"). The policy
 * is pure: failures and times in, a decision out. The runner around it takes its clock and its
 * sleep from the caller, so tests ask what it waited for instead of waiting.
 */
export interface RetryPolicy {
  /** Retries after the first attempt: 3 allows four attempts in all. */
  maxRetries: number;
  initialBackoffMs: number;
  multiplier: number;
  maxBackoffMs: number;
}

export function retryPolicyFrom(retry: AgentConfig['llm']['retry']): RetryPolicy {
  return { maxRetries: retry.max_retries, initialBackoffMs: retry.initial_backoff, multiplier: retry.multiplier, maxBackoffMs: retry.max_backoff };
}

/** What a failed attempt says about trying again. */
export interface AttemptFailure {
  /** Worth another attempt: rate limits, server errors, the network. */
  transient: boolean;
  /** The wait the server asked for (Retry-After), when it asked. */
  retryAfterMs?: number;
}

export type RetryDecision =
  | { action: 'retry'; delayMs: number }
  | { action: 'stop'; reason: 'permanent' | 'exhausted' }
  /** The wait would end at or after the deadline: an attempt then could not finish in time. */
  | { action: 'stop'; reason: 'deadline'; delayMs: number };

/**
 * The wait before retry number `retry` (1 for the first): initial × multiplier^(retry−1),
 * never above max. No jitter: the schedule seed 002 gives, predictable for operators and tests.
 */
export function backoffMs(policy: RetryPolicy, retry: number): number {
  return Math.min(policy.initialBackoffMs * policy.multiplier ** (retry - 1), policy.maxBackoffMs);
}

/**
 * Whether to try again after `failedAttempts` attempts failed, the last with `failure`, with
 * `msLeft` until the call's deadline. The server's Retry-After replaces the backoff but is
 * capped by max_backoff, so that a provider cannot park a call for an hour.
 */
export function decideRetry(policy: RetryPolicy, failedAttempts: number, failure: AttemptFailure, msLeft: number): RetryDecision {
  if (!failure.transient) return { action: 'stop', reason: 'permanent' };
  if (failedAttempts > policy.maxRetries) return { action: 'stop', reason: 'exhausted' };
  const delayMs = failure.retryAfterMs !== undefined ? Math.min(failure.retryAfterMs, policy.maxBackoffMs) : backoffMs(policy, failedAttempts);
  if (delayMs >= msLeft) return { action: 'stop', reason: 'deadline', delayMs };
  return { action: 'retry', delayMs };
}

/**
 * A Retry-After value in milliseconds: delay-seconds or an HTTP-date (RFC 9110 §10.2.3); a
 * date in the past means now. Undefined when absent or unreadable, so the backoff applies.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // Every HTTP-date form begins with a day name; Date.parse alone would take "120" or "-5" for years.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

export interface RetryClock {
  now(): number;
  /** Resolves after `ms`; rejects when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: RetryClock = {
  now: () => Date.now(),
  sleep: (ms, signal) => wait(ms, undefined, signal ? { signal } : {}),
};

/** The attempts gave up; `lastError` is what the last one threw. */
export class AttemptsFailed extends Error {
  constructor(
    readonly lastError: unknown,
    readonly attempts: number,
    readonly decision: Extract<RetryDecision, { action: 'stop' }>,
  ) {
    super(`gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} (${decision.reason})`);
    this.name = 'AttemptsFailed';
  }
}

export interface RetryRun {
  policy: RetryPolicy;
  /** Absolute time on `clock`: no wait may reach it. */
  deadline: number;
  clock: RetryClock;
  classify(error: unknown): AttemptFailure;
  /** Called before each wait; `attempt` is the number of the attempt that just failed. */
  onRetry?(retry: { attempt: number; error: unknown; delayMs: number }): void;
  /** Cuts a wait short (the call's own deadline); the abort then propagates as is. */
  signal?: AbortSignal;
}

/** Runs `attempt` (numbered from 1) until it succeeds or the policy stops; then throws AttemptsFailed. */
export async function withRetries<T>(attempt: (number: number) => Promise<T>, run: RetryRun): Promise<T> {
  for (let number = 1; ; number += 1) {
    try {
      return await attempt(number);
    } catch (error) {
      const decision = decideRetry(run.policy, number, run.classify(error), run.deadline - run.clock.now());
      if (decision.action === 'stop') throw new AttemptsFailed(error, number, decision);
      run.onRetry?.({ attempt: number, error, delayMs: decision.delayMs });
      await run.clock.sleep(decision.delayMs, run.signal);
    }
  }
}
