/**
 * Writes client/openapi.ts, the typed client's types, from the gateway's OpenAPI document:
 *   npm run client:types
 * Run it after changing a route or a response shape; a test fails while the committed file
 * differs from what the document generates.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT_TYPES_FILE, clientTypesText } from '../client/generate.js';

const path = join(import.meta.dirname, '..', CLIENT_TYPES_FILE);
writeFileSync(path, await clientTypesText());
process.stdout.write(`wrote ${path}\n`);
