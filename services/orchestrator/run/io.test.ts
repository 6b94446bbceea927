/**
 * The tool loop's model call is a stream (GenerateStream) and a turn publishes live events
 * (issue 7 item 2): text deltas, tool calls starting and finishing. The clients are fakes, so
 * what is published and what the loop makes of the stream can be checked exactly.
 */
import { describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResponse, GenerateStreamResponse } from '../../gen/ts/asg/llm/v1/llm.js';
import { MessageRole, type ConversationEvent, type PublishEventRequest } from '../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../gen/ts/asg/tools/v1/tools.js';
import { configSchema } from '../common/config/schema.js';
import type { CallOpts } from '../common/grpc/client.js';
import { GrpcStatus, RpcError } from '../common/grpc/errors.js';
import { createLogger } from '../common/log.js';
import type { OrchestratorClients } from './clients.js';
import { MAX_IN_FLIGHT, PUBLISH_TIMEOUT_MS } from './live-events.js';
import { ToolLoop, type ToolLoopSpec } from './tool-loop.js';

const CONVERSATION = '6f1c2b3a-0000-4000-8000-000000000001';
const config = configSchema.parse({ data_dir: '/tmp/asg-unused' });

const listTool: Tool = { name: 'resources_list', description: 'Lists resources', inputSchema: { type: 'object', properties: {} }, destructive: false, server: 'resources' };

type Script = (request: GenerateRequest, opts: CallOpts | undefined) => AsyncIterable<GenerateStreamResponse>;

/** A fake mesh: the model answers each call with the next script; the store records what is published. */
function fakeClients(
  scripts: Script[],
  publishEvent: (request: PublishEventRequest, opts?: CallOpts) => Promise<object> = async () => ({}),
  unary: GenerateResponse[] = [],
) {
  const published: { event: ConversationEvent; opts?: CallOpts }[] = [];
  const calls: { request: GenerateRequest; opts?: CallOpts }[] = [];
  const toolCalls: string[] = [];
  const clients = {
    llm: {
      generate: async () => {
        const reply = unary.shift();
        if (!reply) throw new Error('the tool loop streams its model calls while someone watches');
        return reply;
      },
      generateStream: (request: GenerateRequest, opts?: CallOpts) => {
        calls.push({ request, opts });
        const script = scripts.shift();
        if (!script) throw new Error('no scripted answer left');
        return script(request, opts);
      },
    },
    store: {
      publishEvent: (request: PublishEventRequest, opts?: CallOpts) => {
        published.push({ event: request.event!, opts });
        return publishEvent(request, opts);
      },
    },
    tools: {
      callTool: async (request: { name: string; arguments: Record<string, unknown> }) => {
        toolCalls.push(request.name);
        return { text: '["alpha"]', isError: false };
      },
    },
  } as unknown as OrchestratorClients;
  return { clients, published, calls, toolCalls };
}

function streamOf(...events: GenerateStreamResponse[]): Script {
  return async function* () {
    for (const event of events) yield event;
  };
}

const delta = (textDelta: string): GenerateStreamResponse => ({ textDelta });
const finish = (finishReason = 'stop', inputTokens = 3, outputTokens = 4): GenerateStreamResponse => ({ finish: { finishReason, usage: { inputTokens, outputTokens } } });

function spec(change: Partial<ToolLoopSpec> = {}): ToolLoopSpec {
  return {
    conversationId: CONVERSATION,
    model: 'gemini-2.5-flash',
    systemPrompt: 'You manage resources.',
    history: [{ role: MessageRole.MESSAGE_ROLE_USER, content: 'list resources' }],
    catalogue: new Map([[listTool.name, listTool]]),
    gateDestructive: true,
    canExitLoop: false,
    live: true,
    ...change,
  };
}

