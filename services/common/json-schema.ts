import AjvModule, { type ValidateFunction } from 'ajv';
import type { RegExpLike } from 'ajv/dist/types/index.js';
import Ajv2020Module from 'ajv/dist/2020.js';
import { compileSafeRegex } from './safe-regex.js';

/**
 * JSON Schema checks of tool calls: arguments against a tool's `inputSchema` (the orchestrator
 * before it runs a model's call, the broker again as the last stop before the server, since
 * not every caller is the orchestrator) and structured results against `outputSchema`.
 */

/**
 * `pattern` and `patternProperties` of a tool's schema come from its MCP server and are matched
 * against arguments a model wrote, or a human edited before approving: on RE2
 * (safe-regex.ts, linear in the text) rather than the backtracking engine, so that no pattern
 * can hold the event loop. A pattern RE2 cannot run (lookaround, backreferences) leaves the
 * schema uncompiled here, and the server itself stays the judge (validatorFor). A compiled
 * pattern lives as long as its validator; the garbage collector's backstop frees it after.
 */
const safeRegExp = Object.assign(
  (pattern: string, unicode: string): RegExpLike & { toString(): string } => {
    const regex = compileSafeRegex(pattern, { what: 'schema pattern' });
    // ajv keys the patterns of a schema by toString().
    return { test: (text: string) => regex.test(text), toString: () => `/${pattern}/${unicode}` };
  },
  { code: 'compileSafeRegex' },
);

// ajv ships CommonJS; under NodeNext its classes are the `default` of the module namespace.
const options = { allErrors: true, strict: false, validateFormats: false, code: { regExp: safeRegExp } };
const draft07 = new AjvModule.default(options);
// MCP tool schemas default to JSON Schema 2020-12 (the dialect zod and the SDKs emit).
const draft2020 = new Ajv2020Module.default(options);

const validators = new Map<string, ValidateFunction | null>();
const MAX_CACHED_VALIDATORS = 1000;

function validatorFor(schema: Record<string, unknown>): ValidateFunction | undefined {
  const key = JSON.stringify(schema);
  const cached = validators.get(key);
  if (cached !== undefined) return cached ?? undefined;
  let validate: ValidateFunction | null;
  try {
    const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
    validate = (/draft-0[467]/.test(dialect) ? draft07 : draft2020).compile(schema);
  } catch {
    // A schema ajv cannot compile: the server itself remains the judge.
    validate = null;
  }
  if (validators.size >= MAX_CACHED_VALIDATORS) validators.clear();
  validators.set(key, validate);
  return validate ?? undefined;
}

/**
 * What is wrong with `value` under `schema`, readable ("arguments must have required property
 * 'text'"), or undefined when it fits, or when there is no schema or one that cannot compile.
 */
export function schemaProblems(schema: Record<string, unknown> | undefined, value: unknown, dataVar: string): string | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  const validate = validatorFor(schema);
  if (!validate || validate(value)) return undefined;
  return draft2020.errorsText(validate.errors, { dataVar, separator: '; ' });
}

/** The first thing wrong with `value` under `schema` (an edited approval's arguments), or undefined as schemaProblems. */
export function firstSchemaProblem(schema: Record<string, unknown> | undefined, value: unknown, dataVar: string): string | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  const validate = validatorFor(schema);
  if (!validate || validate(value)) return undefined;
  return draft2020.errorsText(validate.errors?.slice(0, 1), { dataVar });
}
