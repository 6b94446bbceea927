import { randomUUID } from 'node:crypto';
import {
  isInitializeRequest,
  WebStandardStreamableHTTPServerTransport,
  type LegacyHttpHandler,
  type McpServer,
} from '@modelcontextprotocol/server';
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
 *
 * Sessions are bounded per principal as well as in all, so that nobody's sessions make room for
 * somebody else's: opening one more than `maxPerPrincipal` closes one of the caller's own, and
 * so does opening one while the gateway holds `maxSessions` — the caller's own idle ones first
 * (no request of theirs in flight: no question waiting for its answer, no open stream), the one
 * unused the longest among them. A caller who holds none while the gateway is full is refused
 * (429) rather than let it close a stranger's. Without `auth` everyone is "anonymous", one
 * principal: the per-principal bound does not apply, and a full gateway closes the session
 * unused the longest (idle first).
 */

export interface LegacySessionLimits {
  /** Sessions kept at most, whoever opened them. */
  maxSessions: number;
  /** Sessions one principal keeps at most (with `auth` on); opening one more closes one of its own. */
  maxPerPrincipal: number;
  /** A session unused this long (and with no request in flight) is closed. */
  idleMs: number;
  /** Largest POST body read, in bytes. */
  maxRequestBodySize: number;
}

interface Session {
  id: string;
  server: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  lastUsed: number;
  /** The principal that opened it: only it may use it, as the MCP security best practices ask of sessions. */
  owner: string;
  /** Its requests still being answered (a call waiting for an elicitation's answer, an open GET stream): not idle while any is. */
  inFlight: number;
}

/** The caller's principal (a JWT and a token of one name are two) and whether principals are told apart (`auth` on); "anonymous" without auth. */
function caller(): { owner: string; authenticated: boolean } {
  const scope = currentAuthScope();
  return { owner: scope?.principal.id ?? ANONYMOUS, authenticated: scope?.authentication ?? false };
}

// The 2025 spec's code for an unknown session (the SDK's own transport answers the same).
const SESSION_NOT_FOUND = -32001;
// JSON-RPC's implementation-defined server error: no session can be opened for the caller now.
const NO_ROOM = -32000;

async function readJsonBody(request: Request): Promise<unknown> {
  try {
    return JSON.parse(await request.clone().text());
  } catch {
    return undefined;
  }
}

