import type { BackoffPolicy } from '../common/backoff.js';
import type { AgentConfig } from '../common/config/schema.js';

/**
 * The retry policy of one model call, run by the common backoff
 * (services/common/backoff.ts): `llm.retry`'s schedule, and what a failure says about trying
 * again. No jitter: the schedule the configuration gives, predictable for operators and tests.
 * The server's Retry-After replaces the backoff but is capped by max_backoff, so that a
 * provider cannot park a call for an hour.
 */
export function retryPolicyFrom(retry: AgentConfig['llm']['retry']): BackoffPolicy {
  // max_retries counts the retries after the first attempt: 3 allows four attempts in all.
  return {
    attempts: retry.max_retries + 1,
    baseMs: retry.initial_backoff,
    multiplier: retry.multiplier,
    maxMs: retry.max_backoff,
    jitter: 'none',
  };
}

/** What a failed attempt says about trying again. */
export interface AttemptFailure {
  /** Worth another attempt: rate limits, server errors, the network. */
  transient: boolean;
  /** The wait the server asked for (Retry-After), when it asked. */
  retryAfterMs?: number;
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