function describeEvent(event: ConversationEvent): string {
  if (event.textDelta) return `text_delta ${JSON.stringify(event.textDelta.text)}${event.textDelta.node ? ` @${event.textDelta.node}` : ''}`;
  if (event.toolCallStarted) return `tool_call_started ${event.toolCallStarted.id} ${event.toolCallStarted.name} ${JSON.stringify(event.toolCallStarted.arguments)}`;
  if (event.toolCallFinished) return `tool_call_finished ${event.toolCallFinished.id} ${event.toolCallFinished.result} ${event.toolCallFinished.isError}`;
  return JSON.stringify(event);
}

const log = createLogger('tool-loop-test');

describe('a turn nobody watches', () => {
  it('calls the model once with the unary Generate and publishes nothing live', async () => {
    const reply: GenerateResponse = { text: 'Nobody is watching.', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 4 } } as GenerateResponse;
    const { clients, published, calls } = fakeClients([], async () => ({}), [reply]);
    const outcome = await new ToolLoop(config, clients, log).run(spec({ live: false }));
    expect(outcome).toMatchObject({ kind: 'answer', text: 'Nobody is watching.' });
    expect(calls).toEqual([]);
    expect(published).toEqual([]);
  });
});

describe('the streamed model call', () => {
  it('publishes the text as it streams, a word at a time and redacted, and answers with the whole text and usage', async () => {
    const { clients, published } = fakeClients([streamOf(delta('Hello '), delta('wor'), delta('ld. Key sk-abcdefghijklmnop'), delta('qrstuv done'), finish())]);
    const outcome = await new ToolLoop(config, clients, log).run(spec({ node: 'writer' }));

    expect(published.map(({ event }) => describeEvent(event))).toEqual([
      'text_delta "Hello " @writer',
      'text_delta "world. Key " @writer',
      'text_delta "[redacted] " @writer',
      'text_delta "done" @writer',
    ]);
    expect(published.every(({ event, opts }) => event.id === 0 && event.conversationId === CONVERSATION && event.at instanceof Date && opts?.timeoutMs === PUBLISH_TIMEOUT_MS)).toBe(true);
    // What watchers saw, joined, is the answer that is stored.
    expect(outcome).toMatchObject({ kind: 'answer', text: 'Hello world. Key [redacted] done' });
    expect(published.map(({ event }) => event.textDelta!.text).join('')).toBe(outcome.kind === 'answer' ? outcome.text : '');
    expect(outcome.messages.at(-1)).toMatchObject({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'Hello world. Key [redacted] done', usage: { inputTokens: 3, outputTokens: 4 }, node: 'writer' });
  });

  it('assembles tool calls with their provider metadata, and publishes each call starting and finishing between the texts', async () => {
    const metadata = JSON.stringify({ google: { thoughtSignature: 'sig-1' } });
    const { clients, published, calls, toolCalls } = fakeClients([
      streamOf(delta('Let me look. '), { toolCall: { id: 'c1', name: 'resources_list', argumentsJson: '{}', providerMetadataJson: metadata } }, finish('tool-calls', 10, 2)),
      streamOf(delta('There is alpha.'), finish('stop', 20, 3)),
    ]);
    const outcome = await new ToolLoop(config, clients, log).run(spec());

    expect(toolCalls).toEqual(['resources_list']);
    expect(published.map(({ event }) => describeEvent(event))).toEqual([
      'text_delta "Let me look. "',
      'tool_call_started c1 resources_list {}',
      'tool_call_finished c1 ["alpha"] false',
      // A single delta is still released a whole word at a time.
      'text_delta "There is "',
      'text_delta "alpha."',
    ]);
    if (outcome.kind !== 'answer') throw new Error('expected an answer');
    expect(outcome.messages.map((message) => [message.role, message.content, message.toolCall?.providerMetadataJson, message.usage?.inputTokens])).toEqual([
      [MessageRole.MESSAGE_ROLE_ASSISTANT, 'Let me look. ', undefined, 10],
      [MessageRole.MESSAGE_ROLE_ASSISTANT, 'Calling resources_list with {}', metadata, undefined],
      [MessageRole.MESSAGE_ROLE_TOOL, '["alpha"]', undefined, undefined],
      [MessageRole.MESSAGE_ROLE_ASSISTANT, 'There is alpha.', undefined, 20],
    ]);
    // The second call gets the call back with its provider metadata, as with Generate.
    expect(calls[1]!.request.messages.find((message) => message.toolCalls.length > 0)?.toolCalls[0]).toEqual({
      id: 'c1',
      name: 'resources_list',
      argumentsJson: '{}',
      providerMetadataJson: metadata,
    });
  });

  it("sends the node's timeout with the request and as the stream's deadline, with headroom", async () => {
    const { clients, calls } = fakeClients([streamOf(delta('ok'), finish())]);
    await new ToolLoop(config, clients, log).run(spec({ timeoutMs: 1500 }));
    expect(calls[0]!.request.timeoutMs).toBe(1500);
    expect(calls[0]!.opts).toEqual({ timeoutMs: 6500 });
  });

  it('reports a stream that fails, before or after its first event, in the category of its code', async () => {
    const failing = (code: GrpcStatus, after: GenerateStreamResponse[]): Script =>
      async function* () {
        for (const event of after) yield event;
        throw new RpcError(code, 'model gemini-2.5-flash is unavailable (HTTP 503)', '/asg.llm.v1.LlmGatewayService/GenerateStream');
      };
    const cases: [Script, string][] = [
      [failing(GrpcStatus.UNAVAILABLE, []), 'The model could not answer (transient error): model gemini-2.5-flash is unavailable (HTTP 503)'],
      [failing(GrpcStatus.DEADLINE_EXCEEDED, [delta('Half an ans')]), 'The model could not answer (transient error): '],
      [failing(GrpcStatus.INVALID_ARGUMENT, []), 'The model could not answer (invalid request error): '],
      [failing(GrpcStatus.FAILED_PRECONDITION, []), 'The model could not answer (provider error): '],
      // Cut off without its finish event: not an answer.
      [streamOf(delta('Half')), 'The model could not answer (internal error): the answer of model gemini-2.5-flash ended without its finish event'],
    ];
    for (const [script, text] of cases) {
      const { clients } = fakeClients([script]);
      const outcome = await new ToolLoop(config, clients, log).run(spec());
      expect(outcome.kind === 'answer' && outcome.text.startsWith(text), `${outcome.kind === 'answer' ? outcome.text : outcome.kind} starts with ${text}`).toBe(true);
    }
  });
});

