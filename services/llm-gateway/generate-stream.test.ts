/**
 * GenerateStream over real gRPC and real HTTP: what the gateway asks of each vendor's
 * streaming endpoint, how it passes the events on, and how it fails, retries, times out and
 * stops when its client goes away. The scripted model streams each vendor's wire format.
 */
import { describe, expect, it } from 'vitest';
import type { GenerateStreamRequest, GenerateStreamResponse } from '../../gen/ts/asg/llm/v1/llm.js';
import { GrpcStatus, RpcError } from '../common/grpc/errors.js';
import type { ScriptedModelServer } from '../../test/support/scripted-model.js';
import {
  generateRequest,
  inTurnThen,
  KEYS,
  MODELS_AND_KEY_VARIABLES,
  pathOf,
  recordingClock,
  useLlmGateway,
  user,
  type ProviderContract,
  type WireBody as Body,
} from '../../test/support/llm-gateway-harness.js';

const request = (name: string, text = 'hello'): GenerateStreamRequest => generateRequest(name, [user(text)]);

interface StreamContract extends ProviderContract {
  /** Path and query of the streaming endpoint. */
  target: (server: ScriptedModelServer) => string;
  /** How the body asks for a stream (Gemini asks by its path instead). */
  asksForStream: (body: Body) => void;
  credentials: (headers: Record<string, string>) => void;
}

const bearer = (key: string) => (headers: Record<string, string>) => expect(headers.authorization).toBe(`Bearer ${key}`);
const streamFlag = (body: Body) => expect(body.stream).toBe(true);
/** OpenAI-compatible servers send usage at the end of a stream only when asked. */
const streamFlagAndUsage = (body: Body) => expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true } });

const CONTRACTS: StreamContract[] = [
  {
    provider: 'gemini',
    model: 'gemini-2.5-flash',
    sentModel: 'gemini-2.5-flash',
    target: (server) => pathOf(server.geminiBaseUrl, '/models/gemini-2.5-flash:streamGenerateContent?alt=sse'),
    asksForStream: (body) => expect(body.stream).toBeUndefined(),
    credentials: (headers) => expect(headers['x-goog-api-key']).toBe(KEYS.GEMINI_API_KEY),
  },
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    sentModel: 'claude-sonnet-4-5',
    target: (server) => pathOf(server.anthropicBaseUrl, '/messages'),
    asksForStream: (body) => expect(body).toMatchObject({ stream: true, max_tokens: 4096 }),
    credentials: (headers) => expect(headers['x-api-key']).toBe(KEYS.ANTHROPIC_API_KEY),
  },
  {
    provider: 'openai',
    model: 'openai-gpt-4o',
    sentModel: 'gpt-4o',
    target: (server) => pathOf(server.openaiBaseUrl, '/chat/completions'),
    asksForStream: streamFlagAndUsage,
    credentials: bearer(KEYS.OPENAI_API_KEY),
  },
  {
    provider: 'mistral',
    model: 'mistral-large-latest',
    sentModel: 'mistral-large-latest',
    target: (server) => pathOf(server.mistralBaseUrl, '/chat/completions'),
    asksForStream: streamFlag,
    credentials: bearer(KEYS.MISTRAL_API_KEY),
  },
  {
    provider: 'ollama',
    model: 'ollama-llama3',
    sentModel: 'llama3',
    target: (server) => pathOf(server.ollamaBaseUrl, '/chat/completions'),
    asksForStream: streamFlagAndUsage,
    credentials: (headers) => expect(headers.authorization).toBeUndefined(),
  },
  {
    provider: 'openrouter',
    model: 'openrouter-anthropic/claude-3-opus',
    sentModel: 'anthropic/claude-3-opus',
    target: (server) => pathOf(server.openrouterBaseUrl, '/chat/completions'),
    asksForStream: streamFlagAndUsage,
    credentials: bearer(KEYS.OPENROUTER_API_KEY),
  },
];

const inTurn = inTurnThen({ text: 'finally here' });

const { model, start: startGateway } = useLlmGateway();

/** Every event until the stream ends, and the error it ended with, if any. */
async function drain(events: AsyncIterable<GenerateStreamResponse>): Promise<{ events: GenerateStreamResponse[]; error?: RpcError }> {
  const received: GenerateStreamResponse[] = [];
  try {
    for await (const event of events) received.push(event);
    return { events: received };
  } catch (error) {
    if (!(error instanceof RpcError)) throw error;
    return { events: received, error };
  }
}

