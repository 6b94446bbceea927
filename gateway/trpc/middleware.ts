import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from '../../services/common/log.js';
import { redactSecrets } from '../../services/common/secrets.js';
import { requestScope } from '../http/request-scope.js';
import { BODY_LIMIT_BYTES } from '../app/inputs.js';
import { createAppRouter, type AppRouterDependencies } from './router.js';

/** The path the tRPC router is served under. */
export const TRPC_PATH = '/trpc';

/** `/trpc/<procedure>` for queries and mutations (httpBatchLink) and subscriptions (SSE). */
export function trpcRouter(dependencies: AppRouterDependencies, log: Logger): Router {
  const router = express.Router();
  const markRoute = (req: Request, res: Response, next: NextFunction) => {
    // The procedure names, e.g. "/trpc/conversations.get,tools.list" for a batch.
    requestScope(res).route = `${TRPC_PATH}${req.path}`;
    next();
  };
  const handler = createExpressMiddleware({
    router: createAppRouter(dependencies),
    createContext: ({ res }) => ({ sessionId: requestScope(res).sessionId }),
    maxBodySize: BODY_LIMIT_BYTES,
    onError({ error, path }) {
      // Caller mistakes and outages are answered with their code; only the unexpected is logged.
      if (error.code === 'INTERNAL_SERVER_ERROR')
        log.error('tRPC call failed', { procedure: path ?? '', error: redactSecrets(error.message) });
    },
  });
  router.use(TRPC_PATH, markRoute, handler);
  return router;
}
