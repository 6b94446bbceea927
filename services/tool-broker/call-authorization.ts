import { context, createContextKey } from '@opentelemetry/api';
import type { FetchLike } from '@modelcontextprotocol/client';
import '../common/context.js';

/**
 * The caller's `Authorization` value for the HTTP requests of one tool call, and only those.
 * One MCP client (and one transport) serves every concurrent call to a server, so the header
 * cannot live on the transport: it rides in async context from the call down into the
 * transport's fetch. Requests made outside a call (connect, tools/list, a restart) carry none.
 */
// Kept in the async context that already carries the request context (services/common/
// context.ts), not in an AsyncLocalStorage of its own: one store to propagate per promise.
const CALL_AUTHORIZATION = createContextKey('asg.tool-broker.call-authorization');

export function withCallAuthorization<T>(authorization: string | undefined, fn: () => T): T {
  return context.with(context.active().setValue(CALL_AUTHORIZATION, authorization), fn);
}

/** Wraps `inner` so each request carries the authorization of the call it belongs to. */
export function authorizingFetch(inner: FetchLike): FetchLike {
  return (url, init) => {
    const authorization = context.active().getValue(CALL_AUTHORIZATION) as string | undefined;
    if (!authorization) return inner(url, init);
    const headers = new Headers(init?.headers);
    headers.set('authorization', authorization);
    return inner(url, { ...init, headers });
  };
}
