import { describe, expect, it } from 'vitest';
import { schemaProblems } from './json-schema.js';

describe('schema patterns run on RE2 (edited arguments reach the schema from a request)', () => {
  it('checks a pattern as before', () => {
    const schema = { type: 'object', properties: { id: { type: 'string', pattern: '^res-[0-9]+$' } } };
    expect(schemaProblems(schema, { id: 'res-42' }, 'arguments')).toBeUndefined();
    expect(schemaProblems(schema, { id: 'x' }, 'arguments')).toMatch(/must match pattern/);
    const keyed = { type: 'object', patternProperties: { '^n_': { type: 'number' } } };
    expect(schemaProblems(keyed, { n_a: 1, other: 'x' }, 'arguments')).toBeUndefined();
    expect(schemaProblems(keyed, { n_a: 'one' }, 'arguments')).toMatch(/must be number/);
  });

  it('answers at once for a pattern that backtracks exponentially on the native engine', () => {
    // (a+)+$ against 40 a's and a "!" takes the backtracking engine some 2^40 steps.
    const schema = { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } } };
    expect(schemaProblems(schema, { name: `${'a'.repeat(40)}!` }, 'arguments')).toMatch(/must match pattern/);
    expect(schemaProblems(schema, { name: 'a'.repeat(40) }, 'arguments')).toBeUndefined();
  });

  it('keeps the patterns of one schema apart', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', pattern: '^a$' }, b: { type: 'string', pattern: '^b$' } } };
    expect(schemaProblems(schema, { a: 'a', b: 'b' }, 'arguments')).toBeUndefined();
    expect(schemaProblems(schema, { a: 'b', b: 'a' }, 'arguments')).toMatch(/pattern/);
  });

  it('leaves a pattern RE2 cannot run to the server (no local verdict)', () => {
    const schema = { type: 'object', properties: { w: { type: 'string', pattern: '^(?=x)' } } };
    expect(schemaProblems(schema, { w: 'anything' }, 'arguments')).toBeUndefined();
  });
});
