import { z } from 'zod';
import { configSchema } from './schema.js';

/**
 * The JSON Schema of agent.yaml (and of the other configuration files), generated
 * from the zod schema with zod's own `toJSONSchema`, so editors complete and check the same
 * fields startup accepts. It describes what a file may say (zod's input side: a duration is a
 * number of seconds or "30s"). The defaults zod leaves out on that side (a duration's, known
 * only parsed, in milliseconds; some records' and lists') are written back in the file's form. `config/*.schema.json` are these, written by scripts/write-config-schema.ts
 * and compared with them by a test.
 */

type JsonSchema = {
  [key: string]: unknown;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  default?: unknown;
};

export interface SchemaMeta {
  title: string;
  /** The file the schema is written to, in config/ (and its $id). */
  file: string;
}

/** The JSON Schema of a configuration file's zod schema, with the defaults in the file's own form. */
function jsonSchemaOf(schema: z.ZodType, meta: SchemaMeta): JsonSchema {
  const generated = z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    // A duration's default is its parsed value (ms), which zod leaves out on the input side: say it as a file would.
    override: ({ zodSchema, jsonSchema }) => {
      if (!(zodSchema instanceof z.ZodDefault)) return;
      const { defaultValue } = zodSchema.def;
      if (typeof defaultValue === 'number' && jsonSchema.default === undefined && isDuration(jsonSchema as JsonSchema))
        jsonSchema.default = formatDuration(defaultValue);
    },
  }) as JsonSchema;
  // zod numbers recursive schemas; the agent tree's node is the only one.
  const renamed = JSON.parse(JSON.stringify(generated).replaceAll('#/$defs/__schema0', '#/$defs/agentNode')) as JsonSchema;
  const defs = renamed.$defs as Record<string, JsonSchema> | undefined;
  if (defs?.__schema0) {
    defs.agentNode = defs.__schema0;
    delete defs.__schema0;
  }
  const defaults = schema.safeParse({});
  if (defaults.success) addDefaults(renamed, defaults.data);
  return {
    $schema: renamed.$schema,
    $id: `https://agent-stop-and-go.dev/config/${meta.file}`,
    title: meta.title,
    description: 'Generated from the zod schema by scripts/write-config-schema.ts; docs/configuration.md says what each field means.',
    ...Object.fromEntries(Object.entries(renamed).filter(([key]) => key !== '$schema')),
  };
}

export function jsonSchemaText(schema: z.ZodType, meta: SchemaMeta): string {
  return `${JSON.stringify(jsonSchemaOf(schema, meta), null, 2)}\n`;
}

/** The agent configuration's: config/agent.schema.json. */
export const AGENT_SCHEMA: SchemaMeta = { title: 'Agent Stop and Go: agent configuration (agent.yaml)', file: 'agent.schema.json' };

export function agentJsonSchema(): JsonSchema {
  return jsonSchemaOf(configSchema, AGENT_SCHEMA);
}

/** A duration field: a number of seconds or a string with a unit (duration.ts). */
export function isDuration(schema: JsonSchema): boolean {
  const options = schema.anyOf ?? [];
  return (
    options.some((option) => typeof option.pattern === 'string' && option.pattern.includes('(ms|s|m|h|d)')) || options.some(isDuration)
  );
}

/** 300000 → "5m", 60000 → "60s", 1500 → "1500ms": a unit that says it exactly, minutes from 2 on. */
function formatDuration(ms: number): number | string {
  if (ms === 0) return 0;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 60_000) return `${ms / 60_000}m`;
  return ms % 1_000 === 0 ? `${ms / 1_000}s` : `${ms}ms`;
}

/** Fills in the defaults of the parsed empty configuration where the generated schema has none. */
function addDefaults(schema: JsonSchema, defaults: unknown): void {
  if (!schema.properties || typeof defaults !== 'object' || defaults === null) return;
  for (const [key, property] of Object.entries(schema.properties)) {
    const value = (defaults as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (property.default === undefined)
      property.default = typeof value === 'number' && isDuration(property) ? formatDuration(value) : value;
    addDefaults(property, value);
  }
}
