import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './openapi.js';

/**
 * The typed client of an agent's REST API: openapi-fetch over the types generated from the
 * gateway's OpenAPI document (openapi.ts), so that every path, parameter, body and answer is
 * checked by the compiler. `agent.GET('/conversations/{id}', { params: { path: { id } } })`
 * resolves to `{ data }` on a 2xx and `{ error }` (the `{"error": …}` body) otherwise;
 * docs/client.md shows a whole exchange.
 */

export type { components, operations, paths };

/** An agent's REST API, typed. */
export type AgentClient = Client<paths>;

export interface AgentClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the agent listens, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** An API token (auth.tokens) or a JWT, sent as `Authorization: Bearer …`; none without auth. */
  token?: string;
  /**
   * How long one request may take before it is aborted, in milliseconds: by default a little
   * more than an agent's default turn timeout (5 minutes), since sending a message waits for
   * the turn. With a request's own `signal`, whichever aborts first.
   */
  timeoutMs?: number;
}

/** The default deadline: chat.turn_timeout's default plus a margin for the answer to come back. */
export const DEFAULT_TIMEOUT_MS = 330_000;

export function createAgentClient(options: AgentClientOptions): AgentClient {
  const { token, timeoutMs = DEFAULT_TIMEOUT_MS, fetch: send = globalThis.fetch, headers, ...rest } = options;
  // Every request has a deadline: its own signal's, or timeoutMs.
  const withDeadline = (request: Request) =>
    send(new Request(request, { signal: AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]) }));
  return createFetchClient<paths>({
    ...rest,
    fetch: withDeadline,
    headers: { ...(token !== undefined && { Authorization: `Bearer ${token}` }), ...headers },
  });
}
