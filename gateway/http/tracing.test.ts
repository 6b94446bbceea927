import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { configSchema } from '../../services/common/config/schema.js';
import { configSlice } from '../../services/common/config/slices.js';
import type { Logger } from '../../services/common/log.js';
import { initTelemetry, shutdownTelemetry } from '../../services/common/telemetry.js';
import { startGateway } from '../index.js';

// Telemetry is process-global; vitest runs each test file in its own process (pool: forks).
const exporter = new InMemorySpanExporter();
initTelemetry('gateway-tracing-test', [new SimpleSpanProcessor(exporter)]);

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';

describe('request tracing', () => {
  let gateway: Awaited<ReturnType<typeof startGateway>>;

  beforeAll(async () => {
    gateway = await startGateway({
      config: configSlice(configSchema.parse({ host: '127.0.0.1', port: 0 }), 'gateway'),
      log: quiet,
      // Port 1 refuses connections: the gRPC call fails, but its span is still recorded.
      peers: { orchestrator: '127.0.0.1:1', conversationStore: '127.0.0.1:1' },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await shutdownTelemetry();
  });

  it('opens a SERVER span under the caller’s traceparent, with the gRPC call inside it', async () => {
    const response = await fetch(`${gateway.url}/conversations`, {
      method: 'POST',
      headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`, 'X-Session-ID': 'c0ffee42', 'content-type': 'application/json' },
      body: '{"message": "hi"}',
    });
    expect(response.status).toBe(503);

    let server: ReadableSpan | undefined;
    await vi.waitFor(() => {
      server = exporter.getFinishedSpans().find((span) => span.kind === SpanKind.SERVER);
      expect(server).toBeDefined();
    });
    expect(server!.spanContext().traceId).toBe(TRACE_ID);
    expect(server!.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(server!.name).toBe('POST /conversations');
    expect(server!.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/conversations',
      'http.response.status_code': 503,
      'asg.session_id': 'c0ffee42',
    });
    expect(server!.status.code).toBe(SpanStatusCode.ERROR);

    const client = exporter.getFinishedSpans().find((span) => span.kind === SpanKind.CLIENT);
    expect(client?.name).toBe('asg.orchestrator.v1.OrchestratorService/CreateConversation');
    expect(client?.spanContext().traceId).toBe(TRACE_ID);
    expect(client?.parentSpanContext?.spanId).toBe(server!.spanContext().spanId);
    expect(client?.attributes['asg.session_id']).toBe('c0ffee42');
  });

  it('starts a new trace without a traceparent and leaves successful requests unmarked', async () => {
    exporter.reset();
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
    let server: ReadableSpan | undefined;
    await vi.waitFor(() => {
      server = exporter.getFinishedSpans().find((span) => span.kind === SpanKind.SERVER);
      expect(server).toBeDefined();
    });
    expect(server!.spanContext().traceId).not.toBe(TRACE_ID);
    expect(server!.parentSpanContext).toBeUndefined();
    expect(server!.attributes['http.route']).toBe('/health');
    expect(server!.status.code).toBe(SpanStatusCode.UNSET);
  });
});
