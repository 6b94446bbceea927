import { failureOf } from '../app/errors.js';

/** REST's failure answer (DESIGN rule 8): the status of app/errors.ts and `{"error": "…"}`. */
export interface ErrorReply {
  status: number;
  body: { error: string };
  /** True for failures nobody anticipated: worth an error line in the log. */
  unexpected: boolean;
}

export function errorReply(error: unknown): ErrorReply {
  const { status, message, unexpected } = failureOf(error);
  return { status, body: { error: message }, unexpected };
}
