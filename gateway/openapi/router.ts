import express, { type Router } from 'express';
import type { Logger } from '../../services/common/log.js';
import { mountEndpoint, restErrorHandler } from '../rest/endpoint.js';
import { DOCS_PATH, docsPage } from './docs-page.js';
import { OPENAPI_PATH, openApiDocument } from './document.js';

/**
 * `GET /openapi.json` and `GET /docs`. Both are built on first use and kept: they describe the
 * routes, which do not change while the process runs, and building them at startup would
 * lengthen every cold start for a page few ask for.
 */
export function openApiRouter(log: Logger): Router {
  const router = express.Router();
  let docs: string | undefined;
  mountEndpoint(router, { method: 'get', path: OPENAPI_PATH, session: 'none', handle: async () => ({ status: 200, body: openApiDocument() }) }, log);
  mountEndpoint(router, { method: 'get', path: DOCS_PATH, session: 'none', handle: async () => ({ status: 200, html: (docs ??= docsPage()) }) }, log);
  router.use(restErrorHandler(log));
  return router;
}
