import { context, createContextKey } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';

/** What every hop of one request carries along (gRPC metadata on the wire). */
export interface RequestContext {
  /** 8 lowercase hex characters; empty when the entry point has not decided it yet. */
  sessionId: string;
  /** The caller's `Authorization` header value, forwarded as is; never logged or stored. */
  authorization?: string;
  /** Epoch milliseconds by which the request must be answered; outgoing calls inherit it. */
  deadline?: number;
  /**
   * A2A hops that led to this request (the caller's `X-A2A-Hops`; 0 or absent at a first
   * agent). The a2a-bridge sends one more and refuses past `a2a_max_depth`, so agents that
   * call each other in a cycle stop.
   */
  a2aHops?: number;
  /**
   * The conversation a turn runs in, once known: every log line of the turn
   * carries it as `conversation_id`, in each service it reaches (x-conversation-id metadata).
   */
  conversationId?: string;
}

/** A conversation id as it may travel in metadata: a short token (ids are UUIDs), else dropped. */
export function parseConversationId(value: string | undefined): string | undefined {
  return value !== undefined && /^[A-Za-z0-9_-]{1,64}$/.test(value) ? value : undefined;
}

/** The HTTP header and gRPC metadata key that carry RequestContext.a2aHops. */
export const A2A_HOPS_HEADER = 'X-A2A-Hops';

/** A hop count from a header or metadata value; undefined unless a small non-negative integer. */
export function parseA2aHops(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,3}$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

const REQUEST_CONTEXT = createContextKey('asg.request-context');

// The request context rides in the OpenTelemetry context, so one AsyncLocalStorage carries
// both it and the active span: every promise created pays for one propagation, not two.
// Registering the manager here makes the context work whether or not tracing was set up;
// initTelemetry's own registration then finds this one in place.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

export function runWithContext<T>(ctx: RequestContext, fn: () => T): T {
  return context.with(context.active().setValue(REQUEST_CONTEXT, ctx), fn);
}

export function currentContext(): RequestContext | undefined {
  return context.active().getValue(REQUEST_CONTEXT) as RequestContext | undefined;
}

/** Runs `fn` with the current context changed by `patch` (e.g. once the session id is known). */
export function withContextPatch<T>(patch: Partial<RequestContext>, fn: () => T): T {
  return runWithContext({ ...(currentContext() ?? { sessionId: '' }), ...patch }, fn);
}

/**
 * Records ids a call learns as it runs — a turn sent to a conversation learns its session id
 * from the store, a new conversation its own id — on the call's own request context, so that
 * its later log lines, and the server's line about the call itself, carry them.
 * A served call's request context is its own (grpc/server.ts makes one per call); an id it
 * already has is never replaced. Outside any request, `fn` runs in a new context with them.
 */
export function withLearnedIds<T>(ids: Pick<RequestContext, 'conversationId'> & { sessionId?: string }, fn: () => T): T {
  const ctx = currentContext();
  if (!ctx) return runWithContext({ sessionId: ids.sessionId ?? '', conversationId: ids.conversationId }, fn);
  if (!ctx.sessionId && ids.sessionId) ctx.sessionId = ids.sessionId;
  if (!ctx.conversationId && ids.conversationId) ctx.conversationId = ids.conversationId;
  return fn();
}
