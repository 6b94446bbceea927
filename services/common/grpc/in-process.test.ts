/**
 * The in-process transport against a real generated definition: the llm-gateway's,
 * which mixes a unary method (Generate) and a server stream (GenerateStream). The services are
 * registered at addresses nothing listens on, so a call that went over the network instead
 * would fail; one test gives a real gRPC server to show that an unregistered address still
 * gets a grpc-js channel.
 */
import { Server } from '@grpc/grpc-js';
import { context, createContextKey, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as llm from '../../../gen/ts/asg/llm/v1/llm.js';
import {
  ChatRole,
  LlmGatewayServiceService,
  type GenerateRequest,
  type GenerateResponse,
  type GenerateStreamRequest,
  type GenerateStreamResponse,
} from '../../../gen/ts/asg/llm/v1/llm.js';
import { recordingLogger } from '../../../test/support/recording-logger.js';
import { until } from '../../../test/support/until.js';
import { runWithContext } from '../context.js';
import { registerSecret } from '../secrets.js';
import { initTelemetry } from '../telemetry.js';
import { createPromiseClient, type PromiseClient } from './client.js';
import { GrpcStatus, invalidArgument, notFound, RpcError } from './errors.js';
import { HEALTH_DEFINITION, ServingHealth } from './health.js';
import { InProcessChannels, serveInProcess, type InProcessServer } from './in-process.js';
import { messageCopies } from './message-copies.js';
import {
  createServer,
  implement,
  listen,
  shutdown,
  type HandlerContext,
  type ServiceHandlers,
  type StreamHandlerContext,
} from './server.js';

const exporter = new InMemorySpanExporter();
initTelemetry('in-process-test', [new SimpleSpanProcessor(exporter)]);

const ADDRESS = '127.0.0.1:1';
const SECRET = 'sk-in-process-test-0123456789abcdef';
registerSecret(SECRET);

/** What the handlers saw, for the tests to read. */
interface Seen {
  request?: GenerateRequest | GenerateStreamRequest;
  context?: HandlerContext['request'];
  metadata?: HandlerContext['metadata'];
  traceId?: string;
  callerKey?: unknown;
  signal?: AbortSignal;
  produced: number;
  finallyRan: boolean;
  handlerFinished: boolean;
  changedAfterwards?: boolean;
}

const CALLER_ONLY = createContextKey('test.caller-only');
let seen: Seen;
let release: () => void;
let lines: string[];
let channels: InProcessChannels;
let server: InProcessServer;
let client: PromiseClient<typeof LlmGatewayServiceService>;

const answer = (text: string): GenerateResponse => ({
  text,
  toolCalls: [],
  finishReason: 'stop',
  usage: { inputTokens: 1, outputTokens: 2 },
});

function handlers(): ServiceHandlers<typeof LlmGatewayServiceService> {
  return {
    generate: async (request, ctx) => {
      seen.request = request;
      seen.context = ctx.request;
      seen.metadata = ctx.metadata;
      seen.traceId = trace.getActiveSpan()?.spanContext().traceId;
      seen.callerKey = context.active().getValue(CALLER_ONLY);
      switch (request.model) {
        case 'echo':
          return answer(request.messages.map((message) => message.text).join(','));
        case 'kept-reference': {
          // The handler changes its response after returning it: the caller already has its own copy.
          const response = { ...answer('as returned'), extra: 'not in the proto' };
          setTimeout(() => {
            response.text = 'changed afterwards';
            seen.changedAfterwards = true;
          }, 0);
          return response;
        }
        case 'slow':
          await new Promise<void>((resolve) => (release = resolve));
          seen.handlerFinished = true;
          return answer('late');
        case 'past-the-deadline':
          // Holds the thread until its deadline has passed, then answers at once: the caller's
          // deadline timer has had no chance to run, and the answer is ready first.
          while (Date.now() <= ctx.request.deadline!) {
            // busy: no timer of the caller's can fire meanwhile
          }
          return answer('too late');
        case 'missing':
          throw notFound(`no model called missing (key ${SECRET})`);
        case 'bug':
          throw new Error(`a bug with ${SECRET} in it`);
        case 'downstream':
          throw new RpcError(GrpcStatus.RESOURCE_EXHAUSTED, 'the provider said slow down', '/x.Y/Z');
        default:
          throw invalidArgument(`unknown script ${request.model}`);
      }
    },
    generateStream: async function* (request, ctx: StreamHandlerContext): AsyncGenerator<GenerateStreamResponse> {
      seen.request = request;
      seen.context = ctx.request;
      seen.signal = ctx.signal;
      seen.traceId = trace.getActiveSpan()?.spanContext().traceId;
      try {
        switch (request.model) {
          case 'count':
            for (let i = 0; i < 3; i++) {
              seen.produced += 1;
              yield { textDelta: `delta ${i}` };
            }
            yield { finish: { finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 3 } } };
            return;
          case 'endless':
            for (let i = 0; ; i++) {
              seen.produced += 1;
              yield { textDelta: `delta ${i}` };
            }
          case 'silent':
            // Waits for its signal alone: only the caller's leaving, signal or deadline ends it.
            seen.produced += 1;
            yield { textDelta: 'first' };
            await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
            return;
          case 'fail-after-one':
            yield { textDelta: 'partial' };
            throw notFound('the model went away');
          default:
            throw invalidArgument(`unknown script ${request.model}`);
        }
      } finally {
        seen.finallyRan = true;
      }
    },
  };
}

