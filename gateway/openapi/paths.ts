/** Where the document and the reference are served; apart so that naming them loads neither. */
export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';
