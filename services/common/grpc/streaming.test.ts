/**
 * Server streaming in the shared gRPC wrappers, over real gRPC on loopback: the llm-gateway's
 * definition mixes a unary method (Generate) and a server-streaming one (GenerateStream), so
 * it serves here with handlers that report what they saw of their caller.
 */
import { Server } from '@grpc/grpc-js';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LlmGatewayServiceService, type GenerateStreamRequest, type GenerateStreamResponse } from '../../../gen/ts/asg/llm/v1/llm.js';
import { currentContext, runWithContext } from '../context.js';
import { createLogger } from '../log.js';
import { initTelemetry } from '../telemetry.js';
import { createPromiseClient, type PromiseClient } from './client.js';
import { GrpcStatus, invalidArgument, notFound, RpcError, unavailable } from './errors.js';
import { implement, listen, shutdown, type StreamHandlerContext } from './server.js';

const exporter = new InMemorySpanExporter();
initTelemetry('grpc-streaming-test', [new SimpleSpanProcessor(exporter)]);

/** What each streaming handler saw of its call, by the model name the test sent. */
const seenSignals = new Map<string, AbortSignal>();

/** A handler whose behaviour the request's model name picks. */
async function* scriptedStream(request: GenerateStreamRequest, ctx: StreamHandlerContext): AsyncGenerator<GenerateStreamResponse> {
  seenSignals.set(request.model, ctx.signal);
  const seen = { context: currentContext(), traceId: trace.getActiveSpan()?.spanContext().traceId };
  switch (request.model) {
    case 'echo':
      yield { textDelta: JSON.stringify(seen) };
      yield { textDelta: 'two' };
      yield { finish: { finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 2 } } };
      return;
    case 'fail-after-one':
      yield { textDelta: 'partial' };
      throw unavailable('the model went away mid-answer');
    case 'fail-at-once':
      throw notFound('no model called fail-at-once');
    case 'crash':
      yield { textDelta: 'partial' };
      throw new Error('a bug in the handler');
    case 'endless':
      // Yields until the call is cancelled, as a handler must: its signal is the only way it learns.
      for (let count = 0; !ctx.signal.aborted; count += 1) {
        yield { textDelta: `delta ${count} ` };
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return;
    case 'silent':
      // Waits for the signal alone: only the deadline ends this call.
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      return;
    default:
      throw invalidArgument(`unknown script ${request.model}`);
  }
}

let server: Server;
let address: string;
let client: PromiseClient<typeof LlmGatewayServiceService>;

beforeAll(async () => {
  server = new Server();
  server.addService(
    LlmGatewayServiceService,
    implement(
      LlmGatewayServiceService,
      'stream-service',
      {
        generate: async (request) => ({
          text: `unary ${request.model}`,
          toolCalls: [],
          finishReason: 'stop',
          usage: { inputTokens: 0, outputTokens: 0 },
        }),
        generateStream: scriptedStream,
      },
      createLogger('test'),
    ),
  );
  address = `127.0.0.1:${await listen(server, '127.0.0.1:0')}`;
  client = createPromiseClient(LlmGatewayServiceService, address, 'caller', 5000);
});

afterAll(async () => {
  client.close();
  await shutdown(server);
});

afterEach(() => {
  seenSignals.clear();
});

const streamRequest = (model: string): GenerateStreamRequest => ({ model, systemPrompt: '', messages: [], tools: [] });

/** Every event until the stream ends, and the error it ended with, if any. */
async function drain(events: AsyncIterable<GenerateStreamResponse>): Promise<{ events: GenerateStreamResponse[]; error?: unknown }> {
  const received: GenerateStreamResponse[] = [];
  try {
    for await (const event of events) received.push(event);
    return { events: received };
  } catch (error) {
    return { events: received, error };
  }
}

