import { failureOf } from '../app/errors.js';

/**
 * Failures in OpenAI's error shape, `{"error": {"message", "type", "param", "code"}}`, with the
 * HTTP status of app/errors.ts: the openai clients read `type` and `code` to
 * raise their own error classes (BadRequestError, AuthenticationError, NotFoundError, …).
 */

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** A failure this face raises itself, with the field it is about (`param`) and a code. */
export class OpenAiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'OpenAiError';
  }
}

/** OpenAI's error types, by status. */
function errorTypeOf(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export function openAiErrorBody(status: number, message: string, param: string | null = null, code: string | null = null): OpenAiErrorBody {
  return { error: { message, type: errorTypeOf(status), param, code } };
}

export interface OpenAiFailure {
  status: number;
  body: OpenAiErrorBody;
  unexpected: boolean;
}

export function openAiFailureOf(error: unknown): OpenAiFailure {
  if (error instanceof OpenAiError)
    return { status: error.status, body: openAiErrorBody(error.status, error.message, error.param, error.code), unexpected: false };
  const { status, message, unexpected, conversationId } = failureOf(error);
  const code = conversationId !== undefined ? 'conversation_busy' : null;
  return { status, body: openAiErrorBody(status, message, null, code), unexpected };
}
