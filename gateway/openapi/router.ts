import express, { type Router } from 'express';
import type { Logger } from '../../services/common/log.js';
import { mountEndpoint, restErrorHandler } from '../rest/endpoint.js';
import { DOCS_PATH, OPENAPI_PATH } from './paths.js';

/**
 * `GET /openapi.json` and `GET /docs`. Both are built on first use and kept: they describe the
 * routes, which do not change while the process runs. Their modules (zod-openapi, Scalar, the
 * schemas and examples) are imported then too, not at startup, which they would lengthen by
 * a good part for a page few ask for.
 */
export function openApiRouter(log: Logger): Router {
  const router = express.Router();
  let docs: string | undefined;
  const docsPage = async (): Promise<string> => {
    docs ??= (await import('./docs-page.js')).docsPage();
    return docs;
  };
  mountEndpoint(
    router,
    {
      method: 'get',
      path: OPENAPI_PATH,
      session: 'none',
      handle: async () => ({ status: 200, body: (await import('./document.js')).openApiDocument() }),
    },
    log,
  );
  mountEndpoint(
    router,
    { method: 'get', path: DOCS_PATH, session: 'none', handle: async () => ({ status: 200, html: await docsPage() }) },
    log,
  );
  router.use(restErrorHandler(log));
  return router;
}