const request = (model: string, texts: string[] = []): GenerateRequest => ({
  model,
  systemPrompt: '',
  messages: texts.map((text) => ({ role: ChatRole.CHAT_ROLE_USER, text, toolCalls: [], toolResults: [] })),
  tools: [],
});

async function drain<T>(events: AsyncIterable<T>): Promise<{ events: T[]; error?: unknown }> {
  const received: T[] = [];
  try {
    for await (const event of events) received.push(event);
    return { events: received };
  } catch (error) {
    return { events: received, error };
  }
}

beforeEach(() => {
  seen = { produced: 0, finallyRan: false, handlerFinished: false };
  lines = [];
  channels = new InProcessChannels();
  server = channels.register({
    definition: LlmGatewayServiceService,
    address: ADDRESS,
    handlers: handlers(),
    service: 'llm-test',
    log: recordingLogger('llm-test', lines),
  });
  client = createPromiseClient(LlmGatewayServiceService, ADDRESS, 'caller', 5000, {}, { inProcess: channels });
});

afterEach(async () => {
  release?.();
  client.close();
  await server.stop(Date.now());
});

describe('the in-process transport: requests and responses cross as protobuf', () => {
  it('gives the handler its own decoded copy: a request changed after the call does not reach it', async () => {
    const sent = request('echo', ['one', 'two']);
    const answered = client.generate(sent);
    sent.messages[0]!.text = 'changed by the caller';
    sent.messages.push({ role: ChatRole.CHAT_ROLE_USER, text: 'added by the caller', toolCalls: [], toolResults: [] });
    expect((await answered).text).toBe('one,two');
    expect(seen.request).not.toBe(sent);
  });

  it('gives the caller its own decoded copy of the response: what is not in the proto, or changed later, does not cross', async () => {
    const response = await client.generate(request('kept-reference'));
    await until('the handler to change what it returned', () => seen.changedAfterwards);
    expect(response).toEqual(answer('as returned'));
    expect(response).not.toHaveProperty('extra');
  });
});

