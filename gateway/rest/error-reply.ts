import { failureOf } from '../app/errors.js';

/** REST's failure answer: the status of app/errors.ts and `{"error": "…"}`. */
export interface ErrorReply {
  status: number;
  /**
   * `conversation_id`: the busy conversation of a 409, or the one to look at when the
   * outcome is unknown (`"outcome": "unknown"`, with a decision's `approval_uuid`).
   */
  body: { error: string; conversation_id?: string; outcome?: 'unknown'; approval_uuid?: string };
  /** HTTP headers of the answer: `Retry-After` when the client is to look again later. */
  headers?: Record<string, string>;
  /** True for failures nobody anticipated: worth an error line in the log. */
  unexpected: boolean;
}

export function errorReply(error: unknown): ErrorReply {
  const { status, message, conversationId, outcome, approvalUuid, retryAfterSeconds, unexpected } = failureOf(error);
  return {
    status,
    body: {
      error: message,
      ...(outcome !== undefined && { outcome }),
      ...(conversationId !== undefined && { conversation_id: conversationId }),
      ...(approvalUuid !== undefined && { approval_uuid: approvalUuid }),
    },
    ...(retryAfterSeconds !== undefined && { headers: { 'Retry-After': String(retryAfterSeconds) } }),
    unexpected,
  };
}
