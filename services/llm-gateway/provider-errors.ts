import {
  APICallError,
  EmptyResponseBodyError,
  InvalidArgumentError,
  InvalidPromptError,
  InvalidResponseDataError,
  JSONParseError,
  MissingToolResultsError,
  NoContentGeneratedError,
  RetryError,
  TypeValidationError,
  UnsupportedFunctionalityError,
} from 'ai';
import { deadlineExceeded, internal, invalidArgument, ServiceError, unavailable } from '../common/grpc/errors.js';
import { redactSecrets } from '../common/secrets.js';
import { parseRetryAfter, type AttemptFailure } from './retry.js';
import type { ModelRoute } from './routing.js';

const DETAIL_LIMIT = 300;

/**
 * Maps a failed model call to the status the proto promises: a request the provider refused
 * is the caller's to fix (INVALID_ARGUMENT), a transient failure may be retried (UNAVAILABLE),
 * a reply we cannot read is ours (INTERNAL). Every message names the model, the provider and
 * the HTTP status, and is redacted: a provider that echoes the key must not leak it.
 */
export function toServiceError(error: unknown, route: ModelRoute): ServiceError {
  if (error instanceof ServiceError) return error;
  // The SDK's own retries are off (retry.ts retries instead); should one ever run, its last attempt decides.
  if (RetryError.isInstance(error)) return toServiceError(error.lastError, route);
  const who = `the provider ${route.provider}`;
  if (APICallError.isInstance(error)) return fromApiCall(error, route, who);
  const detail = detailOf(error);
  if (
    InvalidResponseDataError.isInstance(error) ||
    JSONParseError.isInstance(error) ||
    TypeValidationError.isInstance(error) ||
    EmptyResponseBodyError.isInstance(error) ||
    NoContentGeneratedError.isInstance(error)
  ) {
    return internal(redactSecrets(`${who} sent a reply for model ${route.model} that could not be understood: ${detail}`));
  }
  if (
    InvalidPromptError.isInstance(error) ||
    MissingToolResultsError.isInstance(error) ||
    InvalidArgumentError.isInstance(error) ||
    UnsupportedFunctionalityError.isInstance(error)
  ) {
    return invalidArgument(redactSecrets(`the request for model ${route.model} (${route.provider}) cannot be sent: ${detail}`));
  }
  return internal(redactSecrets(`calling model ${route.model} (${route.provider}) failed: ${detail}`));
}

function fromApiCall(error: APICallError, route: ModelRoute, who: string): ServiceError {
  const status = error.statusCode;
  const detail = detailOf(error);
  const withDetail = (text: string): string => redactSecrets(detail ? `${text}: ${detail}` : text);
  if (status === undefined) {
    return unavailable(withDetail(`could not reach ${who} for model ${route.model} at ${originOf(error.url)} (no HTTP status)`));
  }
  // Ollama takes no key, so a 401 from it is a refusal like any other 4xx.
  if ((status === 401 || status === 403) && route.keyEnv) {
    return invalidArgument(withDetail(`${who} rejected the API key for model ${route.model} (HTTP ${status}); check ${route.keyEnv}`));
  }
  if (status === 429) return unavailable(withDetail(`${who} is rate-limiting model ${route.model} (HTTP 429); try again later`));
  if (status === 408 || status >= 500) return unavailable(withDetail(`${who} failed to answer for model ${route.model} (HTTP ${status})`));
  if (status >= 400) return invalidArgument(withDetail(`${who} refused the request for model ${route.model} (HTTP ${status})`));
  return internal(withDetail(`${who} sent a reply for model ${route.model} that could not be understood (HTTP ${status})`));
}

/**
 * Whether a failed call is worth another attempt: HTTP 429, any 5xx, and a request that got
 * no HTTP answer at all (the SDK's APICallError without a status: refused, reset, DNS). Other
 * 4xx and replies that could not be read would fail the same way again.
 */
export function attemptFailureOf(error: unknown, nowMs: number): AttemptFailure {
  if (!APICallError.isInstance(error)) return { transient: false };
  const status = error.statusCode;
  if (status !== undefined && status !== 429 && status < 500) return { transient: false };
  const retryAfterMs = parseRetryAfter(headerOf(error.responseHeaders, 'retry-after'), nowMs);
  return retryAfterMs === undefined ? { transient: true } : { transient: true, retryAfterMs };
}

/** The HTTP status of a failed call for a log line, or "none" when no answer came. */
export function statusOf(error: unknown): number | 'none' {
  return APICallError.isInstance(error) ? (error.statusCode ?? 'none') : 'none';
}

/**
 * The final error of a retried call: its own category and words, plus how many attempts were
 * made and, when the deadline stopped the retries, the wait that no longer fitted.
 */
export function afterAttempts(error: ServiceError, attempts: number, retryPastDeadlineMs?: number): ServiceError {
  const count = `after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
  if (retryPastDeadlineMs !== undefined) {
    return new ServiceError(
      error.code,
      `${error.message} (${count}; a retry in ${formatDuration(retryPastDeadlineMs)} would pass the call's deadline)`,
    );
  }
  return attempts > 1 ? new ServiceError(error.code, `${error.message} (${count})`) : error;
}

function headerOf(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/** A model call that ran out of time: the llm.timeout or the caller's deadline, whichever came first. */
export function timedOut(route: ModelRoute, budgetMs: number): ServiceError {
  return deadlineExceeded(`model ${route.model} did not answer within ${formatDuration(budgetMs)}`);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)}s`;
}

/**
 * The provider's own words, on one line and short enough for a status message. Redacted
 * before it is cut, so that a cut never leaves the front half of a key unrecognised.
 */
function detailOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = redactSecrets(message).replace(/\s+/g, ' ').trim();
  return line.length > DETAIL_LIMIT ? `${line.slice(0, DETAIL_LIMIT)}…` : line;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'its base URL';
  }
}