const textDeltas = (events: GenerateStreamResponse[]): string[] =>
  events.flatMap((event) => (event.textDelta !== undefined ? [event.textDelta] : []));
const toolCalls = (events: GenerateStreamResponse[]) => events.flatMap((event) => (event.toolCall ? [event.toolCall] : []));

const SENTENCE = 'The quick brown fox jumps over the lazy dog and streams every word.';

describe.each(CONTRACTS)('$provider ($model)', (contract) => {
  it('calls the vendor streaming endpoint with its credentials and the model name', async () => {
    const { client } = await startGateway();
    await drain(client.generateStream(request(contract.model)));
    expect(model().requests).toHaveLength(1);
    const sent = model().requests[0]!;
    expect(sent.provider).toBe(contract.provider);
    expect(`${sent.path}${sent.query}`).toBe(contract.target(model()));
    expect(sent.stream).toBe(true);
    contract.asksForStream(sent.body);
    contract.credentials(sent.headers);
    expect(sent.model).toBe(contract.sentModel);
    expect(sent.system).toBe('You manage resources.');
    expect(sent.tools).toEqual(['resources_list', 'resources_add']);
  });

  it('passes text on as several deltas in order, then one finish event with reason and usage', async () => {
    model().setScript(() => ({ text: SENTENCE }));
    const { client } = await startGateway();
    const { events, error } = await drain(client.generateStream(request(contract.model)));
    expect(error).toBeUndefined();
    const deltas = textDeltas(events);
    expect(deltas.length).toBeGreaterThanOrEqual(SENTENCE.split(' ').length);
    expect(deltas.join('')).toBe(SENTENCE);
    expect(deltas[0]).toBe('The ');
    expect(events.filter((event) => event.finish)).toHaveLength(1);
    const finish = events.at(-1)!.finish!;
    expect(finish.finishReason).toBe('stop');
    expect(finish.usage?.inputTokens).toBeGreaterThan(0);
    expect(finish.usage?.outputTokens).toBeGreaterThan(0);
    expect(model().requests[0]?.streamEnd).toBe('complete');
  });

  it('passes several tool calls of one reply on as complete calls with their arguments', async () => {
    model().setScript(() => ({
      text: 'Adding both.',
      toolCalls: [
        { name: 'resources_add', args: { name: 'a', value: 1 } },
        { name: 'resources_add', args: { name: 'b', value: 2 } },
        { name: 'resources_list', args: {} },
      ],
    }));
    const { client } = await startGateway();
    const { events } = await drain(client.generateStream(request(contract.model, 'add a and b, then list')));
    expect(textDeltas(events).join('')).toBe('Adding both.');
    // One event per call, never a fragment: every call's arguments parse on their own.
    const calls = toolCalls(events);
    expect(calls.map((call) => [call.name, JSON.parse(call.argumentsJson)])).toEqual([
      ['resources_add', { name: 'a', value: 1 }],
      ['resources_add', { name: 'b', value: 2 }],
      ['resources_list', {}],
    ]);
    expect(new Set(calls.map((call) => call.id)).size).toBe(3);
    expect(calls.every((call) => call.id !== '')).toBe(true);
    // Text first, then the calls, then the finish.
    const kinds = events.map((event) => (event.textDelta !== undefined ? 'text' : event.toolCall ? 'call' : 'finish'));
    expect(kinds.indexOf('call')).toBeGreaterThan(kinds.lastIndexOf('text'));
    expect(kinds.at(-1)).toBe('finish');
    expect(events.at(-1)!.finish!.finishReason).toBe('tool-calls');
  });
});

