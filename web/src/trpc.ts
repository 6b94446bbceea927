import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, TRPCClientError } from '@trpc/client';
import type { AppRouter } from './api-types.js';

/**
 * The gateway's tRPC router, typed by its AppRouter: queries and mutations batched over
 * HTTP, subscriptions over server-sent events (the browser's EventSource, which reconnects
 * by itself and names the last stored event it saw).
 */
const url = `${window.location.origin}/trpc`;

export const api = createTRPCClient<AppRouter>({
  links: [
    splitLink({
      condition: (operation) => operation.type === 'subscription',
      true: httpSubscriptionLink({ url }),
      false: httpBatchLink({ url }),
    }),
  ],
});

/** What to show for a failed call: the gateway's own message (REST's wording), or the network's. */
export function errorText(error: unknown): string {
  if (error instanceof TRPCClientError) return error.message || 'the request failed';
  if (error instanceof Error) return error.message;
  return String(error);
}
