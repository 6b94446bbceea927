import { describe, expect, it } from 'vitest';
import { GrpcStatus, ServiceError } from './grpc/errors.js';
import {
  JSON_VALUE_LIMITS,
  jsonObjectOf,
  jsonObjectText,
  jsonObjectTextSchema,
  jsonValueProblem,
  parseJsonObject,
  readJsonObjectText,
} from './json-value.js';

/** JSON text of `levels` containers, each in the one before; `open`/`close` pick objects or arrays. */
const nestedText = (levels: number, open = '{"a":', close = '}', leaf = '1') => open.repeat(levels) + leaf + close.repeat(levels);
const nested = (levels: number, open?: string, close?: string) => JSON.parse(nestedText(levels, open, close)) as unknown;

describe('the bound of a stored JSON value', () => {
  it('counts objects and arrays alike, the value itself as level 1', () => {
    expect(JSON_VALUE_LIMITS.depth).toBe(32);
    expect(jsonValueProblem({}, 'x')).toBeUndefined();
    expect(jsonValueProblem(nested(32), 'x')).toBeUndefined();
    expect(jsonValueProblem(nested(32, '[', ']'), 'x')).toBeUndefined();
    expect(jsonValueProblem({ list: nested(31, '[', ']') }, 'x')).toBeUndefined();
    expect(jsonValueProblem(nested(33), '"arguments"')).toBe(
      '"arguments" must not nest objects and arrays more than 32 levels deep (the limit of a stored JSON value)',
    );
    expect(jsonValueProblem(nested(33, '[', ']'), 'x')).toMatch(/more than 32 levels deep/);
    expect(jsonValueProblem({ list: [nested(31)] }, 'x')).toMatch(/more than 32 levels deep/);
    // Scalars take no level: a string of brackets is one value.
    expect(jsonValueProblem({ text: '['.repeat(1000) }, 'x')).toBeUndefined();
  });

  it('judges any depth without overflowing the stack, and only a bounded value is ever stringified', () => {
    const text = nestedText(400_000, '[', ']');
    expect(() => JSON.stringify(JSON.parse(text))).toThrow(RangeError);
    expect(jsonValueProblem(JSON.parse(text), 'x')).toMatch(/more than 32 levels deep/);
    expect(readJsonObjectText(`{"a":${text}}`, 'x')).toEqual({ ok: false, problem: expect.stringMatching(/more than 32 levels deep/) });
  });

  it('bounds the bytes of its JSON text (UTF-8)', () => {
    const fits = { text: 'x'.repeat(JSON_VALUE_LIMITS.bytes - 11) };
    expect(Buffer.byteLength(JSON.stringify(fits))).toBe(JSON_VALUE_LIMITS.bytes);
    expect(jsonValueProblem(fits, 'x')).toBeUndefined();
    expect(jsonValueProblem({ text: 'é'.repeat(JSON_VALUE_LIMITS.bytes / 2) }, 'the arguments')).toBe(
      `the arguments must be at most 1048576 bytes of JSON (the limit of a stored JSON value), not ${JSON_VALUE_LIMITS.bytes + 11}`,
    );
    expect(readJsonObjectText(JSON.stringify({ text: 'x'.repeat(JSON_VALUE_LIMITS.bytes) }), 'x')).toEqual({
      ok: false,
      problem: expect.stringMatching(/at most 1048576 bytes/),
    });
  });
});

describe('JSON objects as text', () => {
  it('reads the text of an object, within the bound or whatever its size', () => {
    expect(readJsonObjectText('{"a":[1,{"b":null}]}', 'x')).toEqual({ ok: true, value: { a: [1, { b: null }] } });
    expect(parseJsonObject(nestedText(100), 'x')).toEqual({ ok: true, value: nested(100) });
    for (const text of ['[]', 'null', '"text"', '42'])
      expect(readJsonObjectText(text, 'the arguments')).toEqual({ ok: false, problem: 'the arguments must be a JSON object' });
    expect(readJsonObjectText('{"a":', 'the arguments')).toEqual({
      ok: false,
      problem: expect.stringMatching(/^the arguments must be valid JSON \(/),
    });
  });

  it('makes the text a service sends, refusing a value over the bound with INVALID_ARGUMENT (a face answers 400)', () => {
    expect(jsonObjectText({ name: 'x', value: 1 }, 'x')).toBe('{"name":"x","value":1}');
    const refusal = (() => {
      try {
        jsonObjectText(nested(40) as Record<string, unknown>, '"arguments"');
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(ServiceError);
    expect(refusal).toMatchObject({ code: GrpcStatus.INVALID_ARGUMENT, message: expect.stringMatching(/^"arguments" must not nest/) });
  });

  it('reads a field back as the object it carries: absent or empty text is no arguments', () => {
    expect(jsonObjectOf(undefined)).toEqual({});
    expect(jsonObjectOf('')).toEqual({});
    expect(jsonObjectOf('{"a":1}')).toEqual({ a: 1 });
  });

  it("as a store's field, takes any object's text, however deep, and nothing else", () => {
    const schema = jsonObjectTextSchema('the value');
    expect(schema.safeParse(nestedText(200)).success).toBe(true);
    expect(schema.safeParse('[1]').error?.issues[0]?.message).toBe('the value must be a JSON object');
  });
});