describe('provider specifics', () => {
  it("carries Gemini's thoughtSignature with the call it came with", async () => {
    const signature = 'CiQB0e2Kb3dRh7s+/Pq1Z9kGv0m2nT6Ew1vQ8oXhY4cR5aJ7bLs=';
    model().setScript(() => ({
      toolCalls: [
        { name: 'resources_add', args: { name: 'x', value: 1 }, thoughtSignature: signature },
        { name: 'resources_list', args: {} },
      ],
    }));
    const { client } = await startGateway();
    const calls = toolCalls((await drain(client.generateStream(request('gemini-2.5-flash')))).events);
    expect(calls[0]!.providerMetadataJson).toBe(JSON.stringify({ google: { thoughtSignature: signature } }));
    expect(calls[1]!.providerMetadataJson).toBeUndefined();
  });

  it('passes on a call with arguments that are not JSON exactly as the model produced them', async () => {
    const broken = '{"name": "x", "value": ';
    model().setScript(() => ({ toolCalls: [{ name: 'resources_add', args: broken }] }));
    const { client } = await startGateway();
    const { events, error } = await drain(client.generateStream(request('openai-gpt-4o')));
    expect(error).toBeUndefined();
    expect(toolCalls(events)).toEqual([expect.objectContaining({ name: 'resources_add', argumentsJson: broken })]);
    expect(model().requests).toHaveLength(1);
  });
});

