import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, TRPCClientError } from '@trpc/client';
import type { AppRouter } from './api-types.js';
import { authorizationHeaders, sessionToken } from './state/session-token.js';

/**
 * The gateway's tRPC router, typed by its AppRouter: queries and mutations batched over
 * HTTP, subscriptions over server-sent events (the browser's EventSource, which reconnects
 * by itself and names the last stored event it saw).
 *
 * Signed in, every call carries the session's token: as `Authorization: Bearer …`
 * on queries and mutations, and — since an EventSource cannot send headers — as the `token`
 * query parameter on the event streams, the one place the gateway takes it from the URL.
 */
const url = `${window.location.origin}/trpc`;

/** The browser's EventSource, with the session's token added to the URL of each stream it opens. */
class SignedInEventSource extends EventSource {
  constructor(target: string | URL, init?: EventSourceInit) {
    const token = sessionToken();
    if (!token) {
      super(target, init);
      return;
    }
    const signed = new URL(target, window.location.href);
    signed.searchParams.set('token', token);
    super(signed, init);
  }
}

export const api = createTRPCClient<AppRouter>({
  links: [
    splitLink({
      condition: (operation) => operation.type === 'subscription',
      true: httpSubscriptionLink({ url, EventSource: SignedInEventSource }),
      // Read at each call: signing in or out takes effect without rebuilding the client.
      false: httpBatchLink({ url, headers: () => authorizationHeaders() }),
    }),
  ],
});

/**
 * What to show for a failed call: the gateway's own message (REST's wording), or the
 * network's; a refusal for want of a token in words for a person, not for an API client.
 */
export function errorText(error: unknown): string {
  if (isUnauthenticated(error)) return 'You are not signed in: sign in with your API token to go on.';
  if (error instanceof TRPCClientError)
    return !error.message || error.message === 'Unknown error'
      ? 'The agent did not answer as expected; try again in a moment.'
      : error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** A call refused for want of a (valid) token: the chat then asks the user to sign in. */
export function isUnauthenticated(error: unknown): boolean {
  return error instanceof TRPCClientError && (error.data as { httpStatus?: unknown } | undefined)?.httpStatus === 401;
}

/** A call answered "not found" (404): for a run, one that does not exist or is not the caller's to read. */
export function isNotFound(error: unknown): boolean {
  return error instanceof TRPCClientError && (error.data as { httpStatus?: unknown } | undefined)?.httpStatus === 404;
}
