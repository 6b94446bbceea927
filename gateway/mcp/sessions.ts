import { randomUUID } from 'node:crypto';
import { isInitializeRequest, WebStandardStreamableHTTPServerTransport, type LegacyHttpHandler, type McpServer } from '@modelcontextprotocol/server';
import type { Logger } from '../../services/common/log.js';
import { ANONYMOUS, currentAuthScope } from '../app/principal.js';
import { jsonRpcErrorResponse } from './http-bridge.js';

/**
 * 2025-era MCP (initialize + `Mcp-Session-Id`) served with sessions, because that era sends an
 * elicitation as a server→client request and the answer comes back as a separate POST: only
 * the server instance that asked can take it. A session holds nothing but that connection —
 * conversations and approvals live in the store — so losing one (a restart, another replica,
 * an expiry) loses at most a question in flight, whose approval stays pending and can be
 * decided over REST or by calling the tool again. The client gets 404 for an unknown session
 * and, as the 2025 spec says, opens a new one. With replicas behind a balancer, 2025-era
 * clients need affinity on `Mcp-Session-Id` for elicitation; 2026-07-28 clients need none.
 *
 * Requests without a session id that are not an initialize (clients that never open one)
 * are served statelessly, where a question cannot be asked: their calls return approvals.
 */

export interface LegacySessionLimits {
  /** Sessions kept at most; opening one more closes the one unused the longest. */
  maxSessions: number;
  /** A session unused this long is closed. */
  idleMs: number;
  /** Largest POST body read, in bytes. */
  maxRequestBodySize: number;
}

interface Session {
  server: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  lastUsed: number;
  /** Who opened it: only they may use it, as the MCP security best practices ask of sessions. */
  owner: string;
}

/** The caller's name; "anonymous" without auth. */
function callerName(): string {
  return currentAuthScope()?.principal.name ?? ANONYMOUS;
}

// The 2025 spec's code for an unknown session (the SDK's own transport answers the same).
const SESSION_NOT_FOUND = -32001;

async function readJsonBody(request: Request): Promise<unknown> {
  try {
    return JSON.parse(await request.clone().text());
  } catch {
    return undefined;
  }
}

export class LegacySessions {
  // Insertion order is use order: a used session is moved to the end.
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly newServer: () => McpServer,
    private readonly sessionless: LegacyHttpHandler,
    private readonly limits: LegacySessionLimits,
    private readonly log: Logger,
  ) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.min(limits.idleMs, 60_000));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  async handle(request: Request): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId) {
      const session = this.sessions.get(sessionId);
      // Someone else's session is answered as an unknown one: its id is no credential.
      if (!session || session.owner !== callerName()) {
        return jsonRpcErrorResponse(
          404,
          SESSION_NOT_FOUND,
          `MCP session ${sessionId} is not open here: it was closed, went unused too long, or was opened before a restart or on another replica; send initialize to open a new one`,
        );
      }
      session.lastUsed = Date.now();
      this.sessions.delete(sessionId);
      this.sessions.set(sessionId, session);
      return session.transport.handleRequest(request);
    }
    const body = request.method === 'POST' ? await readJsonBody(request) : undefined;
    if (isInitializeRequest(body)) return this.open(request, body);
    return this.sessionless(request, body === undefined ? undefined : { parsedBody: body });
  }

  /** Closes every session (the gateway is stopping). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const open = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(open.map((session) => session.server.close().catch(() => undefined)));
  }

  private async open(request: Request, initialize: unknown): Promise<Response> {
    this.makeRoom();
    const owner = callerName();
    const server = this.newServer();
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, { server, transport, lastUsed: Date.now(), owner });
      },
      // DELETE: the transport closes itself after this.
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
      maxRequestBodySize: this.limits.maxRequestBodySize,
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody: initialize });
    // A refused initialize opened no session: nothing to keep.
    if (!transport.sessionId || !this.sessions.has(transport.sessionId)) await server.close();
    return response;
  }

  private makeRoom(): void {
    this.closeIdle();
    while (this.sessions.size >= this.limits.maxSessions) {
      const [oldest] = this.sessions.keys();
      if (oldest === undefined) break;
      this.log.warn('mcp session closed to make room', { session_limit: this.limits.maxSessions });
      this.closeSession(oldest);
    }
  }

  private closeIdle(): void {
    const cutoff = Date.now() - this.limits.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastUsed >= cutoff) break;
      this.closeSession(id);
    }
  }

  private closeSession(id: string): void {
    const session = this.sessions.get(id);
    this.sessions.delete(id);
    void session?.server.close().catch(() => undefined);
  }
}
