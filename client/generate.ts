import openapiTS, { astToString } from 'openapi-typescript';
import { openApiDocument } from '../gateway/openapi/document.js';

/**
 * The typed client's types, generated from the gateway's OpenAPI document (what
 * `GET /openapi.json` serves) by openapi-typescript. Committed as client/openapi.ts, so that the
 * client needs no build step to be read; a test fails while the committed file differs from
 * what the document generates (`npm run client:types` writes it anew).
 */

export const CLIENT_TYPES_FILE = 'client/openapi.ts';

const HEADER = `/**
 * The REST API's types, generated from the OpenAPI document (GET /openapi.json) by
 * openapi-typescript: do not edit; \`npm run client:types\` writes this file anew.
 */

`;

export async function clientTypesText(): Promise<string> {
  // The document as it is served: JSON, without the zod schemas' runtime objects.
  const document = JSON.parse(JSON.stringify(openApiDocument()));
  const ast = await openapiTS(document, { alphabetize: false, exportType: false });
  return HEADER + astToString(ast);
}
