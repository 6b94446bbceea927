/** Where the document and the reference are served; apart so that naming them loads neither. */
export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';
/** Scalar's browser bundle, served by the gateway so that /docs works with no network. */
export const DOCS_SCRIPT_PATH = '/docs/scalar.js';
