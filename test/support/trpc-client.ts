import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, type TRPCClientError } from '@trpc/client';
import { EventSource } from 'eventsource';
import type { AppRouter } from '../../gateway/trpc/router.js';

/**
 * An EventSource that adds `token` to the URL of each stream it opens, as the web chat's does
 * (web/src/trpc.ts): an EventSource cannot send an Authorization header.
 */
function signedEventSource(token: string): typeof EventSource {
  return class SignedEventSource extends EventSource {
    constructor(target: string | URL, init?: ConstructorParameters<typeof EventSource>[1]) {
      const signed = new URL(target);
      signed.searchParams.set('token', token);
      super(signed, init);
    }
  };
}

/**
 * A Node client of the gateway's tRPC router, typed by its AppRouter, linked the way the
 * web chat is: queries and mutations batched over HTTP, subscriptions over SSE (Node 20 has
 * no EventSource: the `eventsource` package's). Extra headers go on every HTTP call; the token
 * of an `authorization: Bearer …` header also goes on every event stream, as `?token=`.
 */
export function trpcClient(baseUrl: string, headers: Record<string, string> = {}) {
  const url = `${baseUrl}/trpc`;
  const token = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (operation) => operation.type === 'subscription',
        true: httpSubscriptionLink({ url, EventSource: token ? signedEventSource(token) : EventSource }),
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
