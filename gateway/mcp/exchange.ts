import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The HTTP exchange a tool call is served in, as the tool sees it. The SDK stands between the
 * express handler and the tool, and in a 2025-era session the server instance outlives any
 * one request, so the tool reaches its exchange through async context rather than arguments.
 */
export interface McpExchange {
  /** The conversation's session id, once known: the request's effective session id. */
  adoptSessionId(sessionId: string): void;
}

const exchanges = new AsyncLocalStorage<McpExchange>();

export function runInExchange<T>(exchange: McpExchange, fn: () => T): T {
  return exchanges.run(exchange, fn);
}

export function currentExchange(): McpExchange | undefined {
  return exchanges.getStore();
}
