import { failureOf } from '../app/errors.js';

/** REST's failure answer: the status of app/errors.ts and `{"error": "…"}`. */
export interface ErrorReply {
  status: number;
  /** `conversation_id`: the busy conversation of a 409. */
  body: { error: string; conversation_id?: string };
  /** True for failures nobody anticipated: worth an error line in the log. */
  unexpected: boolean;
}

export function errorReply(error: unknown): ErrorReply {
  const { status, message, conversationId, unexpected } = failureOf(error);
  return { status, body: conversationId === undefined ? { error: message } : { error: message, conversation_id: conversationId }, unexpected };
}
