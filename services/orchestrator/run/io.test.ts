/**
 * The model call is a stream (GenerateStream) while someone watches, and a turn publishes live
 * events: text deltas, tool calls starting and finishing. AgentIo's part is
 * checked against AgentIo; what the tool loop used to do (answer with the whole text and its
 * usage, run tool calls between the texts, the node's deadline, a failed model call's
 * category) is checked through the run driver, over a fake mesh, in simple mode and in a
 * small agent tree.
 */
import { describe, expect, it } from 'vitest';
import type { GenerateRequest } from '../../../gen/ts/asg/llm/v1/llm.js';
import { MessageRole, type ConversationEvent } from '../../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus, RpcError } from '../../common/grpc/errors.js';
import {
  CONVERSATION,
  delta,
  FakeMesh,
  finish,
  simpleEnv,
  startTurn,
  testLog,
  toolCall,
  treeEnv,
  type ModelTurn,
} from '../../../test/support/orchestrator-mesh.js';
import { HEADROOM_MS } from '../clients.js';
import { AgentIo } from './io.js';
import { MAX_IN_FLIGHT, PUBLISH_TIMEOUT_MS } from './live-events.js';
import type { RunAnswer } from './types.js';

const request: GenerateRequest = { model: 'gemini-2.5-flash', systemPrompt: 'You manage resources.', messages: [], tools: [] };
const watched = { conversationId: CONVERSATION, watched: true };

function describeEvent(event: ConversationEvent): string {
  if (event.textDelta)
    return `text_delta ${JSON.stringify(event.textDelta.text)}${event.textDelta.node ? ` @${event.textDelta.node}` : ''}`;
  if (event.toolCallStarted)
    return `tool_call_started ${event.toolCallStarted.id} ${event.toolCallStarted.name} ${event.toolCallStarted.argumentsJson}`;
  if (event.toolCallFinished)
    return `tool_call_finished ${event.toolCallFinished.id} ${event.toolCallFinished.result} ${event.toolCallFinished.isError}`;
  return JSON.stringify(event);
}

function responseOf(answer: RunAnswer): string {
  if (answer.kind !== 'answered') throw new Error(`expected an answer, got ${JSON.stringify(answer)}`);
  return answer.response;
}

/** A stream that fails with `code`, after `before`. */
function failing(code: GrpcStatus, before: ReturnType<typeof delta>[] = []): ModelTurn {
  return async function* () {
    yield* before;
    throw new RpcError(code, 'model gemini-2.5-flash is unavailable (HTTP 503)', '/asg.llm.v1.LlmGatewayService/GenerateStream');
  };
}

describe('AgentIo: the model call', () => {
  it('uses the unary Generate and publishes nothing while nobody watches', async () => {
    const mesh = new FakeMesh({ model: [[delta('Nobody is watching.'), finish()]] });
    const reply = await new AgentIo(mesh.clients, testLog).generate({ conversationId: CONVERSATION, watched: false }, request, {});
    expect(reply).toMatchObject({ text: 'Nobody is watching.', usage: { inputTokens: 3, outputTokens: 4 } });
    expect(mesh.modelCalls.map((call) => call.streamed)).toEqual([false]);
    expect(mesh.published).toEqual([]);
  });

  it('publishes the text as it streams, a word at a time and redacted, and answers with the whole reply', async () => {
    const metadata = JSON.stringify({ google: { thoughtSignature: 'sig-1' } });
    const mesh = new FakeMesh({
      model: [
        [
          delta('Hello '),
          delta('wor'),
          delta('ld. Key sk-abcdefghijklmnop'),
          delta('qrstuv done'),
          toolCall('c1', 'resources_list', {}, metadata),
          finish('tool-calls'),
        ],
      ],
    });
    const reply = await new AgentIo(mesh.clients, testLog).generate({ ...watched, node: 'writer' }, request, { timeoutMs: 1234 });

    expect(mesh.published.map(({ event }) => describeEvent(event))).toEqual([
      'text_delta "Hello " @writer',
      'text_delta "world. Key " @writer',
      'text_delta "[redacted] " @writer',
      'text_delta "done" @writer',
    ]);
    expect(
      mesh.published.every(
        ({ event, opts }) =>
          event.id === 0 && event.conversationId === CONVERSATION && event.at instanceof Date && opts?.timeoutMs === PUBLISH_TIMEOUT_MS,
      ),
    ).toBe(true);
    // Generate's reply for the same answer; the driver redacts the text it stores.
    expect(reply).toEqual({
      text: 'Hello world. Key sk-abcdefghijklmnopqrstuv done',
      toolCalls: [{ id: 'c1', name: 'resources_list', argumentsJson: '{}', providerMetadataJson: metadata }],
      finishReason: 'tool-calls',
      usage: { inputTokens: 3, outputTokens: 4 },
    });
    expect(mesh.modelCalls).toEqual([{ request, opts: { timeoutMs: 1234 }, streamed: true }]);
  });

  it("fails with the stream's own error, before or after its first event, and with INTERNAL when it is cut off", async () => {
    const cases: [ModelTurn, GrpcStatus, string][] = [
      [failing(GrpcStatus.UNAVAILABLE), GrpcStatus.UNAVAILABLE, 'model gemini-2.5-flash is unavailable (HTTP 503)'],
      [
        failing(GrpcStatus.DEADLINE_EXCEEDED, [delta('Half an ans')]),
        GrpcStatus.DEADLINE_EXCEEDED,
        'model gemini-2.5-flash is unavailable (HTTP 503)',
      ],
      [[delta('Half')], GrpcStatus.INTERNAL, 'the answer of model gemini-2.5-flash ended without its finish event'],
    ];
    for (const [turn, code, message] of cases) {
      const mesh = new FakeMesh({ model: [turn] });
      await expect(new AgentIo(mesh.clients, testLog).generate(watched, request, {})).rejects.toMatchObject({ code, message });
    }
  });
});

