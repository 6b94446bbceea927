import express, { type Router } from 'express';
import type { Logger } from '../../services/common/log.js';
import { mountEndpoint, restErrorHandler } from '../rest/endpoint.js';
import { DOCS_PATH, DOCS_SCRIPT_PATH, OPENAPI_PATH } from './paths.js';

/**
 * `GET /openapi.json`, `GET /docs` and the page's script. The document and the page are built on
 * first use and kept: they describe the routes, which do not change while the process runs. Their modules (zod-openapi, Scalar, the
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
  // The page's script, from the package: /docs renders with no network beyond the gateway.
  router.get(DOCS_SCRIPT_PATH, async (_req, res, next) => {
    const file = (await import('./docs-page.js')).docsScriptFile();
    if (!file) {
      res.status(404).json({ error: 'the API reference script is not built (npm run build); /openapi.json has the document' });
      return;
    }
    // Its name holds no version: a day's cache, so that a new build is seen the next day at the latest.
    res
      .type('text/javascript')
      .set('Cache-Control', 'public, max-age=86400')
      .sendFile(file, (error) => error && next(error));
  });
  router.use(restErrorHandler(log));
  return router;
}