describe('server streaming in the gRPC wrappers', () => {
  it('carries session id, authorization, deadline and trace context from caller to the generator', async () => {
    const deadline = Date.now() + 3000;
    const sent = Date.now();
    const { events, callerTraceId } = await runWithContext(
      { sessionId: 'c0ffee42', authorization: 'Bearer stream-token', deadline },
      async () =>
        trace.getTracer('test').startActiveSpan('outer', async (span) => {
          const result = await drain(client.generateStream(streamRequest('echo')));
          span.end();
          return { events: result.events, callerTraceId: span.spanContext().traceId };
        }),
    );
    const answered = Date.now();
    expect(events).toHaveLength(3);
    const seen = JSON.parse(events[0]!.textDelta!);
    expect(seen.context.sessionId).toBe('c0ffee42');
    expect(seen.context.authorization).toBe('Bearer stream-token');
    // The deadline travels as the time left (grpc-timeout, whole ms rounded up) and the server adds it
    // to its own clock: never before the caller's, and later by at most the time the call was on its way.
    expect(seen.context.deadline).toBeGreaterThanOrEqual(deadline);
    expect(seen.context.deadline).toBeLessThanOrEqual(deadline + (answered - sent) + 1);
    expect(seen.traceId).toBe(callerTraceId);
    expect(events.slice(1)).toEqual([
      { textDelta: 'two' },
      { finish: { finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 2 } } },
    ]);
    // One CLIENT and one SERVER span for the stream, both in the caller's trace, both ended.
    const streamSpans = exporter
      .getFinishedSpans()
      .filter((span) => span.spanContext().traceId === callerTraceId && span.name === 'asg.llm.v1.LlmGatewayService/GenerateStream');
    expect(streamSpans.map((span) => span.kind).sort()).toEqual([1, 2]);
  });

  it('takes metadata and deadline from where the method was called, not from where the stream is read', async () => {
    const events = runWithContext({ sessionId: 'abcdef12' }, () => client.generateStream(streamRequest('echo')));
    const { events: received } = await drain(events);
    expect(JSON.parse(received[0]!.textDelta!).context.sessionId).toBe('abcdef12');
  });

  it('serves the unary method of the same definition as before', async () => {
    expect(await client.generate({ model: 'plain', systemPrompt: '', messages: [], tools: [] })).toMatchObject({ text: 'unary plain' });
  });

  it('ends the stream with the code and message of an error the generator throws after an event', async () => {
    const { events, error } = await drain(client.generateStream(streamRequest('fail-after-one')));
    expect(events).toEqual([{ textDelta: 'partial' }]);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({
      code: GrpcStatus.UNAVAILABLE,
      message: 'the model went away mid-answer',
      method: '/asg.llm.v1.LlmGatewayService/GenerateStream',
    });
  });

  it('keeps the code of an error thrown before any event', async () => {
    const { events, error } = await drain(client.generateStream(streamRequest('fail-at-once')));
    expect(events).toEqual([]);
    expect(error).toMatchObject({ code: GrpcStatus.NOT_FOUND, message: 'no model called fail-at-once' });
  });

  it('answers INTERNAL, naming the method, for an error that is not a service error', async () => {
    const { error } = await drain(client.generateStream(streamRequest('crash')));
    expect(error).toMatchObject({
      code: GrpcStatus.INTERNAL,
      message: 'internal error in /asg.llm.v1.LlmGatewayService/GenerateStream: a bug in the handler',
    });
  });

  it("cancels the call when the caller leaves the loop, which aborts the generator's signal", async () => {
    const received: string[] = [];
    for await (const event of client.generateStream(streamRequest('endless'))) {
      received.push(event.textDelta ?? '');
      if (received.length === 3) break;
    }
    expect(received).toEqual(['delta 0 ', 'delta 1 ', 'delta 2 ']);
    await expect.poll(() => seenSignals.get('endless')?.aborted, { timeout: 3000 }).toBe(true);
    expect(String(seenSignals.get('endless')?.reason)).toContain('the client cancelled /asg.llm.v1.LlmGatewayService/GenerateStream');
  });

  it("gives the stream a deadline, which aborts the generator's signal and reaches the caller as DEADLINE_EXCEEDED", async () => {
    const { error } = await drain(client.generateStream(streamRequest('silent'), { timeoutMs: 200 }));
    expect(error).toMatchObject({ code: GrpcStatus.DEADLINE_EXCEEDED });
    await expect.poll(() => seenSignals.get('silent')?.aborted, { timeout: 3000 }).toBe(true);
  });

  it('refuses a definition whose method streams its requests', () => {
    const definition = { upload: { ...LlmGatewayServiceService.generate, path: '/test.Upload/Upload', requestStream: true } };
    expect(() => implement(definition as never, 'upload-service', { upload: async () => ({}) } as never, createLogger('test'))).toThrow(
      'upload-service: /test.Upload/Upload streams its requests; only unary and server-streaming methods are supported',
    );
  });
});
