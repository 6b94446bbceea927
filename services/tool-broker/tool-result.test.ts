import { describe, expect, it } from 'vitest';
import { invalidResultReason, structuredObject, toolOutcome } from './tool-result.js';

describe('toolOutcome', () => {
  it('joins text parts with newlines and summarises the rest', () => {
    const outcome = toolOutcome({
      content: [
        { type: 'text', text: 'first' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource_link', uri: 'file:///a.txt', name: 'a' },
        { type: 'resource', resource: { uri: 'file:///b.txt', text: 'embedded text' } },
        { type: 'resource', resource: { uri: 'file:///c.bin', blob: 'AAAA', mimeType: 'application/octet-stream' } },
        { type: 'text', text: 'last' },
      ],
    });
    expect(outcome.text).toBe(
      [
        'first',
        '[image image/png]',
        '[audio audio/wav]',
        '[resource link file:///a.txt]',
        'embedded text',
        '[resource file:///c.bin application/octet-stream]',
        'last',
      ].join('\n'),
    );
    expect(outcome.isError).toBe(false);
    expect(outcome.structuredContent).toBeUndefined();
  });

  it('keeps the error flag and the structured content', () => {
    expect(toolOutcome({ content: [{ type: 'text', text: 'no' }], isError: true })).toEqual({
      text: 'no',
      isError: true,
      structuredContent: undefined,
    });
    expect(toolOutcome({ content: [], structuredContent: { n: 1 } }).structuredContent).toEqual({ n: 1 });
  });

  it('puts the structured content into the text when the content has no text, so the model sees it', () => {
    expect(toolOutcome({ content: [], structuredContent: { n: 1 } })).toEqual({
      text: '{"n":1}',
      isError: false,
      structuredContent: { n: 1 },
    });
    expect(toolOutcome({ content: [{ type: 'text', text: '  ' }], structuredContent: [1, 2] })).toEqual({
      text: '[1,2]',
      isError: false,
      structuredContent: { result: [1, 2] },
    });
    // Text there already: left as the server wrote it.
    expect(toolOutcome({ content: [{ type: 'text', text: 'one note' }], structuredContent: { n: 1 } }).text).toBe('one note');
    expect(toolOutcome({ content: [] }).text).toBe('');
  });
});

describe('structuredObject', () => {
  it('passes objects through and wraps any other JSON value as {result}', () => {
    expect(structuredObject({ a: [1] })).toEqual({ a: [1] });
    expect(structuredObject([1, 2])).toEqual({ result: [1, 2] });
    expect(structuredObject(3)).toEqual({ result: 3 });
    expect(structuredObject('x')).toEqual({ result: 'x' });
    expect(structuredObject(null)).toBeUndefined();
    expect(structuredObject(undefined)).toBeUndefined();
  });
});

describe('invalidResultReason', () => {
  it("turns the SDK's schema issues into short path: message lines", () => {
    const message = `Invalid result for tools/call: ${JSON.stringify([{ expected: 'array', code: 'invalid_type', path: ['content'], message: 'Invalid input: expected array, received string' }], null, 2)}`;
    expect(invalidResultReason(message)).toBe('content: Invalid input: expected array, received string');
  });

  it('picks the closest branch of a union (a text block without its text)', () => {
    const issues = [
      {
        code: 'invalid_union',
        path: ['content', 0],
        message: 'Invalid input',
        errors: [
          [{ code: 'invalid_type', path: ['text'], message: 'Invalid input: expected string, received undefined' }],
          [
            { code: 'invalid_value', path: ['type'], message: 'Invalid input: expected "image"' },
            { code: 'invalid_type', path: ['data'], message: 'Invalid input: expected string, received undefined' },
          ],
        ],
      },
    ];
    expect(invalidResultReason(`Invalid result for tools/call: ${JSON.stringify(issues)}`)).toBe(
      'content.0.text: Invalid input: expected string, received undefined',
    );
  });

  it('keeps any other message, shortened', () => {
    expect(invalidResultReason('Invalid result for tools/call: not an object')).toBe('not an object');
    expect(invalidResultReason(`Invalid result for tools/call: ${'x'.repeat(400)}`)).toHaveLength(301);
  });
});
