import { InvalidToolInputError, NoSuchToolError, type ContentPart, type ToolSet } from 'ai';
import { describe, expect, it } from 'vitest';
import { toGenerateResponse, type ModelReply } from './reply.js';

const usage = { inputTokens: 10, outputTokens: 5 };

function reply(content: unknown[], finishReason: ModelReply['finishReason'] = 'stop', text = ''): ModelReply {
  return { text, content: content as ContentPart<ToolSet>[], finishReason, usage };
}

describe('toGenerateResponse', () => {
  it('re-serialises the parsed input of a valid call', () => {
    const result = toGenerateResponse(
      reply([{ type: 'tool-call', toolCallId: 'a', toolName: 'resources_add', input: { name: 'x', value: 1 } }]),
    );
    expect(result.toolCalls).toEqual([{ id: 'a', name: 'resources_add', argumentsJson: '{"name":"x","value":1}' }]);
  });

  it("keeps a call's provider metadata whole, as JSON, and adds none where there was none", () => {
    const result = toGenerateResponse(
      reply([
        {
          type: 'tool-call',
          toolCallId: 'a',
          toolName: 'one',
          input: {},
          providerMetadata: { google: { thoughtSignature: 'CiQB0e2Kb7+/sig==' } },
        },
        { type: 'tool-call', toolCallId: 'b', toolName: 'two', input: {}, providerMetadata: {} },
        { type: 'tool-call', toolCallId: 'c', toolName: 'three', input: {} },
      ]),
    );
    expect(result.toolCalls[0]).toEqual({
      id: 'a',
      name: 'one',
      argumentsJson: '{}',
      providerMetadataJson: '{"google":{"thoughtSignature":"CiQB0e2Kb7+/sig=="}}',
    });
    expect(result.toolCalls.slice(1).map((call) => Object.hasOwn(call, 'providerMetadataJson'))).toEqual([false, false]);
  });

  it('keeps the raw text of arguments that did not parse (InvalidToolInputError)', () => {
    const error = new InvalidToolInputError({ toolName: 'resources_add', toolInput: '{"name": "x",', cause: new Error('bad json') });
    const result = toGenerateResponse(
      reply([
        { type: 'tool-call', toolCallId: 'a', toolName: 'resources_add', input: '{"name": "x",', dynamic: true, invalid: true, error },
        { type: 'tool-error', toolCallId: 'a', toolName: 'resources_add', input: '{"name": "x",', error: 'bad json', dynamic: true },
      ]),
    );
    expect(result.toolCalls).toEqual([{ id: 'a', name: 'resources_add', argumentsJson: '{"name": "x",' }]);
  });

  it('returns a call to an unknown tool once, although a tool-error part follows it', () => {
    const error = new NoSuchToolError({ toolName: 'format_disk', availableTools: ['resources_list'] });
    const result = toGenerateResponse(
      reply([
        { type: 'tool-call', toolCallId: 'b', toolName: 'format_disk', input: { drive: 'c' }, dynamic: true, invalid: true, error },
        { type: 'tool-error', toolCallId: 'b', toolName: 'format_disk', input: { drive: 'c' }, error: 'no such tool', dynamic: true },
      ]),
    );
    expect(result.toolCalls).toEqual([{ id: 'b', name: 'format_disk', argumentsJson: '{"drive":"c"}' }]);
  });

  it('keeps a call that only shows up as a tool-error part', () => {
    const result = toGenerateResponse(
      reply([{ type: 'tool-error', toolCallId: 'c', toolName: 'resources_add', input: 'not json', error: 'x', dynamic: true }]),
    );
    expect(result.toolCalls).toEqual([{ id: 'c', name: 'resources_add', argumentsJson: 'not json' }]);
  });

  it('skips calls the provider ran itself', () => {
    const result = toGenerateResponse(
      reply([{ type: 'tool-call', toolCallId: 'd', toolName: 'server:search', input: {}, providerExecuted: true, dynamic: true }]),
    );
    expect(result.toolCalls).toEqual([]);
  });

  it('reports tool-calls when Gemini says STOP for a function call', () => {
    expect(toGenerateResponse(reply([{ type: 'tool-call', toolCallId: 'e', toolName: 't', input: {} }], 'stop')).finishReason).toBe(
      'tool-calls',
    );
    expect(toGenerateResponse(reply([], 'stop', 'hi')).finishReason).toBe('stop');
    expect(toGenerateResponse(reply([], 'length', 'hi')).finishReason).toBe('length');
  });

  it('counts missing usage as zero', () => {
    const result = toGenerateResponse({ ...reply([], 'stop', 'hi'), usage: { inputTokens: undefined, outputTokens: 3 } });
    expect(result.usage).toEqual({ inputTokens: 0, outputTokens: 3 });
    expect(result.text).toBe('hi');
  });
});
