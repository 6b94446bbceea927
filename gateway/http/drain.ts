import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { AgentConfig } from '../../services/common/config/schema.js';
import { isLoopbackBinding } from './cross-site.js';

/** What a client is told to wait before it tries again: about as long as a restart takes. */
export const RETRY_AFTER_SECONDS = 5;
/**
 * `server.drain_delay` when the configuration leaves it unset and the gateway listens beyond
 * loopback: a balancer or Kubernetes may still send requests for a few seconds after the stop
 * began (a rolling restart behind a balancer dropped requests with 0), and one readiness period
 * of the shipped layouts (5 s) covers them.
 */
export const REMOTE_DRAIN_DELAY_MS = 5_000;

/**
 * The drain delay in effect: `server.drain_delay` when set; else REMOTE_DRAIN_DELAY_MS beyond
 * loopback, and 0 on loopback, where nothing balances over the gateway and a local start (or
 * a test) should stop at once.
 */
export function serverDrainDelay(config: Pick<AgentConfig, 'host'> & { server: Pick<AgentConfig['server'], 'drain_delay'> }): number {
  return config.server.drain_delay ?? (isLoopbackBinding(config.host) ? 0 : REMOTE_DRAIN_DELAY_MS);
}

/** How often a drain looks at what is still in flight (and for event streams that opened since). */
const DRAIN_POLL_MS = 25;

export interface DrainOutcome {
  /** Requests that finished on their own during the drain. */
  finished: number;
  /** Long-lived event streams that were ended at once (their clients reconnect elsewhere or later). */
  streamsEnded: number;
  /** Requests still running when the grace ran out, whose connections were cut. */
  cut: number;
}

/**
 * A watch, not a piece of work: a GET that streams server-sent events (REST
 * `/conversations/:id/events`, the tRPC subscriptions, the MCP GET stream). It never ends on
 * its own, so a drain ends it at once instead of waiting for it. A POST that answers with an
 * event stream (A2A `message/stream`, an MCP tool call) is a turn in flight and is waited for.
 */
function isEventStream(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'GET') return false;
  const accepts = (req.headers.accept ?? '').includes('text/event-stream');
  const contentType = res.getHeader('content-type');
  return accepts || (typeof contentType === 'string' && contentType.startsWith('text/event-stream'));
}

/**
 * The gateway's clean stop on SIGTERM/SIGINT: once draining, every new request but the
 * probes is answered 503 with `Retry-After` and `Connection: close` (the listener stays open, so a client is told
 * rather than refused a connection), requests in flight — turns, approvals — may finish until
 * the deadline, event streams are ended at once, and whatever still runs at the deadline is cut.
 */
export class HttpDrain {
  private draining = false;
  /** The stop was announced (readiness says "draining") but new requests are still served: server.drain_delay. */
  private announced = false;
  private readonly inFlight = new Map<ServerResponse, IncomingMessage>();
  private finishedDuringDrain = 0;

  /**
   * `probePaths`: GET/HEAD routes that still reach the app while draining, untracked (they
   * answer at once): `/health` stays 200 while the process runs, and `/ready` says "draining"
   * itself, so that an orchestrator's liveness probe does not kill a pod that is stopping cleanly.
   */
  constructor(
    private readonly app: RequestListener,
    private readonly probePaths: ReadonlySet<string> = new Set(),
  ) {}

  /** What readiness reports: from the moment the stop is announced, before new requests are refused. */
  get isDraining(): boolean {
    return this.draining || this.announced;
  }

  /** The server's request listener: the app, or the 503 while draining. */
  readonly listener: RequestListener = (req, res) => {
    if (this.draining) {
      if (this.isProbe(req)) {
        res.setHeader('Connection', 'close');
        this.app(req, res);
      } else refuse(res);
      return;
    }
    // Announced: the client's next request should open a connection that a balancer sends elsewhere.
    if (this.announced) res.setHeader('Connection', 'close');
    this.inFlight.set(res, req);
    res.once('close', () => {
      if (this.inFlight.delete(res) && this.draining) this.finishedDuringDrain += 1;
    });
    this.app(req, res);
  };

  private isProbe(req: IncomingMessage): boolean {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    return this.probePaths.has(query === -1 ? url : url.slice(0, query));
  }

  /**
   * Drains until nothing is in flight or `deadline` (epoch ms) passes, cuts what is left, then
   * closes the server and every connection. Resolves once the port is released. With
   * `announceMs` (server.drain_delay), readiness says "draining" first while new requests are
   * still served for that long (within the deadline), so that a balancer watching /ready takes
   * this replica out before any request is refused: a rolling restart fails none.
   */
  async drain(server: Server, deadline: number, announceMs = 0): Promise<DrainOutcome> {
    this.announced = true;
    const announceUntil = Math.min(deadline, Date.now() + announceMs);
    if (announceUntil > Date.now()) await delay(announceUntil - Date.now());
    this.draining = true;
    let streamsEnded = 0;
    for (const res of this.inFlight.keys()) {
      // A keep-alive connection would otherwise carry the client's next request into the 503.
      if (!res.headersSent) res.setHeader('Connection', 'close');
    }
    while (this.inFlight.size > 0 && Date.now() < deadline) {
      for (const [res, req] of this.inFlight) {
        if (!isEventStream(req, res)) continue;
        // Destroyed rather than ended: the stream's handler may still write (a keep-alive
        // comment), and writing to an ended response throws where writing to a destroyed one
        // is ignored. Its 'close' ends the handler's watch.
        res.destroy();
        this.inFlight.delete(res);
        streamsEnded += 1;
      }
      if (this.inFlight.size > 0) await delay(Math.min(DRAIN_POLL_MS, Math.max(1, deadline - Date.now())));
    }
    const cut = this.inFlight.size;
    for (const res of this.inFlight.keys()) res.destroy();
    this.inFlight.clear();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return { finished: this.finishedDuringDrain, streamsEnded, cut };
  }
}

function refuse(res: ServerResponse): void {
  res.statusCode = 503;
  res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
  res.setHeader('Connection', 'close');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.end(JSON.stringify({ error: `the server is stopping and takes no new requests; retry in ${RETRY_AFTER_SECONDS} s` }));
}