describe('the in-process transport with the copies asg up gives (message-copies.ts): no object crosses', () => {
  beforeEach(() => channels.copyWith(messageCopies([llm])));

  it('gives the handler its own copy: a request changed after the call, down to its tool schemas, does not reach it', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } } };
    const sent = { ...request('echo', ['one', 'two']), tools: [{ name: 'add', description: 'adds', inputSchema: schema }] };
    const answered = client.generate(sent);
    sent.messages[0]!.text = 'changed by the caller';
    sent.messages.push({ role: ChatRole.CHAT_ROLE_USER, text: 'added by the caller', toolCalls: [], toolResults: [] });
    schema.properties.name.type = 'number';
    expect((await answered).text).toBe('one,two');
    expect(seen.request).not.toBe(sent);
    expect(seen.request?.tools[0]?.inputSchema).toEqual({ type: 'object', properties: { name: { type: 'string' } } });
    expect(seen.request?.tools[0]?.inputSchema).not.toBe(schema);
  });

  it('gives the caller its own copy of the response: what is not in the proto, or changed later, does not cross', async () => {
    const response = await client.generate(request('kept-reference'));
    await until('the handler to change what it returned', () => seen.changedAfterwards);
    expect(response).toEqual(answer('as returned'));
    expect(response).not.toHaveProperty('extra');
  });

  it('gives the handler what the bytes give it: nothing the caller added, absent optional fields absent', async () => {
    const sent = { ...request('echo', ['hi']), surplus: 1 };
    (sent.messages[0] as unknown as Record<string, unknown>).extra = true;
    await client.generate(sent);
    const viaBytes = LlmGatewayServiceService.generate.requestDeserialize(LlmGatewayServiceService.generate.requestSerialize(sent));
    expect(seen.request).toStrictEqual(viaBytes);
  });

  it('streams each message as its own copy, as the bytes give them', async () => {
    const viaCopies = await drain(client.generateStream({ ...request('count'), timeoutMs: undefined }));
    channels = new InProcessChannels();
    const bytesServer = channels.register({
      definition: LlmGatewayServiceService,
      address: ADDRESS,
      handlers: handlers(),
      service: 'llm-test',
      log: recordingLogger('llm-test', lines),
    });
    const bytesClient = createPromiseClient(LlmGatewayServiceService, ADDRESS, 'caller', 5000, {}, { inProcess: channels });
    const viaBytes = await drain(bytesClient.generateStream({ ...request('count'), timeoutMs: undefined }));
    bytesClient.close();
    await bytesServer.stop(Date.now());
    expect(viaCopies.events).toHaveLength(4);
    expect(viaCopies).toStrictEqual(viaBytes);
  });
});

describe('the in-process transport: metadata, context and spans', () => {
  it('carries session id, authorization, deadline and A2A hops as metadata, read by the server as over gRPC', async () => {
    const deadline = Date.now() + 3000;
    await runWithContext({ sessionId: 'c0ffee42', authorization: 'Bearer in-process', deadline, a2aHops: 2 }, () =>
      client.generate(request('echo')),
    );
    expect(seen.context).toEqual({ sessionId: 'c0ffee42', authorization: 'Bearer in-process', deadline, a2aHops: 2 });
    expect(seen.metadata?.get('x-session-id')).toEqual(['c0ffee42']);
    expect(seen.metadata?.get('traceparent')).toHaveLength(1);
  });

  it("runs the handler in a SERVER span of the caller's trace, inside the caller's CLIENT span, and from nothing else of the caller's context", async () => {
    const callerTraceId = await context.with(context.active().setValue(CALLER_ONLY, "the caller's own"), () =>
      trace.getTracer('test').startActiveSpan('outer', async (span) => {
        await runWithContext({ sessionId: 'feedbeef' }, () => client.generate(request('echo')));
        span.end();
        return span.spanContext().traceId;
      }),
    );
    expect(seen.traceId).toBe(callerTraceId);
    expect(seen.callerKey).toBeUndefined();
    const spans = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === callerTraceId);
    const clientSpan = spans.find((span) => span.kind === SpanKind.CLIENT && span.name === 'asg.llm.v1.LlmGatewayService/Generate');
    const serverSpan = spans.find((span) => span.kind === SpanKind.SERVER && span.name === 'asg.llm.v1.LlmGatewayService/Generate');
    expect(clientSpan?.attributes).toMatchObject({ 'asg.service': 'caller', 'network.transport': 'inproc' });
    expect(serverSpan?.attributes).toMatchObject({ 'asg.service': 'llm-test', 'asg.session_id': 'feedbeef' });
    expect(serverSpan?.parentSpanContext?.spanId).toBe(clientSpan?.spanContext().spanId);
  });
});

