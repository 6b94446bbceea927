import { describe, expect, it } from 'vitest';
import { inputAnswer, inputFields } from './input-form.js';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Guest name' },
    nights: { type: 'integer', title: 'Nights' },
    breakfast: { type: 'boolean' },
    view: { type: 'string', enum: ['sea', 'garden'] },
  },
  required: ['name', 'nights'],
};

describe('the form of an MCP server question', () => {
  it('has a field per property, in order, labelled by title or description', () => {
    expect(inputFields(schema)).toEqual([
      { name: 'name', label: 'Guest name', required: true, kind: 'text' },
      { name: 'nights', label: 'Nights', required: true, kind: 'integer' },
      { name: 'breakfast', label: 'breakfast', required: false, kind: 'boolean' },
      { name: 'view', label: 'view', required: false, kind: 'choice', options: ['sea', 'garden'] },
    ]);
  });

  it('leaves a schema it cannot show as fields to a JSON answer', () => {
    expect(inputFields({ type: 'object', properties: { q1: { type: 'object', properties: {} } } })).toBeUndefined();
    expect(inputFields({ type: 'string' })).toBeUndefined();
  });

  it('answers with typed values, and says what stops an answer', () => {
    const fields = inputFields(schema)!;
    expect(inputAnswer(fields, { name: ' Ada ', nights: '2', breakfast: true, view: '' })).toEqual({
      answer: { name: 'Ada', nights: 2, breakfast: true },
    });
    expect(inputAnswer(fields, { name: '', nights: '2' })).toEqual({ problem: 'Guest name is required.' });
    expect(inputAnswer(fields, { name: 'Ada', nights: '1.5' })).toEqual({ problem: 'Nights must be a whole number.' });
  });
});
