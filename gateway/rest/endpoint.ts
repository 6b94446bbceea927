import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { parseConversationId, withContextPatch } from '../../services/common/context.js';
import type { Logger } from '../../services/common/log.js';
import { newSessionId } from '../../services/common/session-id.js';
import { adoptSessionId, requestScope } from '../http/request-scope.js';
import { BODY_LIMIT_BYTES, JSON_BODY_TYPES } from '../app/inputs.js';
import type { RestReply } from '../app/replies.js';
import { errorReply } from './error-reply.js';

/**
 * One REST route: how it gets its session id, whether it reads a JSON body, and a handler
 * that turns the request into a reply. Mounting takes care of everything around it —
 * route marking for logs and traces, body parsing, the session id, the response and the
 * mapping of failures — so each handler is only the route's own logic.
 */
export interface Endpoint {
  method: 'get' | 'post' | 'delete';
  path: string;
  /**
   * `conversation`: about an existing conversation; without a caller's id the orchestrator
   * uses the conversation's stored one, learnt from the reply.
   * `new`: starts work of its own; without a caller's id one is made here, at the entry point.
   * `none`: reaches no other service; it still gets a session id of its own for its log line.
   */
  session: 'conversation' | 'new' | 'none';
  jsonBody?: boolean;
  handle(req: Request): Promise<EndpointReply>;
}

type EndpointReply = RestReply<unknown> | { status: number; html: string };

// JSON only (app/inputs.ts). Not strict: a body that is valid JSON but not an object
// ("hi", 42) reaches the route's own validation, which says what was expected instead of
// calling it malformed.
const jsonBody = express.json({ limit: BODY_LIMIT_BYTES, type: JSON_BODY_TYPES, strict: false });

function sendErrorReply(res: Response, error: unknown, log: Logger): void {
  const reply = errorReply(error);
  if (reply.unexpected) log.error('request failed', { route: requestScope(res).route, error: reply.body.error });
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  res.status(reply.status).json(reply.body);
}

export function mountEndpoint(router: Router, endpoint: Endpoint, log: Logger): void {
  const markRoute = (req: Request, res: Response, next: NextFunction) => {
    const scope = requestScope(res);
    scope.route = endpoint.path;
    if (endpoint.path.startsWith('/conversations/:id')) scope.conversationId = parseConversationId(String(req.params.id));
    next();
  };
  const serve = async (req: Request, res: Response) => {
    const scope = requestScope(res);
    if (endpoint.session !== 'conversation' && !scope.sessionId) adoptSessionId(res, newSessionId());
    try {
      const reply = await withContextPatch({ sessionId: scope.sessionId, conversationId: scope.conversationId }, () =>
        endpoint.handle(req),
      );
      if ('html' in reply) {
        res.status(reply.status).type('html').send(reply.html);
        return;
      }
      if (reply.sessionId && !scope.sessionId) adoptSessionId(res, reply.sessionId);
      if (reply.status === 204) res.status(204).end();
      else res.status(reply.status).json(reply.body);
    } catch (error) {
      sendErrorReply(res, error, log);
    }
  };
  const handlers = endpoint.jsonBody ? [markRoute, jsonBody, serve] : [markRoute, serve];
  router[endpoint.method](endpoint.path, ...handlers);
}

/** Failures before a handler ran (unreadable body, undecodable path) in the REST shape. */
export function restErrorHandler(log: Logger) {
  return (error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    sendErrorReply(res, error, log);
  };
}
