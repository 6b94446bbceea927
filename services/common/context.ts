import { AsyncLocalStorage } from 'node:async_hooks';

/** What every hop of one request carries along (gRPC metadata on the wire). */
export interface RequestContext {
  /** 8 lowercase hex characters; empty when the entry point has not decided it yet. */
  sessionId: string;
  /** The caller's `Authorization` header value, forwarded as is; never logged or stored. */
  authorization?: string;
  /** Epoch milliseconds by which the request must be answered; outgoing calls inherit it. */
  deadline?: number;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

/** Runs `fn` with the current context changed by `patch` (e.g. once the session id is known). */
export function withContextPatch<T>(patch: Partial<RequestContext>, fn: () => T): T {
  const current = storage.getStore() ?? { sessionId: '' };
  return storage.run({ ...current, ...patch }, fn);
}