describe('the in-process transport: deadlines', () => {
  it('fails the caller with DEADLINE_EXCEEDED when its deadline passes, while the handler still runs', async () => {
    const error = await client.generate(request('slow'), { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: GrpcStatus.DEADLINE_EXCEEDED, method: '/asg.llm.v1.LlmGatewayService/Generate' });
    expect(seen.handlerFinished).toBe(false);
    expect(seen.context?.deadline).toBeDefined();
  });

  it('answers DEADLINE_EXCEEDED for a response that is ready only after the deadline, as over gRPC', async () => {
    const error = await client.generate(request('past-the-deadline'), { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: GrpcStatus.DEADLINE_EXCEEDED });
  });

  it('caps the call by the deadline of the request being served', async () => {
    const inherited = Date.now() + 150;
    const error = await runWithContext({ sessionId: '', deadline: inherited }, () => client.generate(request('slow'))).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: GrpcStatus.DEADLINE_EXCEEDED });
    expect(seen.context?.deadline).toBe(inherited);
  });

  it('does not start a handler for a call whose deadline has already passed', async () => {
    const error = await runWithContext({ sessionId: '', deadline: Date.now() - 1 }, () => client.generate(request('echo'))).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: GrpcStatus.DEADLINE_EXCEEDED });
    expect(seen.request).toBeUndefined();
  });
});

describe('the in-process transport: errors as over gRPC', () => {
  it('keeps the code of a service error, its message redacted', async () => {
    const error = await client.generate(request('missing')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: GrpcStatus.NOT_FOUND, method: '/asg.llm.v1.LlmGatewayService/Generate' });
    expect((error as RpcError).message).toContain('no model called missing');
    expect((error as RpcError).message).not.toContain(SECRET);
  });

  it('keeps the code of a downstream RpcError', async () => {
    await expect(client.generate(request('downstream'))).rejects.toMatchObject({
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      message: 'the provider said slow down',
    });
  });

  it('answers INTERNAL naming the method for anything else, and logs it', async () => {
    const error = (await client.generate(request('bug')).catch((e: unknown) => e)) as RpcError;
    expect(error).toMatchObject({ code: GrpcStatus.INTERNAL });
    expect(error.message).toMatch(/^internal error in \/asg\.llm\.v1\.LlmGatewayService\/Generate: a bug with /);
    expect(error.message).not.toContain(SECRET);
    expect(lines.some((line) => line.startsWith('llm-test error unhandled error in handler'))).toBe(true);
  });

  it('answers UNIMPLEMENTED for a method the registered service does not serve', async () => {
    const partial = new InProcessChannels();
    const generateOnly = { generate: LlmGatewayServiceService.generate };
    const only = partial.register({
      definition: generateOnly,
      address: ADDRESS,
      handlers: { generate: async () => answer('only') },
      service: 'partial',
      log: recordingLogger('partial', []),
    });
    const full = createPromiseClient(LlmGatewayServiceService, ADDRESS, 'caller', 5000, {}, { inProcess: partial });
    const { error } = await drain(full.generateStream(request('count')));
    expect(error).toMatchObject({ code: GrpcStatus.UNIMPLEMENTED });
    await only.stop();
  });
});

