import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import { capText, type Logger } from '../../services/common/log.js';
import { redactSecrets } from '../../services/common/secrets.js';
import { isForbiddenWebMethod } from '../../services/common/web-http.js';
import { failureOf } from '../app/errors.js';
import { crossSiteGuard, LOOPBACK_SETTINGS, type CrossSiteSettings } from './cross-site.js';
import { requestScopeMiddleware } from './request-scope.js';

/**
 * Refuses a path that is not valid percent-encoding (RFC 3986 §2.1: "%zz", a cut UTF-8
 * sequence) with 400 before any face sees it: routers decode their parameters and would
 * otherwise each fail in their own way (the events route would answer 500).
 */
export function undecodablePathGuard() {
  return (req: Request, res: Response, next: NextFunction) => {
    try {
      decodeURIComponent(req.path);
    } catch {
      res.status(400).json({ error: 'the request path is not valid percent-encoding (a "%" must be followed by two hex digits of UTF-8)' });
      return;
    }
    next();
  };
}

/**
 * TRACE is answered 405 on every path, before any face: no route serves it, and the faces that
 * hand a request on as a web Request (tRPC, MCP) cannot even make one of it — fetch forbids
 * the method (services/common/web-http.ts) — which made it a 500.
 */
export function traceGuard() {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!isForbiddenWebMethod(req.method)) return next();
    res.status(405).json({ error: `${req.method} is not allowed on any route of this server` });
  };
}

/**
 * The last error handler of a server: failures no adapter answered, in the `{"error"}` shape.
 * A client's mistake that reached here (a body parser's refusal, an undecodable parameter) keeps
 * its 4xx and is not logged as an error — its text is the caller's; anything else is a 500 with
 * a generic answer, logged (capped, like every log value).
 */
export function finalErrorHandler(log: Logger) {
  return (error: unknown, _req: Request, res: Response, next: NextFunction) => {
    const failure = failureOf(error);
    if (failure.unexpected) log.error('unhandled request error', { error: error instanceof Error ? error.message : String(error) });
    if (res.headersSent) return next(error);
    if (failure.unexpected) res.status(500).json({ error: 'internal error' });
    else res.status(failure.status).json({ error: failure.message });
  };
}

/**
 * The HTTP application all faces share: request scope (context, span, request log) first,
 * then the cross-site guard (Host, Origin, Content-Type; see cross-site.ts), the path check
 * and the refusal of TRACE,
 * then authentication (`authGate`, gateway/auth/middleware.ts; none for servers without it),
 * then each adapter's router, then JSON answers for unknown paths and for any error no
 * adapter handled — Express's own fallback would print a stack trace as HTML.
 * Without `site` the guard takes a loopback listener with nothing configured.
 */
export function createHttpApp(
  adapters: Router[],
  log: Logger,
  site: CrossSiteSettings = LOOPBACK_SETTINGS,
  authGate?: RequestHandler,
): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestScopeMiddleware(log));
  app.use(crossSiteGuard(site, log));
  app.use(undecodablePathGuard());
  app.use(traceGuard());
  if (authGate) app.use(authGate);
  for (const adapter of adapters) app.use(adapter);
  app.use((req: Request, res: Response) => {
    res
      .status(404)
      .json({ error: redactSecrets(`no route for ${req.method} ${capText(req.path, 200)}; the API reference is at GET /docs`) });
  });
  app.use(finalErrorHandler(log));
  return app;
}
