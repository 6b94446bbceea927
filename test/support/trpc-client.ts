import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, type TRPCClientError } from '@trpc/client';
import { EventSource } from 'eventsource';
import type { AppRouter } from '../../gateway/trpc/router.js';

/**
 * A Node client of the gateway's tRPC router, typed by its AppRouter, linked the way the
 * web chat is: queries and mutations batched over HTTP, subscriptions over SSE (Node 20 has
 * no EventSource: the `eventsource` package's). Extra headers go on every HTTP call.
 */
export function trpcClient(baseUrl: string, headers: Record<string, string> = {}) {
  const url = `${baseUrl}/trpc`;
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (operation) => operation.type === 'subscription',
        true: httpSubscriptionLink({ url, EventSource }),
        false: httpBatchLink({ url, headers }),
      }),
    ],
  });
}

export type TestTrpcClient = ReturnType<typeof trpcClient>;

/** What a subscription delivered, in order: each item with the tracked id it came with (if any). */
export interface Recording<T> {
  items: { id?: string; data: T }[];
  states: string[];
  errors: TRPCClientError<AppRouter>[];
  stop(): void;
}

type Subscribable<T> = (callbacks: {
  onData(value: T | { id: string; data: T }): void;
  onError(error: TRPCClientError<AppRouter>): void;
  onConnectionStateChange(state: { state: string }): void;
}) => { unsubscribe(): void };

/** Records every item of a subscription until `stop()`; tracked items keep their id. */
export function record<T extends { kind: string }>(subscribe: Subscribable<T>): Recording<T> {
  const recording: Recording<T> = { items: [], states: [], errors: [], stop: () => undefined };
  const subscription = subscribe({
    onData(value) {
      recording.items.push('kind' in value ? { data: value } : { id: value.id, data: value.data });
    },
    onError(error) {
      recording.errors.push(error);
    },
    onConnectionStateChange(state) {
      recording.states.push(state.state);
    },
  });
  recording.stop = () => subscription.unsubscribe();
  return recording;
}
