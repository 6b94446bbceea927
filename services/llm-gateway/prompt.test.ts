import { describe, expect, it } from 'vitest';
import { ChatRole, type ChatMessage, type GenerateRequest } from '../../gen/ts/asg/llm/v1/llm.js';
import { GrpcStatus, ServiceError } from '../common/grpc/errors.js';
import { toModelPrompt } from './prompt.js';

const user = (text: string): ChatMessage => ({ role: ChatRole.CHAT_ROLE_USER, text, toolCalls: [], toolResults: [] });
const assistantCalls = (...calls: { id: string; name: string; argumentsJson?: string; providerMetadataJson?: string }[]): ChatMessage => ({
  role: ChatRole.CHAT_ROLE_ASSISTANT,
  text: '',
  toolCalls: calls.map((call) => ({ argumentsJson: '{}', ...call })),
  toolResults: [],
});
const results = (...parts: { id: string; name: string; output?: string; isError?: boolean }[]): ChatMessage => ({
  role: ChatRole.CHAT_ROLE_TOOL,
  text: '',
  toolCalls: [],
  toolResults: parts.map((part) => ({ output: 'ok', isError: false, ...part })),
});
const request = (messages: ChatMessage[], systemPrompt = ''): GenerateRequest => ({
  model: 'gemini-2.5-flash',
  systemPrompt,
  messages,
  tools: [],
});

function rejection(messages: ChatMessage[]): ServiceError {
  try {
    toModelPrompt(request(messages));
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected INVALID_ARGUMENT');
}

describe('toModelPrompt', () => {
  it('pairs results with calls by id, and by name when a result has no id', () => {
    const prompt = toModelPrompt(
      request([
        user('go'),
        assistantCalls({ id: 'a', name: 'one' }, { id: '', name: 'two' }),
        results({ id: '', name: 'two', output: '2' }, { id: 'a', name: 'one', output: '1', isError: true }),
      ]),
    );
    expect(prompt.messages[2]).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'call-1-1', toolName: 'two', output: { type: 'text', value: '2' } },
        { type: 'tool-result', toolCallId: 'a', toolName: 'one', output: { type: 'error-text', value: '1' } },
      ],
    });
  });

  it('sends arguments that are not a JSON object back as {}', () => {
    const prompt = toModelPrompt(
      request([
        user('go'),
        assistantCalls({ id: 'a', name: 'one', argumentsJson: '{"x":' }, { id: 'b', name: 'two', argumentsJson: '[1]' }),
        results({ id: 'a', name: 'one' }, { id: 'b', name: 'two' }),
      ]),
    );
    expect(prompt.messages[1]).toMatchObject({ content: [{ input: {} }, { input: {} }] });
  });

  it("hands a call's provider metadata back as its provider options, and adds none where there was none", () => {
    const signed = '{"google":{"thoughtSignature":"CiQB0e2Kb7+/sig=="}}';
    const prompt = toModelPrompt(
      request([
        user('go'),
        assistantCalls({ id: 'a', name: 'one', providerMetadataJson: signed }, { id: 'b', name: 'two' }),
        results({ id: 'a', name: 'one' }, { id: 'b', name: 'two' }),
      ]),
    );
    expect(prompt.messages[1]).toEqual({
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          toolCallId: 'a',
          toolName: 'one',
          input: {},
          providerOptions: { google: { thoughtSignature: 'CiQB0e2Kb7+/sig==' } },
        },
        { type: 'tool-call', toolCallId: 'b', toolName: 'two', input: {} },
      ],
    });
  });

  it.each(['not json', '"a string"', '{"google":"sig"}', '[{"google":{}}]'])(
    'rejects provider metadata %j that no reply could have given',
    (providerMetadataJson) => {
      const error = rejection([
        user('go'),
        assistantCalls({ id: 'a', name: 'one', providerMetadataJson }),
        results({ id: 'a', name: 'one' }),
      ]);
      expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
      expect(error.message).toContain(
        'message 1: tool call one (id "a"): provider_metadata_json must be a JSON object of per-provider objects',
      );
    },
  );

  it('leaves out an empty system prompt and an empty tool list', () => {
    const prompt = toModelPrompt(request([user('hi')]));
    expect(prompt).toEqual({ messages: [{ role: 'user', content: 'hi' }] });
  });

  it.each([
    ['no messages', [], 'no messages for model gemini-2.5-flash'],
    [
      'a result without a call',
      [user('go'), results({ id: 'x', name: 'one' })],
      'message 1: tool result for one (id "x") answers no tool call',
    ],
    [
      'a result naming another tool',
      [user('go'), assistantCalls({ id: 'a', name: 'one' }), results({ id: 'a', name: 'two' })],
      'message 2: tool result for two (id "a")',
    ],
    [
      'a call without a result',
      [user('go'), assistantCalls({ id: 'a', name: 'one' }), user('again')],
      'message 2: tool call one (id "a") of message 1 has no tool result',
    ],
    [
      'a trailing call without a result',
      [user('go'), assistantCalls({ id: 'a', name: 'one' })],
      'message 2: tool call one (id "a") of message 1 has no tool result',
    ],
    ['a message without a role', [{ ...user('go'), role: ChatRole.CHAT_ROLE_UNSPECIFIED }], 'message 0 has no role'],
  ])('rejects %s', (_case, messages, message) => {
    const error = rejection(messages as ChatMessage[]);
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error.message).toContain(message);
  });

  it('rejects a tool offered twice', () => {
    const tool = { name: 'one', description: '', inputSchema: undefined };
    expect(() => toModelPrompt({ ...request([user('hi')]), tools: [tool, tool] })).toThrow('tool one is offered twice');
  });
});
