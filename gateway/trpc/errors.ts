import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { failureOf } from '../app/errors.js';
import { unknownFieldsMessage } from '../app/inputs.js';
import type { ApprovalConflictReply } from '../app/replies.js';

/**
 * Failures as tRPC errors, with the codes and messages REST gives them (gateway/app/errors:
 * gRPC statuses, redacted messages, no stack traces). Clients of the SSE link reconnect on
 * 500, 502, 503 and 504, and stop on the others.
 */

const CODE_FOR_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};

export function trpcCodeForStatus(status: number): TRPC_ERROR_CODE_KEY {
  return CODE_FOR_STATUS[status] ?? (status >= 400 && status < 500 ? 'BAD_REQUEST' : 'INTERNAL_SERVER_ERROR');
}

/** Carries the REST 409 body of an approval decided earlier, for the error's `data.conflict`. */
export class ApprovalConflict extends Error {
  constructor(readonly reply: ApprovalConflictReply) {
    super(reply.error);
    this.name = 'ApprovalConflict';
  }
}

/** The tRPC error for anything a procedure threw; a TRPCError passes unchanged. */
export function trpcErrorOf(error: unknown): TRPCError {
  if (error instanceof TRPCError) return error;
  if (error instanceof ApprovalConflict) return new TRPCError({ code: 'CONFLICT', message: error.message, cause: error });
  const failure = failureOf(error);
  // The cause keeps only what REST would show: the message, already redacted.
  return new TRPCError({ code: trpcCodeForStatus(failure.status), message: failure.message });
}

/** Input validation failures read like REST's: `field: what was expected`. */
export function validationMessage(cause: unknown): string | undefined {
  const issues = (cause as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return undefined;
  return issues
    .map((issue: { code?: string; keys?: string[]; path?: PropertyKey[]; message?: string }) => {
      const path = (issue.path ?? []).map(String).join('.');
      const message = issue.code === 'unrecognized_keys' && issue.keys ? unknownFieldsMessage(issue.keys) : issue.message;
      return path ? `${path}: ${message ?? 'invalid'}` : (message ?? 'invalid input');
    })
    .join('; ');
}
