import { join } from 'node:path';
import { AGENT_SCHEMA, jsonSchemaText, type SchemaMeta } from '../services/common/config/json-schema.js';
import { configSchema } from '../services/common/config/schema.js';
import { filesystemFileSchema } from '../services/mcp-filesystem/config.js';
import { webConfigSchema } from '../gateway/web/config.js';

/**
 * The JSON Schemas of every kind of configuration file, written to config/ by
 * scripts/write-config-schema.ts and named by the `# yaml-language-server: $schema=…` first
 * line of each shipped file (editor completion; `asg config check` picks the kind by it too).
 */
export const CONFIG_SCHEMAS: readonly (SchemaMeta & { schema: Parameters<typeof jsonSchemaText>[0] })[] = [
  { ...AGENT_SCHEMA, schema: configSchema },
  { title: 'Agent Stop and Go: web chat configuration (asg web, web.yaml)', file: 'web.schema.json', schema: webConfigSchema },
  {
    title: 'Agent Stop and Go: mcp-filesystem configuration (asg mcp-filesystem, filesystem.yaml)',
    file: 'filesystem.schema.json',
    schema: filesystemFileSchema,
  },
];

/** Each schema file's path under `configDir` and the text the code generates for it. */
export function generatedSchemaFiles(configDir: string): { path: string; text: string }[] {
  return CONFIG_SCHEMAS.map(({ schema, ...meta }) => ({ path: join(configDir, meta.file), text: jsonSchemaText(schema, meta) }));
}
