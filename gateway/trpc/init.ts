import { initTRPC } from '@trpc/server';
import { withContextPatch } from '../../services/common/context.js';
import { newSessionId } from '../../services/common/session-id.js';
import { ApprovalConflict, trpcErrorOf, validationMessage } from './errors.js';

/** Per request: the caller's well-formed `X-Session-ID`, or empty. */
export interface TrpcContext {
  sessionId: string;
}

/** How often an idle subscription sends a ping, and how long a client waits without one before reconnecting. */
export const SSE_PING_MS = 15_000;
export const SSE_RECONNECT_AFTER_INACTIVITY_MS = 2 * SSE_PING_MS + 5_000;

const t = initTRPC.context<TrpcContext>().create({
  // Never send stack traces, whatever NODE_ENV says (they may quote a secret, and REST does not send them either).
  isDev: false,
  errorFormatter({ shape, error }) {
    const conflict = error.cause instanceof ApprovalConflict ? error.cause.reply : undefined;
    const message = error.code === 'BAD_REQUEST' ? (validationMessage(error.cause) ?? shape.message) : shape.message;
    return {
      ...shape,
      message,
      data: {
        ...shape.data,
        // The REST 409 body's decision and approval, for a decision made earlier by someone else.
        ...(conflict && { conflict: { decision: conflict.decision, approval: conflict.approval } }),
      },
    };
  },
  sse: {
    ping: { enabled: true, intervalMs: SSE_PING_MS },
    client: { reconnectAfterInactivityMs: SSE_RECONNECT_AFTER_INACTIVITY_MS },
  },
});

export const router = t.router;

/** Errors thrown by queries and mutations get REST's status mapping (subscriptions map their own). */
const restErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.code === 'INTERNAL_SERVER_ERROR' && result.error.cause) throw trpcErrorOf(result.error.cause);
  return result;
});

/**
 * The session id a call runs with: the caller's, else — for calls that start
 * work of their own — one made here, at the entry point. Calls about an existing
 * conversation leave it empty, and the orchestrator uses the conversation's stored one.
 */
function session(kind: 'new' | 'conversation') {
  return t.middleware(({ ctx, next }) =>
    withContextPatch({ sessionId: ctx.sessionId || (kind === 'new' ? newSessionId() : '') }, () => next()),
  );
}

export const newWorkProcedure = t.procedure.use(restErrors).use(session('new'));
export const conversationProcedure = t.procedure.use(restErrors).use(session('conversation'));
export const subscriptionProcedure = t.procedure;