describe('publishing live events', () => {
  it('never waits for the store: a publish that hangs, fails or throws costs the turn nothing', async () => {
    const behaviours: (() => Promise<object>)[] = [
      () => new Promise<object>(() => undefined),
      async () => {
        throw new RpcError(GrpcStatus.UNAVAILABLE, 'the store is down', '/asg.store.v1.ConversationStoreService/PublishEvent');
      },
      () => {
        throw new Error('a client that throws at once');
      },
    ];
    for (const behaviour of behaviours) {
      const { clients, toolCalls } = fakeClients(
        [streamOf({ toolCall: { id: 'c1', name: 'resources_list', argumentsJson: '{}' } }, finish('tool-calls')), streamOf(delta('There is alpha.'), finish())],
        behaviour,
      );
      // A publish that never settles would hang the turn here if the loop awaited it.
      const outcome = await new ToolLoop(config, clients, log).run(spec());
      expect(outcome).toMatchObject({ kind: 'answer', text: 'There is alpha.' });
      expect(toolCalls).toEqual(['resources_list']);
    }
  });

  it(`keeps at most ${MAX_IN_FLIGHT} publishes on their way, dropping the rest while the store does not answer`, async () => {
    const words = Array.from({ length: MAX_IN_FLIGHT + 50 }, (_, index) => delta(`w${index} `));
    const { clients, published } = fakeClients([streamOf(...words, finish())], () => new Promise<object>(() => undefined));
    const outcome = await new ToolLoop(config, clients, log).run(spec());
    expect(published).toHaveLength(MAX_IN_FLIGHT);
    expect(outcome).toMatchObject({ kind: 'answer' });
  });
});
