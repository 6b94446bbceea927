import { schemaProblems } from '../../common/json-schema.js';
import { readJsonObjectText } from '../../common/json-value.js';

export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/**
 * Parses the model's arguments: a JSON object within the limits of a stored JSON value, since
 * the call is stored with its arguments. Anything else is the model's mistake, told to it as
 * the call's error result; nothing of it is stored.
 */
export function parseArguments(json: string): ParsedArguments {
  const read = readJsonObjectText(json.trim() === '' ? '{}' : json, 'the arguments');
  return read.ok ? { ok: true, value: read.value } : { ok: false, error: read.problem };
}

/** Checks arguments against the tool's JSON Schema; returns a readable reason when they fail. */
export function checkArguments(schema: Record<string, unknown> | undefined, args: Record<string, unknown>): string | undefined {
  return schemaProblems(schema, args, 'arguments');
}
