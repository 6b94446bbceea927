import { apiReference } from '@scalar/express-api-reference';
import { OPENAPI_PATH } from './paths.js';

/**
 * `GET /docs`: Scalar's interactive reference over `/openapi.json`.
 *
 * Scalar's page is a script that runs in the reader's browser. Neither
 * @scalar/express-api-reference nor @scalar/core ships that script (only the HTML around
 * it), so it comes from the jsDelivr CDN, pinned to one version so that the page does not
 * change under us. The gateway sets no Content-Security-Policy, so nothing blocks it; a
 * browser that cannot reach the CDN keeps the fallback text below, which points to
 * /openapi.json (served by the gateway itself, offline too). Scalar's telemetry, its web fonts
 * (another CDN) and its AI agent are off.
 */

export const SCALAR_SCRIPT_URL = 'https://cdn.jsdelivr.net/npm/@scalar/api-reference@1.76.0';

const FALLBACK =
  '<p style="font:15px system-ui,sans-serif;margin:2rem">Loading the API reference (its script comes from cdn.jsdelivr.net)… ' +
  `If it does not appear, this browser cannot reach the CDN: the OpenAPI document is at <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a>.</p>`;

/** The page's HTML, rendered once: it depends on nothing but this module. */
export function docsPage(): string {
  let html = '';
  // The package offers only an Express handler; it is asked once for the HTML it sends.
  const collect = {
    type: () => collect,
    send: (body: string) => {
      html = body;
    },
  };
  const handler = apiReference({
    url: OPENAPI_PATH,
    cdn: SCALAR_SCRIPT_URL,
    pageTitle: 'Agent Stop and Go — API reference',
    telemetry: false,
    withDefaultFonts: false,
    agent: { disabled: true },
  });
  handler(...([{}, collect, () => undefined] as unknown as Parameters<typeof handler>));
  // Scalar mounts into #app and replaces what is there: the fallback shows only until it does.
  return html.replace('<div id="app"></div>', `<div id="app">${FALLBACK}</div>`);
}
