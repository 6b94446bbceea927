/**
 * Writes config/agent.schema.json (and web.schema.json, filesystem.schema.json) from the zod
 * schemas:
 *   node --import tsx scripts/write-config-schema.ts
 * Run it after changing a configuration schema; a test fails while a committed file differs
 * from what the code generates.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedSchemaFiles } from '../cli/config-schemas.js';

for (const { path, text } of generatedSchemaFiles(join(dirname(fileURLToPath(import.meta.url)), '..', 'config'))) {
  writeFileSync(path, text);
  process.stdout.write(`wrote ${path}\n`);
}
