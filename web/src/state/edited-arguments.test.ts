import { describe, expect, it } from 'vitest';
import { canonicalJson, descriptionWithoutArguments, formatArguments, readArgumentsEdit } from './edited-arguments.js';

const original = { name: 'web-1', value: 5, tags: ['a', 'b'] };

describe('readArgumentsEdit', () => {
  it('takes the formatted arguments, reformatted or reordered, as unchanged', () => {
    expect(readArgumentsEdit(formatArguments(original), original)).toEqual({ kind: 'unchanged' });
    expect(readArgumentsEdit('{"tags":["a","b"],"value":5,"name":"web-1"}', original)).toEqual({ kind: 'unchanged' });
  });

  it('returns the edited object', () => {
    expect(readArgumentsEdit('{"name": "web-1", "value": 50, "tags": ["a", "b"]}', original)).toEqual({
      kind: 'edited',
      value: { name: 'web-1', value: 50, tags: ['a', 'b'] },
    });
    expect(readArgumentsEdit('{}', original)).toEqual({ kind: 'edited', value: {} });
  });

  it('says why text that is not a JSON object cannot be approved', () => {
    const broken = readArgumentsEdit('{"name": "web-1",', original);
    expect(broken.kind).toBe('invalid');
    expect(broken.kind === 'invalid' && broken.message).toMatch(/^The arguments are not valid JSON: /);
    for (const text of ['[1]', '42', 'null', '"text"'])
      expect(readArgumentsEdit(text, original)).toEqual({ kind: 'invalid', message: 'The arguments must be a JSON object ({ … }).' });
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
  });
});

describe('descriptionWithoutArguments', () => {
  it('drops the arguments the card shows anyway, and keeps any other description', () => {
    expect(
      descriptionWithoutArguments('resources_add on resources with arguments {"name":"web-1","value":5}', { value: 5, name: 'web-1' }),
    ).toBe('resources_add on resources');
    expect(descriptionWithoutArguments('resources_add on resources with arguments {"name":"other"}', { name: 'web-1' })).toBe(
      'resources_add on resources with arguments {"name":"other"}',
    );
    expect(
      descriptionWithoutArguments('agent-b asks for approval: resources_add on resources with arguments {"name":"x"}', {
        message: 'add x',
      }),
    ).toBe('agent-b asks for approval: resources_add on resources with arguments {"name":"x"}');
    expect(descriptionWithoutArguments('delete everything', {})).toBe('delete everything');
    // A call's note says its arguments the same way.
    expect(descriptionWithoutArguments('Calling resources_add with {"name":"web-1","value":5}', { value: 5, name: 'web-1' })).toBe(
      'Calling resources_add',
    );
  });
});