describe('AgentIo: tool calls', () => {
  it('publishes a call starting and finishing around it, and nothing while nobody watches', async () => {
    const mesh = new FakeMesh();
    const io = new AgentIo(mesh.clients, testLog);
    const call = { id: 'c1', name: 'resources_list' };
    const run = () => io.callTool('resources_list', { all: true });
    expect(await io.withCallEvents(CONVERSATION, call, { all: true }, run)).toEqual({
      text: '["alpha"]',
      isError: false,
      server: 'resources',
    });
    expect(mesh.published.map(({ event }) => describeEvent(event))).toEqual([
      'tool_call_started c1 resources_list {"all":true}',
      'tool_call_finished c1 ["alpha"] false',
    ]);
    await io.withCallEvents(CONVERSATION, call, {}, run, false);
    expect(mesh.published).toHaveLength(2);
  });

  it("sends the approval or the reason to run unapproved, and reports the broker's failure as the call's error", async () => {
    const mesh = new FakeMesh({
      callTool: async (request) => {
        if (request.name === 'resources_delete')
          throw new RpcError(
            GrpcStatus.FAILED_PRECONDITION,
            'resources_delete needs an approval',
            '/asg.tools.v1.ToolBrokerService/CallTool',
          );
        return { text: 'ok', isError: false };
      },
    });
    const io = new AgentIo(mesh.clients, testLog);
    expect(await io.callTool('resources_list', {}, 'approval-1', 'auto')).toEqual({ text: 'ok', isError: false, server: 'resources' });
    expect(await io.callTool('resources_delete', { id: 'alpha' })).toEqual({
      text: 'resources_delete failed: resources_delete needs an approval',
      isError: true,
    });
    expect(
      mesh.toolCalls.map(({ name, argumentsJson, approvalUuid, unapprovedReason }) => [
        name,
        JSON.parse(argumentsJson),
        approvalUuid,
        unapprovedReason,
      ]),
    ).toEqual([
      ['resources_list', {}, 'approval-1', 'auto'],
      ['resources_delete', { id: 'alpha' }, '', ''],
    ]);
  });

  it("reports a server's request for input (input_required) as a call that waits for a human, with the question and the state to go on with; the answer goes back with it", async () => {
    const requests = {
      guest: {
        method: 'elicitation/create',
        params: {
          message: 'Who is the room for?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
      },
    };
    const mesh = new FakeMesh({
      callTool: async (request) =>
        request.requestState === undefined
          ? { text: '', isError: false, server: 'rooms', inputRequired: { inputRequests: requests, requestState: 'room=A' } }
          : { text: 'booked', isError: false, server: 'rooms' },
    });
    const io = new AgentIo(mesh.clients, testLog);
    const asked = await io.callTool('book_room', { room: 'A' });
    expect(asked).toEqual({
      text: expect.stringContaining(
        'MCP server rooms asks for input to finish book_room: "Who is the room for?" — answer with: name (string, required)',
      ),
      isError: false,
      input: { server: 'rooms', requestState: 'room=A', requests },
    });
    expect(
      await io.callTool('book_room', { room: 'A' }, 'approval-1', '', {
        requestState: 'room=A',
        responses: { guest: { action: 'accept', content: { name: 'Ada' } } },
      }),
    ).toEqual({ text: 'booked', isError: false, server: 'rooms' });
    expect(mesh.toolCalls.at(-1)).toMatchObject({
      approvalUuid: 'approval-1',
      requestState: 'room=A',
      inputResponsesJson: JSON.stringify({ guest: { action: 'accept', content: { name: 'Ada' } } }),
    });
  });
});

describe('a run through the driver: the model/tool loop', () => {
  it('calls the model with the unary Generate and publishes nothing live while nobody watches', async () => {
    const mesh = new FakeMesh({ model: [[delta('Nobody is watching.'), finish()]] });
    const { answer } = await startTurn(mesh, simpleEnv());
    expect(responseOf(answer)).toBe('Nobody is watching.');
    expect(mesh.modelCalls.map((call) => call.streamed)).toEqual([false]);
    expect(mesh.published).toEqual([]);
  });

  it('answers with the whole text, redacted, and stores it with its usage; watchers saw the same text (simple mode)', async () => {
    const mesh = new FakeMesh({
      watched: true,
      model: [[delta('Hello '), delta('wor'), delta('ld. Key sk-abcdefghijklmnop'), delta('qrstuv done'), finish()]],
    });
    const { answer } = await startTurn(mesh, simpleEnv());

    expect(responseOf(answer)).toBe('Hello world. Key [redacted] done');
    expect(mesh.published.map(({ event }) => event.textDelta!.text).join('')).toBe(responseOf(answer));
    expect(mesh.writes.at(-1)!.messages).toEqual([
      { role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: 'Hello world. Key [redacted] done', usage: { inputTokens: 3, outputTokens: 4 } },
    ]);
    expect(mesh.conversation.messages.at(-1)).toMatchObject({
      content: 'Hello world. Key [redacted] done',
      usage: { inputTokens: 3, outputTokens: 4 },
    });
  });

  it("tags a tree node's streamed text and stored answer with the node", async () => {
    const mesh = new FakeMesh({ watched: true, model: [[delta('Hello '), delta('world.'), finish()]] });
    const { answer } = await startTurn(mesh, treeEnv({ name: 'writer', type: 'llm', prompt: 'Write.' }));

    expect(responseOf(answer)).toBe('Hello world.');
    expect(mesh.published.map(({ event }) => describeEvent(event))).toEqual(['text_delta "Hello " @writer', 'text_delta "world." @writer']);
    expect(mesh.conversation.messages.at(-1)).toMatchObject({
      role: MessageRole.MESSAGE_ROLE_ASSISTANT,
      content: 'Hello world.',
      usage: { inputTokens: 3, outputTokens: 4 },
      node: 'writer',
    });
  });

  it('runs tool calls with their provider metadata, and publishes each call starting and finishing between the texts', async () => {
    const metadata = JSON.stringify({ google: { thoughtSignature: 'sig-1' } });
    const mesh = new FakeMesh({
      watched: true,
      model: [
        [delta('Let me look. '), toolCall('c1', 'resources_list', {}, metadata), finish('tool-calls', 10, 2)],
        [delta('There is alpha.'), finish('stop', 20, 3)],
      ],
    });
    const { answer } = await startTurn(mesh, simpleEnv());

    expect(responseOf(answer)).toBe('There is alpha.');
    expect(mesh.toolCalls.map((call) => call.name)).toEqual(['resources_list']);
    expect(mesh.published.map(({ event }) => describeEvent(event))).toEqual([
      'text_delta "Let me look. "',
      'tool_call_started c1 resources_list {}',
      'tool_call_finished c1 ["alpha"] false',
      // A single delta is still released a whole word at a time.
      'text_delta "There is "',
      'text_delta "alpha."',
    ]);
    expect(
      mesh.writes
        .at(-1)!
        .messages.map((message) => [message.role, message.content, message.toolCall?.providerMetadataJson, message.usage?.inputTokens]),
    ).toEqual([
      [MessageRole.MESSAGE_ROLE_ASSISTANT, 'Let me look. ', undefined, 10],
      [MessageRole.MESSAGE_ROLE_ASSISTANT, 'Calling resources_list with {}', metadata, undefined],
      [MessageRole.MESSAGE_ROLE_TOOL, '["alpha"]', undefined, undefined],
      [MessageRole.MESSAGE_ROLE_ASSISTANT, 'There is alpha.', undefined, 20],
    ]);
    // The second call gets the call back with its provider metadata, as with Generate.
    expect(mesh.modelCalls[1]!.request.messages.find((message) => message.toolCalls.length > 0)?.toolCalls[0]).toEqual({
      id: 'c1',
      name: 'resources_list',
      argumentsJson: '{}',
      providerMetadataJson: metadata,
    });
  });

  it("sends a tree node's timeout with the request and as the call's deadline, with headroom, streamed or not", async () => {
    for (const watchedNow of [true, false]) {
      const mesh = new FakeMesh({ watched: watchedNow, model: [[delta('ok'), finish()]] });
      await startTurn(mesh, treeEnv({ name: 'root', type: 'sequential', agents: [{ name: 'quick', type: 'llm', timeout: 1500 }] }));
      expect(mesh.modelCalls.map(({ request: sent, opts, streamed }) => [sent.timeoutMs, opts, streamed])).toEqual([
        [1500, { timeoutMs: 1500 + HEADROOM_MS }, watchedNow],
      ]);
    }
  });

  it('leaves the deadline to llm.timeout when the node has none (simple mode)', async () => {
    const mesh = new FakeMesh({ watched: true, model: [[delta('ok'), finish()]] });
    await startTurn(mesh, simpleEnv());
    expect(mesh.modelCalls.map(({ request: sent, opts }) => [sent.timeoutMs, opts])).toEqual([[undefined, {}]]);
  });

  it('answers a model call that fails, before or after its first event, in the category of its code', async () => {
    const cases: [ModelTurn, boolean, string][] = [
      [
        failing(GrpcStatus.UNAVAILABLE),
        true,
        'The model could not answer (transient error): model gemini-2.5-flash is unavailable (HTTP 503)',
      ],
      [failing(GrpcStatus.DEADLINE_EXCEEDED, [delta('Half an ans')]), true, 'The model could not answer (transient error): '],
      [failing(GrpcStatus.INVALID_ARGUMENT), false, 'The model could not answer (invalid request error): '],
      [failing(GrpcStatus.FAILED_PRECONDITION), true, 'The model could not answer (provider error): '],
      [failing(GrpcStatus.PERMISSION_DENIED), false, 'The model could not answer (provider error): '],
      // Cut off without its finish event: not an answer.
      [
        [delta('Half')],
        true,
        'The model could not answer (internal error): the answer of model gemini-2.5-flash ended without its finish event',
      ],
    ];
    for (const [turn, watchedNow, text] of cases) {
      const mesh = new FakeMesh({ watched: watchedNow, model: [turn] });
      const response = responseOf((await startTurn(mesh, simpleEnv())).answer);
      expect(response.startsWith(text), `${response} starts with ${text}`).toBe(true);
      expect(mesh.conversation.messages.at(-1)).toMatchObject({ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: response });
    }
  });

  it("answers a tree node's failed model call in its category, as the node's output", async () => {
    const mesh = new FakeMesh({ watched: true, model: [failing(GrpcStatus.RESOURCE_EXHAUSTED)] });
    const { answer } = await startTurn(
      mesh,
      treeEnv({ name: 'root', type: 'sequential', agents: [{ name: 'quick', type: 'llm', timeout: 1500 }] }),
    );
    expect(responseOf(answer)).toBe('The model could not answer (transient error): model gemini-2.5-flash is unavailable (HTTP 503)');
    expect(mesh.conversation.messages.at(-1)).toMatchObject({ content: responseOf(answer), node: 'quick' });
  });
});

describe('publishing live events', () => {
  it('never waits for the store: a publish that hangs, fails or throws costs the run nothing', async () => {
    const behaviours: (() => Promise<object>)[] = [
      () => new Promise<object>(() => undefined),
      async () => {
        throw new RpcError(GrpcStatus.UNAVAILABLE, 'the store is down', '/asg.store.v1.ConversationStoreService/PublishEvent');
      },
      () => {
        throw new Error('a client that throws at once');
      },
    ];
    for (const publishEvent of behaviours) {
      const mesh = new FakeMesh({
        watched: true,
        publishEvent,
        model: [
          [toolCall('c1', 'resources_list'), finish('tool-calls')],
          [delta('There is alpha.'), finish()],
        ],
      });
      // A publish that never settles would hang the run here if the driver or AgentIo awaited it.
      const { answer } = await startTurn(mesh, simpleEnv());
      expect(responseOf(answer)).toBe('There is alpha.');
      expect(mesh.toolCalls.map((call) => call.name)).toEqual(['resources_list']);
      expect(mesh.published.length).toBeGreaterThan(0);
    }
  });

  it(`keeps at most ${MAX_IN_FLIGHT} publishes on their way, dropping the rest while the store does not answer`, async () => {
    const words = Array.from({ length: MAX_IN_FLIGHT + 50 }, (_, index) => delta(`w${index} `));
    const mesh = new FakeMesh({ model: [[...words, finish()]], publishEvent: () => new Promise<object>(() => undefined) });
    const reply = await new AgentIo(mesh.clients, testLog).generate(watched, request, {});
    expect(mesh.published).toHaveLength(MAX_IN_FLIGHT);
    expect(reply.text.split(' ')).toHaveLength(MAX_IN_FLIGHT + 51);
  });
});