/** `response` whose body calls `done` once, when it has been read to its end, failed or was cancelled (the caller went away). */
function whenAnswered(response: Response, done: () => void): Response {
  if (!response.body) {
    done();
    return response;
  }
  const reader = response.body.getReader();
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    done();
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: ended, value } = await reader.read();
        if (ended) {
          finish();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

export class LegacySessions {
  // Insertion order is use order: a used session is moved to the end (here and in its owner's map).
  private readonly sessions = new Map<string, Session>();
  private readonly byOwner = new Map<string, Map<string, Session>>();
  /** Opens under way (an initialize being answered), in all and by owner: they hold a place already. */
  private opening = 0;
  private readonly openingBy = new Map<string, number>();
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
      if (!session || session.owner !== caller().owner) {
        return jsonRpcErrorResponse(
          404,
          SESSION_NOT_FOUND,
          `MCP session ${sessionId} is not open here: it was closed, went unused too long, or was opened before a restart or on another replica; send initialize to open a new one`,
        );
      }
      this.touch(session);
      session.inFlight += 1;
      const answered = () => {
        session.inFlight -= 1;
        this.touch(session);
      };
      try {
        return whenAnswered(await session.transport.handleRequest(request), answered);
      } catch (error) {
        answered();
        throw error;
      }
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
    this.byOwner.clear();
    await Promise.all(open.map((session) => session.server.close().catch(() => undefined)));
  }

  private async open(request: Request, initialize: unknown): Promise<Response> {
    const { owner, authenticated } = caller();
    if (!this.makeRoom(owner, authenticated)) {
      this.log.warn("mcp session refused: the gateway holds as many as it may, none of them the caller's", {
        session_limit: this.limits.maxSessions,
      });
      return jsonRpcErrorResponse(
        429,
        NO_ROOM,
        `no MCP session can be opened now: this gateway holds its most (${this.limits.maxSessions}), none of them yours; try again once some close, or call without a session (a 2026-07-28 client, or requests without initialize)`,
      );
    }
    this.opening += 1;
    this.openingBy.set(owner, (this.openingBy.get(owner) ?? 0) + 1);
    try {
      const server = this.newServer();
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          this.add({ id, server, transport, lastUsed: Date.now(), owner, inFlight: 0 });
        },
        // DELETE: the transport closes itself after this.
        onsessionclosed: (id) => {
          this.remove(id);
        },
        maxRequestBodySize: this.limits.maxRequestBodySize,
      });
      await server.connect(transport);
      const response = await transport.handleRequest(request, { parsedBody: initialize });
      // A refused initialize opened no session: nothing to keep.
      if (!transport.sessionId || !this.sessions.has(transport.sessionId)) await server.close();
      return response;
    } finally {
      this.opening -= 1;
      const left = (this.openingBy.get(owner) ?? 1) - 1;
      if (left > 0) this.openingBy.set(owner, left);
      else this.openingBy.delete(owner);
    }
  }

  /**
   * Makes room for one more session of `owner` by closing its own (idle first); false when the
   * gateway is full and none of what it holds is the caller's to close.
   */
  private makeRoom(owner: string, authenticated: boolean): boolean {
    this.closeIdle();
    // Without auth every session is the one principal's.
    const own = authenticated ? this.byOwner.get(owner) : this.sessions;
    const ownCount = () => (own?.size ?? 0) + (authenticated ? (this.openingBy.get(owner) ?? 0) : this.opening);
    const total = () => this.sessions.size + this.opening;
    const overOwn = () => authenticated && ownCount() >= this.limits.maxPerPrincipal;
    while ((overOwn() || total() >= this.limits.maxSessions) && own && own.size > 0) {
      const victim = this.leastNeeded(own);
      this.log.warn('mcp session closed to make room for another of its principal', {
        ...(overOwn() ? { per_principal_limit: this.limits.maxPerPrincipal } : { session_limit: this.limits.maxSessions }),
        idle: victim.inFlight === 0,
      });
      this.closeSession(victim.id);
    }
    return !overOwn() && total() < this.limits.maxSessions;
  }

  /** Of `sessions` (in use order), the one to close first: the idle one unused the longest, else the one unused the longest. */
  private leastNeeded(sessions: Map<string, Session>): Session {
    let oldest: Session | undefined;
    for (const session of sessions.values()) {
      if (session.inFlight === 0) return session;
      oldest ??= session;
    }
    return oldest!;
  }

  private closeIdle(): void {
    const cutoff = Date.now() - this.limits.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastUsed >= cutoff) break;
      if (session.inFlight === 0) this.closeSession(id);
    }
  }

  private add(session: Session): void {
    this.sessions.set(session.id, session);
    const own = this.byOwner.get(session.owner) ?? new Map<string, Session>();
    this.byOwner.set(session.owner, own);
    own.set(session.id, session);
  }

  /** Marks `session` used now: the end of both use orders (unless it was closed meanwhile). */
  private touch(session: Session): void {
    session.lastUsed = Date.now();
    if (this.sessions.get(session.id) !== session) return;
    this.sessions.delete(session.id);
    this.sessions.set(session.id, session);
    const own = this.byOwner.get(session.owner);
    own?.delete(session.id);
    own?.set(session.id, session);
  }

  private remove(id: string): Session | undefined {
    const session = this.sessions.get(id);
    if (!session) return undefined;
    this.sessions.delete(id);
    const own = this.byOwner.get(session.owner);
    own?.delete(id);
    if (own?.size === 0) this.byOwner.delete(session.owner);
    return session;
  }

  private closeSession(id: string): void {
    const session = this.remove(id);
    void session?.server.close().catch(() => undefined);
  }
}
