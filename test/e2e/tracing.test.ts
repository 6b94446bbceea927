/**
 * Tracing (issue 2 item 11): one request is one trace across every service, with the
 * session id as a span attribute, exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

let model: ScriptedModelServer;
let receiver: OtlpReceiver;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  receiver = await startOtlpReceiver();
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' },
  });
});

afterAll(async () => {
  await agent?.stop();
  await receiver?.close();
  await model?.close();
});

async function until(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('one trace per request across all services', () => {
  it('continues the caller trace through gateway, orchestrator, store, llm-gateway and tool-broker', async () => {
    const traceId = randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
    const created = await post(`${agent.url}/conversations`, { message: 'list resources' }, { traceparent, 'X-Session-ID': '0badcafe' });
    expect(created.status).toBe(201);

    const services = () => new Set(receiver.spans.filter((s) => s.traceId === traceId).map((s) => s.attributes['asg.service']));
    await until(() => ['gateway', 'orchestrator', 'conversation-store', 'llm-gateway', 'tool-broker'].every((name) => services().has(name)));

    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    // SERVER spans of every gRPC service, so the hops really crossed gRPC.
    for (const service of ['orchestrator', 'conversation-store', 'llm-gateway', 'tool-broker']) {
      expect(spans.some((s) => s.attributes['asg.service'] === service && s.kind === 2)).toBe(true);
    }
    expect(spans.filter((s) => s.kind === 2).every((s) => s.attributes['asg.session_id'] === '0badcafe')).toBe(true);
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