describe('failures before the first event', () => {
  it.each(MODELS_AND_KEY_VARIABLES)('answers FAILED_PRECONDITION for %s without %s, sending nothing', async (modelName, keyEnv) => {
    const { client } = await startGateway({ env: { ...model().baseUrlEnv } });
    const { events, error } = await drain(client.generateStream(request(modelName)));
    expect(events).toEqual([]);
    expect(error?.code).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(error?.message).toBe(`${keyEnv} is not set: cannot call model ${modelName}`);
    expect(model().requests).toHaveLength(0);
  });

  it('retries two 429s and then streams the answer, having waited 1 s and 2 s', async () => {
    model().setScript(inTurn({ httpStatus: 429 }, { httpStatus: 429 }));
    const retryClock = recordingClock();
    const { client, log } = await startGateway({ llm: { retry: {} }, retryClock });
    const { events, error } = await drain(client.generateStream(request('claude-sonnet-4-5')));
    expect(error).toBeUndefined();
    expect(textDeltas(events).join('')).toBe('finally here');
    expect(model().requests).toHaveLength(3);
    expect(retryClock.waits).toEqual([1_000, 2_000]);
    expect(
      log.lines.filter((line) => line.msg === 'model call failed, retrying').map((line) => [line.fields.attempt, line.fields.status]),
    ).toEqual([
      [1, 429],
      [2, 429],
    ]);
  });

  it("retries Anthropic's error event when it comes before any text", async () => {
    model().setScript(inTurn({ text: '', stream: { breakOff: { errorEvent: 'Overloaded' } } }));
    const { client } = await startGateway();
    const { events, error } = await drain(client.generateStream(request('claude-sonnet-4-5')));
    expect(error).toBeUndefined();
    expect(textDeltas(events).join('')).toBe('finally here');
    expect(model().requests).toHaveLength(2);
  });

  it('answers UNAVAILABLE with the attempt count once the retries are spent', async () => {
    model().setScript(() => ({ httpStatus: 503 }));
    const { client } = await startGateway({ llm: { retry: { max_retries: 2, initial_backoff: '1ms' } } });
    const { events, error } = await drain(client.generateStream(request('gemini-2.5-flash')));
    expect(events).toEqual([]);
    expect(error?.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(error?.message).toMatch(
      /^the provider gemini failed to answer for model gemini-2\.5-flash \(HTTP 503\): .* \(after 3 attempts\)$/,
    );
    expect(model().requests).toHaveLength(3);
  });

  it('answers INVALID_ARGUMENT for a 400 after one request, with the provider words and no key', async () => {
    model().setScript(() => ({ httpStatus: 400, message: `tools[0].name: bad name for key ${KEYS.OPENAI_API_KEY}` }));
    const { client } = await startGateway();
    const { error } = await drain(client.generateStream(request('openai-gpt-4o')));
    expect(error?.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(error?.message).toBe(
      'the provider openai refused the request for model openai-gpt-4o (HTTP 400): tools[0].name: bad name for key [redacted]',
    );
    expect(model().requests).toHaveLength(1);
  });

  it('answers INTERNAL, as Generate does, for a 200 whose body is not an event stream, after one request', async () => {
    for (const name of ['gemini-2.5-flash', 'openai-gpt-4o']) {
      model().setScript(() => ({ httpStatus: 200, body: '{"candidates": [ this is not json' }));
      const { client } = await startGateway();
      const before = model().requests.length;
      const { events, error } = await drain(client.generateStream(request(name)));
      expect(events).toEqual([]);
      expect(error?.code).toBe(GrpcStatus.INTERNAL);
      expect(error?.message).toMatch(
        /^the provider (gemini|openai) sent a reply for model .* that could not be understood: the response held no stream events/,
      );
      expect(model().requests.length - before).toBe(1);
    }
  });

  it('answers DEADLINE_EXCEEDED when the model does not answer within llm.timeout', async () => {
    model().setScript(() => ({ hang: true }));
    const { client } = await startGateway({ llm: { timeout: '300ms' } });
    const { error } = await drain(client.generateStream(request('gemini-2.5-flash')));
    expect(error?.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect(error?.message).toBe('model gemini-2.5-flash did not answer within 300ms');
  });
});

describe('failures after the first event', () => {
  it.each([
    [
      'claude-sonnet-4-5',
      /^the provider anthropic reported an error in the stream of model claude-sonnet-4-5: Overloaded just now \(api_error\)/,
    ],
    ['openai-gpt-4o', /^the provider openai reported an error in the stream of model openai-gpt-4o: Overloaded just now \(server_error\)/],
    ['gemini-2.5-flash', /^the provider gemini failed to answer for model gemini-2\.5-flash \(HTTP 503\): Overloaded just now/],
  ])('ends the stream of %s with UNAVAILABLE at the vendor error event, without a retry', async (modelName, message) => {
    model().setScript(() => ({ text: 'Partial answer so far', stream: { breakOff: { errorEvent: 'Overloaded just now' } } }));
    const { client } = await startGateway();
    const { events, error } = await drain(client.generateStream(request(modelName)));
    expect(textDeltas(events).join('')).toBe('Partial answer so far');
    expect(events.some((event) => event.finish)).toBe(false);
    expect(error?.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(error?.message).toMatch(message);
    expect(error?.message).toMatch(/\(after \d+ events of the answer had been sent; a stream that has begun is not retried\)$/);
    expect(model().requests).toHaveLength(1);
  });

  it('ends the stream with UNAVAILABLE when the connection drops mid-answer', async () => {
    // Paced, as a real stream is: the SDK drops what it has not handed on when its input fails.
    model().setScript(() => ({ text: 'Partial answer so far', stream: { breakOff: 'drop', delayMs: 20 } }));
    const { client } = await startGateway();
    const { events, error } = await drain(client.generateStream(request('mistral-large-latest')));
    expect(textDeltas(events).join('')).toBe('Partial answer so far');
    expect(error?.code).toBe(GrpcStatus.UNAVAILABLE);
    expect(error?.message).toMatch(/^the connection to the provider mistral broke off while model mistral-large-latest was answering: /);
    expect(model().requests).toHaveLength(1);
    expect(model().requests[0]?.streamEnd).toBe('dropped');
  });

  it('ends a stream that outlasts llm.timeout with DEADLINE_EXCEEDED, keeping what was sent', async () => {
    // A word every 150 ms: the first comes well within the 700 ms, the last (after 1.6 s) well after.
    model().setScript(() => ({ text: 'slow words that take their time and more time than they have', stream: { delayMs: 150 } }));
    const { client } = await startGateway({ llm: { timeout: '700ms' } });
    const { events, error } = await drain(client.generateStream(request('ollama-llama3')));
    expect(textDeltas(events).length).toBeGreaterThan(0);
    expect(textDeltas(events).join('')).not.toContain('have');
    expect(error?.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect(error?.message).toMatch(
      /^model ollama-llama3 did not finish its answer within 700ms \(after \d+ events? of the answer had been sent/,
    );
  });
});

describe('a client that goes away', () => {
  it('aborts the provider request when the client leaves the loop early', async () => {
    const words = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
    model().setScript(() => ({ text: words, stream: { delayMs: 50 } }));
    const { client, log } = await startGateway();
    const received: string[] = [];
    for await (const event of client.generateStream(request('claude-sonnet-4-5'))) {
      if (event.textDelta) received.push(event.textDelta);
      if (received.length === 2) break;
    }
    expect(received).toEqual(['word0 ', 'word1 ']);
    // The scripted server sees its connection closed long before its 40 words (2 s) were sent.
    await expect.poll(() => model().requests[0]?.streamEnd, { timeout: 1_500 }).toBe('client-closed');
    expect(log.lines.some((line) => line.msg === 'model stream cancelled by the caller')).toBe(true);
    expect(model().requests).toHaveLength(1);
  });
});
