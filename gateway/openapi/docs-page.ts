import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { apiReference } from '@scalar/express-api-reference';
import { DOCS_SCRIPT_PATH, OPENAPI_PATH } from './paths.js';

/**
 * `GET /docs`: Scalar's interactive reference over `/openapi.json`.
 *
 * Scalar's page is a script that runs in the reader's browser. Neither
 * @scalar/express-api-reference nor @scalar/core ships that script (only the HTML around
 * it), so the build copies the standalone browser bundle of @scalar/api-reference (a
 * development dependency, pinned) beside this module, and the gateway serves it at
 * /docs/scalar.js: the page needs no network beyond the gateway itself, and the product no
 * Scalar package at run time. Scalar's telemetry, its web fonts (a CDN) and its AI agent are
 * off.
 */

/** Where the build puts the bundle: beside this module in dist/ (package.json "build"). */
const BUILT_SCRIPT = fileURLToPath(new URL('./scalar-api-reference.js', import.meta.url));
/** Run from the sources (tsx, the tests), the bundle is read where npm installed it. */
const SOURCE_SCRIPT = fileURLToPath(new URL('../../node_modules/@scalar/api-reference/dist/browser/standalone.js', import.meta.url));

/** The bundle's file, or undefined when neither a build nor an install has it. */
export function docsScriptFile(): string | undefined {
  return [BUILT_SCRIPT, SOURCE_SCRIPT].find((file) => existsSync(file));
}

const FALLBACK =
  '<p style="font:15px system-ui,sans-serif;margin:2rem">Loading the API reference… ' +
  `If it does not appear, the OpenAPI document is at <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a>.</p>`;

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
    cdn: DOCS_SCRIPT_PATH,
    pageTitle: 'Agent Stop and Go — API reference',
    telemetry: false,
    withDefaultFonts: false,
    agent: { disabled: true },
  });
  handler(...([{}, collect, () => undefined] as unknown as Parameters<typeof handler>));
  // Scalar mounts into #app and replaces what is there: the fallback shows only until it does.
  return html.replace('<div id="app"></div>', `<div id="app">${FALLBACK}</div>`);
}
