import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike } from '@modelcontextprotocol/client';

/**
 * The caller's `Authorization` value for the HTTP requests of one tool call, and only those.
 * One MCP client (and one transport) serves every concurrent call to a server, so the header
 * cannot live on the transport: it rides in async context from the call down into the
 * transport's fetch. Requests made outside a call (connect, tools/list, a restart) carry none.
 */
const callAuthorization = new AsyncLocalStorage<string | undefined>();

export function withCallAuthorization<T>(authorization: string | undefined, fn: () => T): T {
  return callAuthorization.run(authorization, fn);
}

/** Wraps `inner` so each request carries the authorization of the call it belongs to. */
export function authorizingFetch(inner: FetchLike): FetchLike {
  return (url, init) => {
    const authorization = callAuthorization.getStore();
    if (!authorization) return inner(url, init);
    const headers = new Headers(init?.headers);
    headers.set('authorization', authorization);
    return inner(url, { ...init, headers });
  };
}
