import './context.js';
import { createRequire } from 'node:module';
import {
  context,
  isSpanContextValid,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { randomHex } from './random-hex.js';
import type { BasicTracerProvider, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * Tracing without auto-instrumentation: every hop (HTTP in the gateway, each gRPC client
 * and server call, outbound HTTP to providers and MCP servers) opens its own span and the
 * W3C `traceparent` travels explicitly in gRPC metadata and HTTP headers. Explicit
 * propagation works the same in one process or many, with or without ESM loader hooks.
 * Spans are exported over OTLP/HTTP only when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
export const SESSION_ATTRIBUTE = 'asg.session_id';
export const SERVICE_ATTRIBUTE = 'asg.service';

let provider: BasicTracerProvider | undefined;

/**
 * The tracing SDK and its OTLP exporter, loaded only when spans are recorded: they take a
 * tenth of a second or more to load, which every start would pay for nothing. They
 * are CommonJS packages, which `import` loads from the same files, so this is the one copy.
 */
function tracingSdk() {
  const load = createRequire(import.meta.url);
  return {
    ...(load('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base')),
    ...(load('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')),
    ...(load('@opentelemetry/resources') as typeof import('@opentelemetry/resources')),
  };
}

export function initTelemetry(processName: string, extraProcessors: SpanProcessor[] = []): void {
  if (provider) return;
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const exporting = Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  // With nowhere to send spans, none are recorded: the API's non-recording spans still
  // carry a caller's traceparent through every hop, at a fraction of the cost.
  if (!exporting && extraProcessors.length === 0) return;
  const { BasicTracerProvider, BatchSpanProcessor, OTLPTraceExporter, resourceFromAttributes } = tracingSdk();
  provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME ?? processName }),
    spanProcessors: [...extraProcessors, ...(exporting ? [new BatchSpanProcessor(new OTLPTraceExporter())] : [])],
  });
  trace.setGlobalTracerProvider(provider);
}

export async function shutdownTelemetry(): Promise<void> {
  await provider?.shutdown().catch(() => undefined);
}

export function tracer(service: string): Tracer {
  return trace.getTracer(`asg.${service}`);
}

/** Reads a W3C trace context from any carrier of header-like pairs. */
function extractTraceContext(get: (key: string) => string | undefined): Context {
  return propagation.extract(
    context.active(),
    {},
    {
      keys: () => ['traceparent', 'tracestate'],
      get: (_carrier, key) => get(key),
    },
  );
}

/**
 * The trace context of a request arriving from outside: the caller's `traceparent`, or —
 * when the caller sent none and no spans are recorded — a new trace id, so that every hop
 * still carries one `traceparent` (not sampled) to the services and servers it calls.
 * When spans are recorded, the first span starts the new trace itself.
 */
export function entryTraceContext(get: (key: string) => string | undefined): Context {
  const extracted = extractTraceContext(get);
  const caller = trace.getSpanContext(extracted);
  if (provider || (caller && isSpanContextValid(caller))) return extracted;
  return trace.setSpanContext(extracted, {
    traceId: randomHex(16),
    spanId: randomHex(8),
    traceFlags: TraceFlags.NONE,
    isRemote: true,
  });
}

/** Writes the active trace context (traceparent, tracestate) through `set`. */
export function injectTraceContext(set: (key: string, value: string) => void): void {
  propagation.inject(context.active(), {}, { set: (_carrier, key, value) => set(key, value) });
}

/** Runs `fn` inside a new active span, recording errors and ending the span. */
export async function withSpan<T>(
  service: string,
  name: string,
  kind: SpanKind,
  attributes: Record<string, string | number | boolean>,
  fn: (span: Span) => Promise<T>,
  parent: Context = context.active(),
): Promise<T> {
  const span = tracer(service).startSpan(name, { kind, attributes: { [SERVICE_ATTRIBUTE]: service, ...attributes } }, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await fn(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A fetch that opens a CLIENT span and sends `traceparent` with the request. */
export function tracedFetch(service: string, inner: typeof fetch = fetch): typeof fetch {
  return (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
    const { origin, pathname } = new URL(url);
    return withSpan(
      service,
      `HTTP ${method}`,
      SpanKind.CLIENT,
      { 'http.request.method': method, 'url.full': origin + pathname },
      async (span) => {
        const headers = new Headers(init?.headers ?? (typeof input === 'object' && 'headers' in input ? input.headers : undefined));
        injectTraceContext((key, value) => headers.set(key, value));
        const response = await inner(input, { ...init, headers });
        span.setAttribute('http.response.status_code', response.status);
        return response;
      },
    );
  }) as typeof fetch;
}

export { SpanKind };
