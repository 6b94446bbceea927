import { describe, expect, it } from 'vitest';
import { structuredObject, toolOutcome } from './tool-result.js';

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
      ['first', '[image image/png]', '[audio audio/wav]', '[resource link file:///a.txt]', 'embedded text', '[resource file:///c.bin application/octet-stream]', 'last'].join('\n'),
    );
    expect(outcome.isError).toBe(false);
    expect(outcome.structuredContent).toBeUndefined();
  });

  it('keeps the error flag and the structured content', () => {
    expect(toolOutcome({ content: [{ type: 'text', text: 'no' }], isError: true })).toEqual({ text: 'no', isError: true, structuredContent: undefined });
    expect(toolOutcome({ content: [], structuredContent: { n: 1 } }).structuredContent).toEqual({ n: 1 });
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