describe('the in-process transport: server streams', () => {
  it("streams every message in order with the caller's context, and ends", async () => {
    const { events, error } = await runWithContext({ sessionId: 'abcdef12' }, () => drain(client.generateStream(request('count'))));
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { textDelta: 'delta 0' },
      { textDelta: 'delta 1' },
      { textDelta: 'delta 2' },
      { finish: { finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 3 } } },
    ]);
    expect(seen.context?.sessionId).toBe('abcdef12');
    expect(seen.finallyRan).toBe(true);
  });

  it('is pulled: the handler runs no further ahead than the caller reads', async () => {
    const stream = client.generateStream(request('endless'))[Symbol.asyncIterator]();
    await stream.next();
    await stream.next();
    // Turns of the event loop in which a handler that pushed would run ahead.
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(seen.produced).toBe(2);
    await stream.return?.();
  });

  it('ends with the code of an error the handler throws after a message', async () => {
    const { events, error } = await drain(client.generateStream(request('fail-after-one')));
    expect(events).toEqual([{ textDelta: 'partial' }]);
    expect(error).toMatchObject({
      code: GrpcStatus.NOT_FOUND,
      message: 'the model went away',
      method: '/asg.llm.v1.LlmGatewayService/GenerateStream',
    });
  });

  it("leaving the loop aborts the handler's signal and runs its finally blocks", async () => {
    const received: string[] = [];
    for await (const event of client.generateStream(request('endless'))) {
      received.push(event.textDelta ?? '');
      if (received.length === 3) break;
    }
    expect(received).toEqual(['delta 0', 'delta 1', 'delta 2']);
    await until("the handler's finally", () => seen.finallyRan);
    expect(seen.signal?.aborted).toBe(true);
    expect(String(seen.signal?.reason)).toContain('the client cancelled /asg.llm.v1.LlmGatewayService/GenerateStream');
  });

  it("the caller's signal cancels it: CANCELLED to the caller, the handler's signal aborted and its finally run", async () => {
    const cancel = new AbortController();
    const stream = client.generateStream(request('silent'), { signal: cancel.signal })[Symbol.asyncIterator]();
    expect(await stream.next()).toEqual({ done: false, value: { textDelta: 'first' } });
    // The handler now waits for its signal, and the caller for the next message.
    const next = stream.next().catch((e: unknown) => e);
    cancel.abort();
    expect(await next).toMatchObject({ code: GrpcStatus.CANCELLED });
    await until("the handler's finally", () => seen.finallyRan);
    expect(seen.signal?.aborted).toBe(true);
  });

  it("the deadline ends it: DEADLINE_EXCEEDED to the caller, the handler's signal aborted and its finally run", async () => {
    const { events, error } = await drain(client.generateStream(request('silent'), { timeoutMs: 150 }));
    expect(events).toEqual([{ textDelta: 'first' }]);
    expect(error).toMatchObject({ code: GrpcStatus.DEADLINE_EXCEEDED });
    await until("the handler's finally", () => seen.finallyRan);
    expect(String(seen.signal?.reason)).toContain('the deadline of /asg.llm.v1.LlmGatewayService/GenerateStream passed');
  });
});

