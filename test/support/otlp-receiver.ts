import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as received over OTLP/HTTP JSON, flattened for assertions. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  scope: string;
  serviceName: string;
  attributes: Record<string, unknown>;
  /** Duration in milliseconds. */
  durationMs: number;
}

export interface OtlpReceiver {
  /** Set as OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}

function plain(value: OtlpValue): unknown {
  return value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.boolValue ?? value.doubleValue;
}

/** A real OTLP/HTTP (JSON) traces endpoint that keeps what it receives. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const payload = JSON.parse(body) as { resourceSpans?: any[] };
        for (const resourceSpans of payload.resourceSpans ?? []) {
          const serviceName = plain(
            (resourceSpans.resource?.attributes ?? []).find((a: any) => a.key === 'service.name')?.value ?? {},
          ) as string;
          for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
            for (const span of scopeSpans.spans ?? []) {
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId || undefined,
                name: span.name,
                kind: span.kind,
                scope: scopeSpans.scope?.name ?? '',
                serviceName,
                attributes: Object.fromEntries((span.attributes ?? []).map((a: any) => [a.key, plain(a.value)])),
                durationMs: Number(BigInt(span.endTimeUnixNano ?? 0) - BigInt(span.startTimeUnixNano ?? 0)) / 1e6,
              });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
