/**
 * one-step.ts against what it replaces: `generateText` with one step, no `execute` and no SDK
 * retries, both on the same mock provider model. The provider must be asked the same thing,
 * and the reply (reply.ts) must be the same, for every kind of answer a model gives: text,
 * valid calls, calls to tools not offered, arguments that are not JSON, empty arguments.
 */
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { ChatRole, type GenerateRequest } from '../../gen/ts/asg/llm/v1/llm.js';
import { generateOnce } from './one-step.js';
import { toModelPrompt } from './prompt.js';
import { toGenerateResponse } from './reply.js';

type Answer = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
type Content = Answer['content'];

const REQUEST: GenerateRequest = {
  model: 'gemini-2.5-flash',
  systemPrompt: 'You manage resources.',
  messages: [
    { role: ChatRole.CHAT_ROLE_USER, text: 'list resources', toolCalls: [], toolResults: [] },
    {
      role: ChatRole.CHAT_ROLE_ASSISTANT,
      text: 'Looking.',
      toolCalls: [
        { id: 'c1', name: 'list_resources', argumentsJson: '{"limit":2}', providerMetadataJson: '{"google":{"thoughtSignature":"s"}}' },
      ],
      toolResults: [],
    },
    {
      role: ChatRole.CHAT_ROLE_TOOL,
      text: '',
      toolCalls: [],
      toolResults: [{ id: 'c1', name: 'list_resources', output: '[]', isError: false }],
    },
  ],
  tools: [
    { name: 'list_resources', description: 'Lists them', inputSchema: { properties: { limit: { type: 'number' } } } },
    { name: 'add_resource', description: 'Adds one', inputSchema: undefined },
  ],
  timeoutMs: 0,
};

function answer(content: Content): Answer {
  return {
    content,
    finishReason: { unified: content.some((part) => part.type === 'tool-call') ? 'tool-calls' : 'stop', raw: 'STOP' },
    usage: {
      inputTokens: { total: 12, noCache: 12, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 5, text: 5, reasoning: undefined },
    },
    warnings: [],
  };
}

const call = (id: string, toolName: string, input: string) => ({ type: 'tool-call' as const, toolCallId: id, toolName, input });

/** Both paths on one answer: what the provider was asked, and what each path replied. */
async function both(content: Content, request = REQUEST) {
  const model = new MockLanguageModelV3({ doGenerate: async () => answer(content) });
  const prompt = toModelPrompt(request);
  const settings = { temperature: 0.2, maxOutputTokens: 100 };
  const signal = new AbortController().signal;
  const sdk = await generateText({ model, ...prompt, ...settings, maxRetries: 0, stopWhen: stepCountIs(1), abortSignal: signal });
  const ours = await generateOnce(model, prompt, settings, signal);
  const [viaSdk, viaOurs] = model.doGenerateCalls.map(({ prompt, tools, toolChoice, temperature, maxOutputTokens }) => ({
    prompt,
    tools,
    toolChoice,
    temperature,
    maxOutputTokens,
  }));
  return { asked: { viaSdk, viaOurs }, replied: { viaSdk: toGenerateResponse(sdk), viaOurs: toGenerateResponse(ours) }, ours };
}

describe('one model answer without generateText', () => {
  it('asks the provider exactly what generateText asks: system prompt, messages with their provider options, tools, settings', async () => {
    const { asked } = await both([{ type: 'text', text: 'Nothing there.' }]);
    expect(asked.viaOurs).toEqual(asked.viaSdk);
    expect(asked.viaOurs?.tools).toHaveLength(2);
  });

  it('asks the same without tools and without a system prompt', async () => {
    const { asked, replied } = await both([{ type: 'text', text: 'Hi.' }], {
      ...REQUEST,
      systemPrompt: '',
      tools: [],
      messages: REQUEST.messages.slice(0, 1),
    });
    expect(asked.viaOurs).toEqual(asked.viaSdk);
    expect(replied.viaOurs).toEqual(replied.viaSdk);
  });

  it('replies as generateText does to text in several parts, with the finish reason and usage', async () => {
    const { replied, ours } = await both([
      { type: 'text', text: 'Two ' },
      { type: 'reasoning', text: 'thinking' },
      { type: 'text', text: 'resources.' },
    ]);
    expect(replied.viaOurs).toEqual(replied.viaSdk);
    expect(replied.viaOurs).toMatchObject({ text: 'Two resources.', finishReason: 'stop', usage: { inputTokens: 12, outputTokens: 5 } });
    expect(ours.warnings).toEqual([]);
  });

  it('replies as generateText does to valid calls, calls to tools not offered and arguments that are not JSON, side by side', async () => {
    const { replied } = await both([
      { type: 'text', text: 'On it.' },
      { ...call('a', 'list_resources', '{"limit":3}'), providerMetadata: { google: { thoughtSignature: 'x' } } },
      call('b', 'add_resource', ''),
      call('c', 'add_resource', '{"name":'),
      call('d', 'delete_everything', '{"all":true}'),
      call('e', 'delete_everything', ''),
      call('f', 'delete_everything', 'not json'),
    ]);
    expect(replied.viaOurs).toEqual(replied.viaSdk);
    expect(replied.viaOurs.toolCalls.map((part) => part.argumentsJson)).toEqual([
      '{"limit":3}',
      '{}',
      '{"name":',
      '{"all":true}',
      '',
      'not json',
    ]);
  });

  it('refuses arguments with prototype keys as the SDK does: kept as the raw text', async () => {
    const { replied } = await both([
      call('a', 'add_resource', '{"__proto__":{"admin":true}}'),
      call('b', 'add_resource', '{"constructor":{"prototype":{"admin":true}}}'),
      call('c', 'add_resource', '{"nested":{"constructor":"fine"}}'),
      call('d', 'add_resource', '{"list":[{"\\u005f_proto__":{"admin":true}}]}'),
    ]);
    expect(replied.viaOurs).toEqual(replied.viaSdk);
  });

  it("throws the provider's error as it is, as generateText with maxRetries 0 does", async () => {
    const failure = new Error('provider down');
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        throw failure;
      },
    });
    await expect(generateOnce(model, toModelPrompt(REQUEST), {}, new AbortController().signal)).rejects.toBe(failure);
  });
});
