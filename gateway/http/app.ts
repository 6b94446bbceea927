import express, { type Express, type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from '../../services/common/log.js';
import { redactSecrets } from '../../services/common/secrets.js';
import { requestScopeMiddleware } from './request-scope.js';

/**
 * The HTTP application all faces share: request scope (context, span, request log) first,
 * then each adapter's router, then JSON answers for unknown paths and for any error no
 * adapter handled — Express's own fallback would print a stack trace as HTML.
 */
export function createHttpApp(adapters: Router[], log: Logger): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestScopeMiddleware(log));
  for (const adapter of adapters) app.use(adapter);
  app.use((req: Request, res: Response) => {
    res.status(404).json({ error: redactSecrets(`no route for ${req.method} ${req.path}; the API reference is at GET /docs`) });
  });
  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    log.error('unhandled request error', { error: error instanceof Error ? error.message : String(error) });
    if (res.headersSent) return next(error);
    res.status(500).json({ error: 'internal error' });
  });
  return app;
}
