import type { AnyHandler, ServiceHandlers } from './server.js';
import type { ServerStreamingMethodDefinition, UnaryMethodDefinition } from './method-definition.js';

/**
 * The handlers of a service whose real handlers exist only once what they need is there (a
 * store whose database is still away): each call goes to `current()` at the moment it
 * arrives, and fails as `current()` throws while there are none (UNAVAILABLE, saying why).
 * The server can listen, answer its health checks and register in-process from the start.
 */
export function deferredHandlers<S extends Record<string, unknown>>(definition: S, current: () => ServiceHandlers<S>): ServiceHandlers<S> {
  const handlers: Record<string, AnyHandler> = {};
  for (const [name, raw] of Object.entries(definition)) {
    const method = raw as UnaryMethodDefinition<unknown, unknown> | ServerStreamingMethodDefinition<unknown, unknown>;
    const now = () => (current() as Record<string, AnyHandler>)[name]!;
    handlers[name] = method.responseStream
      ? async function* (request: unknown, ctx: Parameters<AnyHandler>[1]) {
          yield* (now() as (request: unknown, ctx: unknown) => AsyncIterable<unknown>)(request, ctx);
        }
      : async (request: unknown, ctx: Parameters<AnyHandler>[1]) =>
          (now() as (request: unknown, ctx: unknown) => Promise<unknown>)(request, ctx);
  }
  return handlers as ServiceHandlers<S>;
}
