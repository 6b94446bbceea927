import { Server } from '@grpc/grpc-js';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolBrokerServiceService, type CallToolResponse } from '../../../gen/ts/asg/tools/v1/tools.js';
import { currentContext, runWithContext } from '../context.js';
import { createLogger } from '../log.js';
import { initTelemetry } from '../telemetry.js';
import { createPromiseClient } from './client.js';
import { GrpcStatus, notFound, RpcError } from './errors.js';
import { implement, listen, shutdown } from './server.js';

const exporter = new InMemorySpanExporter();
initTelemetry('grpc-test', [new SimpleSpanProcessor(exporter)]);

/** What the server saw of its caller, echoed back in the response text. */
let server: Server;
let address: string;

beforeAll(async () => {
  server = new Server();
  server.addService(
    ToolBrokerServiceService,
    implement(
      ToolBrokerServiceService,
      'echo-service',
      {
        listTools: async () => ({ tools: [], servers: [] }),
        callTool: async (request): Promise<CallToolResponse> => {
          if (request.name === 'missing') throw notFound('no tool called missing');
          const seen = { context: currentContext(), traceId: trace.getActiveSpan()?.spanContext().traceId };
          return { text: JSON.stringify(seen), isError: false, server: 'echo' };
        },
      },
      createLogger('test'),
    ),
  );
  address = `127.0.0.1:${await listen(server, '127.0.0.1:0')}`;
});

afterAll(async () => {
  await shutdown(server);
});

describe('gRPC client and server wrappers', () => {
  it('carry session id, authorization, deadline and trace context from caller to handler', async () => {
    const client = createPromiseClient(ToolBrokerServiceService, address, 'caller', 60_000);
    const deadline = Date.now() + 3000;
    const { text, callerTraceId } = await runWithContext({ sessionId: 'feedbeef', authorization: 'Bearer abc', deadline }, async () =>
      trace.getTracer('test').startActiveSpan('outer', async (span) => {
        const response = await client.callTool({ name: 'echo', argumentsJson: '{}', approvalUuid: '', unapprovedReason: '' });
        span.end();
        return { text: response.text, callerTraceId: span.spanContext().traceId };
      }),
    );
    const seen = JSON.parse(text);
    expect(seen.context.sessionId).toBe('feedbeef');
    expect(seen.context.authorization).toBe('Bearer abc');
    // The caller's deadline crossed the wire, not the client's 60 s default. gRPC sends it as
    // a relative timeout, so the server's copy is later by the time in transit: bounded
    // loosely, since a loaded machine may take a while.
    expect(seen.context.deadline).toBeGreaterThanOrEqual(deadline - 20);
    expect(seen.context.deadline).toBeLessThan(deadline + 10_000);
    expect(seen.traceId).toBe(callerTraceId);
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === callerTraceId);
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['asg.tools.v1.ToolBrokerService/CallTool', 'outer']));
    client.close();
  });

  it('sends no authorization when the caller had none, and an empty session id stays empty', async () => {
    const client = createPromiseClient(ToolBrokerServiceService, address, 'caller', 5000);
    const { text } = await client.callTool({ name: 'echo', argumentsJson: '{}', approvalUuid: '', unapprovedReason: '' });
    expect(JSON.parse(text).context).toMatchObject({ sessionId: '' });
    expect(JSON.parse(text).context.authorization).toBeUndefined();
    client.close();
  });

  it('keeps the status code and message of a service error', async () => {
    const client = createPromiseClient(ToolBrokerServiceService, address, 'caller', 5000);
    const error = await client
      .callTool({ name: 'missing', argumentsJson: '{}', approvalUuid: '', unapprovedReason: '' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: GrpcStatus.NOT_FOUND, message: 'no tool called missing' });
    client.close();
  });

  it('gives every call a deadline', async () => {
    const client = createPromiseClient(ToolBrokerServiceService, '127.0.0.1:1', 'caller', 200);
    const error = await client.listTools({}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect([GrpcStatus.DEADLINE_EXCEEDED, GrpcStatus.UNAVAILABLE]).toContain((error as RpcError).code);
    client.close();
  });
});
