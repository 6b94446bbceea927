import { SpanStatusCode } from '@opentelemetry/api';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { A2A_HOPS_HEADER, parseA2aHops, runWithContext, type RequestContext } from '../../services/common/context.js';
import type { Logger } from '../../services/common/log.js';
import { recordError } from '../../services/common/metrics.js';
import { newSessionId, parseSessionId } from '../../services/common/session-id.js';
import { entryTraceContext, SESSION_ATTRIBUTE, SpanKind, withSpan } from '../../services/common/telemetry.js';

/**
 * What the gateway knows about one HTTP request while serving it, shared by every
 * adapter: the effective session id (the caller's X-Session-ID, else one made here) and the route that matched.
 */
export interface RequestScope {
  /** 8 lowercase hex characters, or empty while not known yet. */
  sessionId: string;
  /** The matched route pattern, e.g. "/conversations/:id"; unset for unknown paths. */
  route?: string;
  /** The conversation the route names (`/conversations/:id…`), for the request's log line. */
  conversationId?: string;
}

const SESSION_HEADER = 'X-Session-ID';

const scopes = new WeakMap<Response, RequestScope>();

export function requestScope(res: Response): RequestScope {
  let scope = scopes.get(res);
  if (!scope) {
    scope = { sessionId: '' };
    scopes.set(res, scope);
  }
  return scope;
}

/** Makes `sessionId` the request's effective session id and echoes it to the caller. */
export function adoptSessionId(res: Response, sessionId: string): void {
  requestScope(res).sessionId = sessionId;
  if (sessionId && !res.headersSent) res.setHeader(SESSION_HEADER, sessionId);
}

// nginx's convention for "the client went away before the answer was sent".
const CLIENT_CLOSED_REQUEST = 499;

function responseDone(res: Response): Promise<number> {
  return new Promise((resolve) => {
    res.once('close', () => resolve(res.writableFinished ? res.statusCode : CLIENT_CLOSED_REQUEST));
  });
}

/**
 * The first middleware of every request. It
 * - sets the request context the gRPC clients forward as metadata: the caller's session id
 *   when well-formed (left empty otherwise; routes decide whether to make one), and the
 *   caller's Authorization header, which is forwarded but never logged or echoed;
 * - opens a SERVER span whose parent is the caller's `traceparent`, so the gRPC calls made
 *   while serving (CLIENT spans under it) share one trace id across all services;
 * - writes one log line when the response is done: method, path (no query), status,
 *   duration, the effective session id and the conversation the route named (its trace id
 *   comes with the span); a 5xx also counts in `asg_errors_total{kind="http_5xx"}`. Nothing else about the request is logged.
 */
export function requestScopeMiddleware(log: Logger): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    const method = req.method;
    // Captured now: routers rewrite req.url while dispatching.
    const path = req.path;
    const scope = requestScope(res);
    adoptSessionId(res, parseSessionId(req.get(SESSION_HEADER)) ?? '');
    const context: RequestContext = {
      sessionId: scope.sessionId,
      authorization: req.get('authorization') || undefined,
      a2aHops: parseA2aHops(req.get(A2A_HOPS_HEADER)),
    };
    const parent = entryTraceContext((key) => req.get(key));

    void withSpan(
      'gateway',
      method,
      SpanKind.SERVER,
      { 'http.request.method': method, 'url.path': path },
      async (span) => {
        const done = responseDone(res);
        runWithContext(context, () => next());
        const status = await done;
        // A request that never learnt a conversation's id (unknown path, unknown id) still
        // gets one of its own, made here at the entry point, so every line carries a sid.
        if (!scope.sessionId) scope.sessionId = newSessionId();
        if (scope.route) {
          span.updateName(`${method} ${scope.route}`);
          span.setAttribute('http.route', scope.route);
        }
        span.setAttribute('http.response.status_code', status);
        if (scope.sessionId) span.setAttribute(SESSION_ATTRIBUTE, scope.sessionId);
        // OpenTelemetry HTTP conventions: only 5xx marks a server span as failed.
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${status}` });
        const fields = {
          method,
          path,
          status,
          ms: Math.round(performance.now() - started),
          session_id: scope.sessionId,
          conversation_id: scope.conversationId,
        };
        if (status >= 500) recordError('http_5xx');
        if (status >= 500) log.warn('request', fields);
        else log.info('request', fields);
      },
      parent,
    ).catch((error: unknown) => {
      log.error('request bookkeeping failed', { error: error instanceof Error ? error.message : String(error) });
    });
  };
}
