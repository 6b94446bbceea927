import { z } from 'zod';
import { invalidArgument } from './grpc/errors.js';

/**
 * The JSON values the mesh stores — a tool call's arguments (the model's, a peer agent's) and
 * what a human sends with a decision (edited arguments, the answer to an MCP server's
 * question) — have one bound, checked where they enter: a face (400 or its equivalent), the
 * orchestrator for the model's calls (the model is told; nothing is stored), the a2a-bridge for
 * a peer's (left out). Past the edge a value is only checked to be a JSON object: one stored
 * before the bound existed still runs and is recorded as it was approved.
 *
 * Between services they travel as JSON text (the `*_json` fields of proto/), never as
 * google.protobuf.Struct: a Struct spends three levels of protobuf nesting per JSON level and
 * decoders stop at 100, so a value decoded on its way in could fail every later read. So the
 * bound is not the wire's: it is what a call's arguments plausibly need, and a ceiling on the
 * work one value costs everything that reads it. The byte bound is the largest body a face
 * reads (gateway/app/inputs.ts), so anything a human can send a model can send, and no more.
 */
export const JSON_VALUE_LIMITS = {
  /** Nesting of objects and arrays; the value itself is level 1 (`{}` is 1, `{"a":[1]}` is 2). */
  depth: 32,
  /** Its JSON text, UTF-8. */
  bytes: 1024 * 1024,
} as const;

export type JsonObject = Record<string, unknown>;

/** True when `value` nests objects and arrays deeper than `limit`. Iterative: no input depth can overflow the stack. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

const depthProblem = (what: string) =>
  `${what} must not nest objects and arrays more than ${JSON_VALUE_LIMITS.depth} levels deep (the limit of a stored JSON value)`;
const sizeProblem = (what: string, bytes: number) =>
  `${what} must be at most ${JSON_VALUE_LIMITS.bytes} bytes of JSON (the limit of a stored JSON value), not ${bytes}`;

/**
 * The JSON text of `value` when it is within JSON_VALUE_LIMITS, else what keeps it from being
 * stored. The depth is checked first: only a value that any JSON code can walk is stringified.
 */
function boundedText(value: unknown, what: string): { text: string } | { problem: string } {
  if (nestsDeeperThan(value, JSON_VALUE_LIMITS.depth)) return { problem: depthProblem(what) };
  const text = JSON.stringify(value) ?? '';
  const bytes = Buffer.byteLength(text);
  return bytes > JSON_VALUE_LIMITS.bytes ? { problem: sizeProblem(what, bytes) } : { text };
}

/** What keeps `value` from being stored, as a sentence about `what` ("arguments"), or undefined when it is within JSON_VALUE_LIMITS. */
export function jsonValueProblem(value: unknown, what: string): string | undefined {
  const bounded = boundedText(value, what);
  return 'problem' in bounded ? bounded.problem : undefined;
}

export type ReadJsonObject = { ok: true; value: JsonObject } | { ok: false; problem: string };

/** The JSON object `text` is the text of, whatever its size; the problem says what it is instead. */
export function parseJsonObject(text: string, what: string): ReadJsonObject {
  let value: unknown;
  try {
    // JSON.parse does not recurse: any depth parses.
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `${what} must be valid JSON (${(error as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, problem: `${what} must be a JSON object` };
  return { ok: true, value: value as JsonObject };
}

/**
 * A JSON object given as text, within JSON_VALUE_LIMITS: a decision's `*_json` field as the
 * orchestrator takes it, and the model's arguments. The problem says what is wrong otherwise.
 */
export function readJsonObjectText(text: string, what: string): ReadJsonObject {
  const bytes = Buffer.byteLength(text);
  if (bytes > JSON_VALUE_LIMITS.bytes) return { ok: false, problem: sizeProblem(what, bytes) };
  const read = parseJsonObject(text, what);
  if (read.ok && nestsDeeperThan(read.value, JSON_VALUE_LIMITS.depth)) return { ok: false, problem: depthProblem(what) };
  return read;
}

/**
 * The text of a JSON object to send in a `*_json` field; INVALID_ARGUMENT naming the limit
 * when it is over JSON_VALUE_LIMITS (a face's 400), so that nothing over them leaves the edge.
 */
export function jsonObjectText(value: JsonObject, what: string): string {
  const bounded = boundedText(value, what);
  if ('problem' in bounded) throw invalidArgument(bounded.problem);
  return bounded.text;
}

/**
 * The object of a `*_json` field as a service sent it (an object's text, checked where it was
 * stored); absent or empty text reads as no arguments.
 */
export function jsonObjectOf(text: string | undefined): JsonObject {
  return text ? (JSON.parse(text) as JsonObject) : {};
}

/** A `*_json` field for zod: the text of a JSON object, so that every reader can parse what is stored. */
export function jsonObjectTextSchema(what: string) {
  return z.string().superRefine((text, ctx) => {
    const read = parseJsonObject(text, what);
    if (!read.ok) ctx.addIssue({ code: 'custom', message: read.problem });
  });
}