describe('the in-process transport: a server that stops', () => {
  it('refuses calls after its stop with UNAVAILABLE, as a stopped server does', async () => {
    expect((await client.generate(request('echo', ['before']))).text).toBe('before');
    await server.stop();
    await expect(client.generate(request('echo'))).rejects.toMatchObject({
      code: GrpcStatus.UNAVAILABLE,
      message: `the server at ${ADDRESS} stopped`,
    });
    const { error } = await drain(client.generateStream(request('count')));
    expect(error).toMatchObject({ code: GrpcStatus.UNAVAILABLE });
  });

  it("lets a call in flight finish within the stop's deadline, and the stop waits for it", async () => {
    const inFlight = client.generate(request('slow'));
    await until('the slow call to start', () => seen.request);
    let stopped = false;
    const stopping = server.stop(Date.now() + 5000).then(() => (stopped = true));
    await expect(client.generate(request('echo'))).rejects.toMatchObject({ code: GrpcStatus.UNAVAILABLE });
    expect(stopped).toBe(false);
    release();
    expect((await inFlight).text).toBe('late');
    await stopping;
  });

  it("cuts a call still in flight at the stop's deadline: UNAVAILABLE", async () => {
    const inFlight = client.generate(request('slow')).catch((e: unknown) => e);
    await until('the slow call to start', () => seen.request);
    await server.stop(Date.now() + 100);
    expect(await inFlight).toMatchObject({ code: GrpcStatus.UNAVAILABLE });
  });

  it('does not wait for a call its caller gave up on, nor for one whose deadline had passed before it started', async () => {
    const gaveUp = await client.generate(request('slow'), { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(gaveUp).toMatchObject({ code: GrpcStatus.DEADLINE_EXCEEDED });
    const expired = await runWithContext({ sessionId: '', deadline: Date.now() - 1 }, () => client.generate(request('echo'))).catch(
      (e: unknown) => e,
    );
    expect(expired).toMatchObject({ code: GrpcStatus.DEADLINE_EXCEEDED });
    // Nothing is in flight any more: the stop ends at once, long before its deadline.
    let stopped = false;
    const stopping = server.stop(Date.now() + 60_000).then(() => (stopped = true));
    await until('the stop to end', () => stopped);
    await stopping;
  });

  it('a closed client refuses calls as grpc-js does', async () => {
    client.close();
    await expect(client.generate(request('echo'))).rejects.toThrow('Channel has been shut down');
  });
});

describe('the in-process transport: health and addresses served elsewhere', () => {
  it('serves grpc.health.v1 beside the service: Check and Watch as the library answers them, the watch ended by a stop', async () => {
    const health = new ServingHealth(createServer(), [LlmGatewayServiceService]);
    const address = '127.0.0.1:2';
    const serving = serveInProcess(
      channels,
      { definition: LlmGatewayServiceService, address, handlers: handlers(), service: 'llm-test', log: recordingLogger('llm-test', lines) },
      health,
    );
    const probe = createPromiseClient(HEALTH_DEFINITION, address, 'probe', 2000, {}, { inProcess: channels });
    expect(await probe.Check({ service: 'asg.llm.v1.LlmGatewayService' })).toEqual({ status: 'NOT_SERVING' });
    await expect(probe.Check({ service: 'asg.other.v1.Other' })).rejects.toMatchObject({ code: GrpcStatus.NOT_FOUND });
    const watched: string[] = [];
    const watching = (async () => {
      try {
        for await (const { status } of probe.Watch({ service: '' })) watched.push(status);
      } catch (error) {
        return error;
      }
    })();
    await until('the first status', () => watched.length === 1);
    health.markServing();
    await until('SERVING', () => watched.length === 2);
    await health.beginStop(Date.now() + 1000, 0);
    expect(await watching).toMatchObject({ code: GrpcStatus.UNAVAILABLE });
    expect(watched).toEqual(['NOT_SERVING', 'SERVING', 'NOT_SERVING']);
    const { events } = await drain(probe.Watch({ service: 'asg.other.v1.Other' }, { timeoutMs: 100 }));
    expect(events).toEqual([{ status: 'SERVICE_UNKNOWN' }]);
    await serving.stop();
    await expect(probe.Check({ service: '' })).rejects.toMatchObject({ code: GrpcStatus.UNAVAILABLE });
  });

  it('calls an address this process does not serve over gRPC, as without the transport', async () => {
    const grpcServer = new Server();
    let overTheNetwork: string | undefined;
    grpcServer.addService(
      LlmGatewayServiceService,
      implement(
        LlmGatewayServiceService,
        'remote',
        {
          ...handlers(),
          generate: async (_request, ctx) => {
            overTheNetwork = String(ctx.metadata.get('user-agent')[0]);
            return answer('remote');
          },
        },
        recordingLogger('remote', []),
      ),
    );
    const remote = `127.0.0.1:${await listen(grpcServer, '127.0.0.1:0')}`;
    try {
      const elsewhere = createPromiseClient(LlmGatewayServiceService, remote, 'caller', 5000, {}, { inProcess: channels });
      expect((await elsewhere.generate(request('any'))).text).toBe('remote');
      expect(overTheNetwork).toContain('grpc-node-js');
      elsewhere.close();
    } finally {
      await shutdown(grpcServer);
    }
  });
});
