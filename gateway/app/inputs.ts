/**
 * What every face accepts, so that REST, A2A, tRPC, MCP and the web chat's `/api` routes agree
 * on one size and one set of media types (the faces share the app layer, not each other).
 */

/** The largest request body any face reads; past it the answer is 413 (or the face's equivalent). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

// JSON only: a body labelled text/plain or as a form is what a web page can send
// cross-site without a preflight; the cross-site guard answers those with 415 before a
// parser runs, and the parsers agree.
export const JSON_BODY_TYPES = ['application/json', 'application/*+json'];

/** Conversations per page of a listing (REST `?limit=`, tRPC `conversations.list`). */
export const MAX_PAGE_SIZE = 500;
export const DEFAULT_PAGE_SIZE = 50;

/**
 * The refusal of fields a body does not take (bodies are strict), naming them so that
 * a misspelt field ("mesage") is found at once instead of being silently ignored.
 */
export function unknownFieldsMessage(keys: readonly string[]): string {
  const named = keys
    .slice(0, 10)
    .map((key) => JSON.stringify(key.slice(0, 60)))
    .join(', ');
  const more = keys.length > 10 ? ` and ${keys.length - 10} more` : '';
  return `unknown field${keys.length === 1 ? '' : 's'} ${named}${more}`;
}
