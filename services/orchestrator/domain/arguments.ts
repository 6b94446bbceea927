import AjvModule, { type ValidateFunction } from 'ajv';
import Ajv2020Module from 'ajv/dist/2020.js';

// ajv ships CommonJS; under NodeNext its classes are the `default` of the module namespace.
const options = { allErrors: true, strict: false, validateFormats: false };
const draft07 = new AjvModule.default(options);
// MCP tool schemas default to JSON Schema 2020-12 (the dialect zod and the SDKs emit).
const draft2020 = new Ajv2020Module.default(options);

function validatorEngine(schema: Record<string, unknown>) {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  return /draft-0[467]/.test(dialect) ? draft07 : draft2020;
}
const validators = new Map<string, ValidateFunction>();
const MAX_CACHED_VALIDATORS = 1000;

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

function validatorFor(schema: Record<string, unknown>): ValidateFunction | undefined {
  const key = JSON.stringify(schema);
  const cached = validators.get(key);
  if (cached) return cached;
  let validate: ValidateFunction;
  try {
    validate = validatorEngine(schema).compile(schema);
  } catch {
    // A server with a schema ajv cannot compile: the server itself remains the judge.
    return undefined;
  }
  if (validators.size >= MAX_CACHED_VALIDATORS) validators.clear();
  validators.set(key, validate);
  return validate;
}

/** Checks arguments against the tool's JSON Schema; returns a readable reason when they fail. */
export function checkArguments(schema: Record<string, unknown> | undefined, args: Record<string, unknown>): string | undefined {
  if (!schema) return undefined;
  const validate = validatorFor(schema);
  if (!validate || validate(args)) return undefined;
  return draft2020.errorsText(validate.errors, { dataVar: 'arguments', separator: '; ' });
}
