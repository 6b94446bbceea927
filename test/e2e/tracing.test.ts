/**
 * Tracing: one request is one trace across every service, with the
 * session id as a span attribute, exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set —
 * whether the services of `asg up` call each other in process or over loopback gRPC.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { until } from '../support/until.js';

let model: ScriptedModelServer;
let receiver: OtlpReceiver;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await model?.close();
});

/** The spans of one request, sent with its own traceparent, once every service has exported its part. */
async function traceOfOneRequest(agent: AgentProcess, sessionId: string) {
  const traceId = randomBytes(16).toString('hex');
  const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
  const created = await post(`${agent.url}/conversations`, { message: 'list resources' }, { traceparent, 'X-Session-ID': sessionId });
  expect(created.status).toBe(201);
  const services = () => new Set(receiver.spans.filter((s) => s.traceId === traceId).map((s) => s.attributes['asg.service']));
  await until(
    'a span of every service',
    () => ['gateway', 'orchestrator', 'conversation-store', 'llm-gateway', 'tool-broker'].every((name) => services().has(name)),
    15_000,
  );
  return { traceId, spans: receiver.spans.filter((s) => s.traceId === traceId) };
}

// OTLP's span kinds.
const SERVER = 2;
const CLIENT = 3;

describe.each([
  { transport: 'in-process (grpc.in_process, the default of asg up)', inProcess: true },
  { transport: 'loopback gRPC (grpc.in_process: false)', inProcess: false },
])('one trace per request across all services, $transport', ({ inProcess }) => {
  let agent: AgentProcess;

  beforeAll(async () => {
    agent = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' },
      ...(!inProcess && { config: { grpc: { in_process: false } } }),
    });
  });

  afterAll(async () => {
    await agent?.stop();
  });

  it('continues the caller trace through gateway, orchestrator, store, llm-gateway and tool-broker', async () => {
    const sessionId = inProcess ? '0badcafe' : '0badbeef';
    const { traceId, spans } = await traceOfOneRequest(agent, sessionId);
    // SERVER spans of every gRPC service, so the hops really crossed the services' gRPC edges.
    for (const service of ['orchestrator', 'conversation-store', 'llm-gateway', 'tool-broker']) {
      expect(spans.some((s) => s.attributes['asg.service'] === service && s.kind === SERVER)).toBe(true);
    }
    expect(spans.filter((s) => s.kind === SERVER).every((s) => s.attributes['asg.session_id'] === sessionId)).toBe(true);
    // Every call between services took the transport the configuration asked for.
    const calls = spans.filter((s) => s.kind === CLIENT && s.attributes['rpc.system'] === 'grpc');
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((s) => (s.attributes['network.transport'] === 'inproc') === inProcess)).toBe(true);
    // The trace reached the model provider too.
    const modelRequest = model.requests.find((r) => r.headers.traceparent?.includes(traceId));
    expect(modelRequest).toBeDefined();
    // No span of this request belongs to another trace: every parent is in the trace or is the caller's.
    const ids = new Set(spans.map((s) => s.spanId));
    const roots = spans.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId));
    expect(roots).toHaveLength(1);
    expect(roots[0]!.attributes['asg.service']).toBe('gateway');
  });
});
