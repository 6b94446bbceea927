import { ServiceError, unavailable } from '../common/grpc/errors.js';
import { redactSecrets } from '../common/secrets.js';
import { ModelStreamFailed } from './model-stream.js';
import { attemptFailureOf, toServiceError } from './provider-errors.js';
import type { AttemptFailure } from './retry.js';
import type { ModelRoute } from './routing.js';

const DETAIL_LIMIT = 300;

/** The error behind a failed stream: what the provider reported in it, or what was thrown. */
export function reportedError(error: unknown): unknown {
  return error instanceof ModelStreamFailed ? error.reported : error;
}

/**
 * Whether a stream that failed before its first event is worth another attempt: as for
 * Generate, and also after the vendor's own error event (Anthropic sends `overloaded_error`
 * that way, after a 200) or a connection that broke, since the client has seen nothing yet.
 */
export function streamAttemptFailureOf(error: unknown, nowMs: number): AttemptFailure {
  const reported = reportedError(error);
  if (isConnectionLoss(reported) || vendorErrorEvent(reported)) return { transient: true };
  return attemptFailureOf(reported, nowMs);
}

/**
 * A failed stream in the proto's categories. SDK errors map as Generate's do (a refused
 * request, an HTTP status, a chunk that does not parse). Two failures exist only in streams:
 * the vendor's own error event in the stream (Anthropic's `event: error`, an OpenAI-style
 * `{"error": …}` chunk), which comes from a provider that had accepted the request, and a
 * connection that broke while the answer was coming; both are UNAVAILABLE, as a new call
 * may well succeed.
 */
export function streamFailureOf(error: unknown, route: ModelRoute): ServiceError {
  const reported = reportedError(error);
  if (isConnectionLoss(reported)) {
    return unavailable(
      redactSecrets(
        `the connection to the provider ${route.provider} broke off while model ${route.model} was answering: ${detailOf(reported)}`,
      ),
    );
  }
  const event = vendorErrorEvent(reported);
  if (event) {
    const kind = event.type ? ` (${event.type})` : '';
    return unavailable(
      redactSecrets(
        `the provider ${route.provider} reported an error in the stream of model ${route.model}: ${clip(event.message)}${kind}`,
      ),
    );
  }
  return toServiceError(reported, route);
}

/**
 * A failure after events were sent: its own category and words, plus why it was not retried.
 * The client already holds part of the answer; a second attempt would send it another one.
 */
export function afterEventsSent(failure: ServiceError, events: number): ServiceError {
  return new ServiceError(
    failure.code,
    `${failure.message} (after ${events} event${events === 1 ? '' : 's'} of the answer had been sent; a stream that has begun is not retried)`,
  );
}

/** A vendor error object handed on as is: `{message, type?}`, never an Error. */
function vendorErrorEvent(reported: unknown): { message: string; type?: string } | undefined {
  if (reported instanceof Error || typeof reported !== 'object' || reported === null) return undefined;
  const { message, type } = reported as { message?: unknown; type?: unknown };
  if (typeof message !== 'string') return undefined;
  return typeof type === 'string' ? { message, type } : { message };
}

/**
 * Node's fetch (undici) ends a body whose connection closed early with `TypeError: terminated`,
 * the socket error as its cause; a reset shows as ECONNRESET somewhere in the cause chain.
 */
function isConnectionLoss(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    if (current instanceof TypeError && current.message === 'terminated') return true;
    const code = (current as { code?: unknown }).code;
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') return true;
  }
  return false;
}

/** The error's words, and its cause's when they add something (undici's "terminated" alone says little). */
function detailOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause =
    error instanceof Error && error.cause instanceof Error && !message.includes(error.cause.message) ? `: ${error.cause.message}` : '';
  return clip(`${message}${cause}`);
}

/** One line, short enough for a status message; redacted before it is cut, as provider-errors.ts does. */
function clip(text: string): string {
  const line = redactSecrets(text).replace(/\s+/g, ' ').trim();
  return line.length > DETAIL_LIMIT ? `${line.slice(0, DETAIL_LIMIT)}…` : line;
}
