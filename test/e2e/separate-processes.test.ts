/**
 * One process or many, and only the store holds state: the
 * five services started apart with `asg serve`, wired by addresses from the config and the
 * environment; the orchestrator is killed between stop and go and a fresh one goes on.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASG, defaultConfig, spawnProcess, tempDir, testEnvironment, type AsgProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { freePort } from '../support/ports.js';
import { resourceNames } from '../support/resources-db.js';
import { logLineWhere } from '../support/log-lines.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

let model: ScriptedModelServer;
const running = new Map<string, AsgProcess>();
let dir: string;
let configFile: string;
let ports: Record<'conversation_store' | 'llm_gateway' | 'tool_broker' | 'orchestrator', number>;
let url: string;

/** Each service's metrics port (a service alone serves GET /metrics beside its gRPC port). */
const metricsPorts = new Map<string, number>();

async function serve(service: string, listen?: number): Promise<AsgProcess> {
  if (!metricsPorts.has(service)) metricsPorts.set(service, await freePort());
  const env = testEnvironment(model.geminiBaseUrl, {
    ...(listen === undefined ? {} : { ASG_LISTEN: `127.0.0.1:${listen}` }),
    ASG_METRICS_PORT: String(metricsPorts.get(service)),
  });
  const process_ = spawnProcess(process.execPath, [ASG, 'serve', service, '--config', configFile], env);
  running.set(service, process_);
  await process_.waitForLine(
    logLineWhere((line) => line.msg === 'service up'),
    30_000,
  );
  return process_;
}

async function metricsOf(service: string): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${metricsPorts.get(service)}/metrics`, { signal: AbortSignal.timeout(10_000) });
  expect(response.status).toBe(200);
  return response.text();
}

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  dir = tempDir();
  ports = {
    conversation_store: await freePort(),
    llm_gateway: await freePort(),
    tool_broker: await freePort(),
    orchestrator: await freePort(),
  };
  const gatewayPort = await freePort();
  configFile = join(dir, 'agent.yaml');
  const services = Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, `127.0.0.1:${port}`]));
  writeFileSync(configFile, stringify({ ...defaultConfig(dir), port: gatewayPort, services }));
  // Dependencies first, as an orchestrator would start them; each binds loopback only.
  await serve('conversation-store', ports.conversation_store);
  await serve('llm-gateway', ports.llm_gateway);
  await serve('tool-broker', ports.tool_broker);
  await serve('orchestrator', ports.orchestrator);
  await serve('gateway');
  url = `http://127.0.0.1:${gatewayPort}`;
});

afterAll(async () => {
  for (const service of [...running.values()].reverse()) await service.stop();
  await model?.close();
});

describe('services in separate processes', () => {
  it('answer through gRPC between processes', async () => {
    expect((await get(`${url}/health`)).body).toEqual({ status: 'ok' });
    const tools = await get(`${url}/tools`);
    expect(tools.body.tools.map((tool: any) => tool.name).sort()).toEqual(['resources_add', 'resources_list', 'resources_remove']);
    const listed = await post(`${url}/conversations`, { message: 'list resources' });
    expect(listed.status).toBe(201);
    expect(listed.body.result.waiting_approval).toBe(false);
  });

  it('each serve their own metrics, on their metrics port (the gateway on its HTTP port too)', async () => {
    expect(await metricsOf('orchestrator')).toMatch(/^asg_turn_duration_seconds_count\{outcome="answered"\} [1-9]/m);
    expect(await metricsOf('llm-gateway')).toMatch(
      /^asg_model_calls_total\{provider="gemini",model="gemini-2\.5-flash",outcome="ok"\} [1-9]/m,
    );
    expect(await metricsOf('tool-broker')).toMatch(/^asg_tool_calls_total\{tool="resources_list",outcome="ok"\} [1-9]/m);
    expect(await metricsOf('conversation-store')).toMatch(/^asg_approvals_pending 0$/m);
    // Only what each records: the store calls no model.
    expect(await metricsOf('conversation-store')).not.toContain('asg_model_calls_total');
    const gateway = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
    expect(gateway.status).toBe(200);
    expect(await gateway.text()).toContain('# TYPE target_info gauge');
    // And on its metrics port, which a scraper inside the cluster reads without the admin role.
    expect(await metricsOf('gateway')).toContain('# TYPE target_info gauge');
    const other = await fetch(`http://127.0.0.1:${metricsPorts.get('orchestrator')}/health`, { signal: AbortSignal.timeout(10_000) });
    expect(other.status).toBe(404);
  });

  it('go on after the orchestrator that stopped the turn is gone (only the store holds state)', async () => {
    const stop = await post(`${url}/conversations`, { message: 'add resource apart-1 with value 8' });
    expect(stop.body.result.waiting_approval).toBe(true);

    expect(await running.get('orchestrator')!.stop()).toBe(0);
    const down = await post(`${url}/approvals/${stop.body.result.approval.uuid}`, { approved: true });
    expect(down.status).toBe(503);
    expect(resourceNames(join(dir, 'resources.db'))).not.toContain('apart-1');

    await serve('orchestrator', ports.orchestrator);
    const go = await post(`${url}/approvals/${stop.body.result.approval.uuid}`, { approved: true });
    expect(go.status).toBe(200);
    expect(go.body.conversation.status).toBe('active');
    expect(resourceNames(join(dir, 'resources.db'))).toEqual(['apart-1']);
  });
});
