import { schemaProblems } from '../../common/json-schema.js';

export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/** Parses the model's arguments; they must be a JSON object. */
export function parseArguments(json: string): ParsedArguments {
  const text = json.trim() === '' ? '{}' : json;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `the arguments are not valid JSON (${(error as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, error: 'the arguments must be a JSON object' };
  return { ok: true, value: value as Record<string, unknown> };
}

/** Checks arguments against the tool's JSON Schema; returns a readable reason when they fail. */
export function checkArguments(schema: Record<string, unknown> | undefined, args: Record<string, unknown>): string | undefined {
  return schemaProblems(schema, args, 'arguments');
}
