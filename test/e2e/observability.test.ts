/**
 * Logs and metrics of a real mesh: `asg up` with a scripted model and
 * the mcp-resources server. Its log is JSON lines, each line of a turn carrying trace_id,
 * session_id and conversation_id, with no secret in any line; LOG_LEVEL is honoured; GET /metrics
 * shows the turns, their latency histogram, the model, tool and approval counters — and, with
 * auth on, only to an admin unless `metrics.public` says otherwise.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  ASG,
  defaultConfig,
  spawnProcess,
  startAgent,
  tempDir,
  testEnvironment,
  TEST_BEARER,
  TEST_GEMINI_KEY,
  type AgentProcess,
} from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { parseLogLines, type LogLine } from '../support/log-lines.js';
import { freePort } from '../support/ports.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { until } from '../support/until.js';

let model: ScriptedModelServer;
let agent: AgentProcess;

/** One sample of the Prometheus text: the value of `name` whose labels include every one of `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1], pair[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

async function metrics(url: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(`${url}/metrics`, { headers, signal: AbortSignal.timeout(10_000) });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

describe('a real turn through `asg up`', () => {
  let logs: LogLine[];
  let malformed: string[];
  let conversationId: string;
  let sessionId: string;
  let before: string;

  beforeAll(async () => {
    model = await startScriptedModel(resourceAgentScript);
    agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, env: { LOG_LEVEL: 'debug' } });
    before = await metrics(agent.url);
    // One turn that calls a tool (not destructive) and answers, with the caller's bearer token forwarded.
    const created = await post(`${agent.url}/conversations`, { message: 'list resources' }, { Authorization: `Bearer ${TEST_BEARER}` });
    expect(created.status).toBe(201);
    conversationId = created.body.conversation.id;
    sessionId = created.body.conversation.session_id;
    // One that pauses for an approval (resources_add is destructive), then the approval.
    const paused = await post(`${agent.url}/conversations/${conversationId}/messages`, {
      message: 'add resource observed-one with value 7',
    });
    expect(paused.body.result.waiting_approval).toBe(true);
    const decided = await post(`${agent.url}/approvals/${paused.body.result.approval.uuid}`, { approved: true });
    expect(decided.status).toBe(200);
    await until('the request line of the approval', () =>
      parseLogLines(agent.output()).lines.some(
        (line) => line.msg === 'request' && line.path === `/approvals/${paused.body.result.approval.uuid}`,
      ),
    );
    ({ lines: logs, malformed } = parseLogLines(agent.output()));
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    await model?.close();
  });

  it('writes its log as JSON lines only', () => {
    expect(malformed).toEqual([]);
    expect(logs.length).toBeGreaterThan(10);
    for (const line of logs) {
      expect(line).toMatchObject({
        level: expect.stringMatching(/^(debug|info|warn|error)$/),
        svc: expect.any(String),
        msg: expect.any(String),
      });
      expect(Date.parse(line.time)).not.toBeNaN();
    }
  });

  it('gives every line of the turn its trace_id, session_id and conversation_id, in every service the turn reached', () => {
    const turn = logs.filter((line) => line.conversation_id === conversationId);
    const services = new Set(turn.map((line) => line.svc));
    // The gateway's request lines, the orchestrator running the turn, and (at debug) the RPCs served by the services it called.
    for (const svc of ['gateway', 'orchestrator', 'llm-gateway', 'tool-broker', 'conversation-store']) expect(services).toContain(svc);
    for (const line of turn) {
      expect(line.trace_id, JSON.stringify(line)).toMatch(/^[0-9a-f]{32}$/);
      expect(line.session_id, JSON.stringify(line)).toBe(sessionId);
    }
    // Lines with the session and a trace but not the conversation: only those written before the conversation existed.
    const unattributed = logs.filter(
      (line) => line.session_id === sessionId && line.trace_id && !line.conversation_id && line.svc !== 'gateway',
    );
    for (const line of unattributed) expect(['rpc'], JSON.stringify(line)).toContain(line.msg);
  });

  it('keeps one trace id across the services of one request', () => {
    const send = logs.find(
      (line) => line.svc === 'gateway' && line.msg === 'request' && line.path === `/conversations/${conversationId}/messages`,
    )!;
    expect(send).toBeDefined();
    const sameTrace = logs.filter((line) => line.trace_id === send.trace_id);
    expect(sameTrace.map((line) => line.svc)).toEqual(expect.arrayContaining(['gateway', 'orchestrator', 'llm-gateway']));
  });

  it('honours LOG_LEVEL=debug (the RPC lines are debug)', () => {
    expect(logs.some((line) => line.level === 'debug' && line.msg === 'rpc')).toBe(true);
  });

  it('writes no secret in any line', () => {
    const output = agent.output();
    expect(output).not.toContain(TEST_GEMINI_KEY);
    expect(output).not.toContain(TEST_BEARER);
  });

  it('GET /metrics shows the turns, their latency histogram, and the model, tool and approval counters', async () => {
    const text = await metrics(agent.url);
    const grew = (name: string, labels: Record<string, string>) => (sample(text, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    expect(grew('asg_turns_total', { outcome: 'answered' })).toBeGreaterThanOrEqual(1);
    expect(grew('asg_turns_total', { outcome: 'waiting_approval' })).toBe(1);
    expect(grew('asg_turn_duration_seconds_count', { outcome: 'answered' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'asg_turn_duration_seconds_bucket', { outcome: 'answered', le: '+Inf' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'asg_turn_duration_seconds_sum', { outcome: 'answered' })).toBeGreaterThan(0);
    // Three model calls: the list's call and its summary, the add's call, and the summary after the approval.
    expect(grew('asg_model_calls_total', { provider: 'gemini', model: 'gemini-2.5-flash', outcome: 'ok' })).toBeGreaterThanOrEqual(3);
    expect(grew('asg_model_tokens_total', { provider: 'gemini', model: 'gemini-2.5-flash', kind: 'input' })).toBeGreaterThan(0);
    expect(grew('asg_model_tokens_total', { provider: 'gemini', model: 'gemini-2.5-flash', kind: 'output' })).toBeGreaterThan(0);
    expect(grew('asg_tool_calls_total', { tool: 'resources_list', outcome: 'ok' })).toBe(1);
    expect(grew('asg_tool_calls_total', { tool: 'resources_add', outcome: 'ok' })).toBe(1);
    expect(grew('asg_approvals_decided_total', { outcome: 'approved' })).toBe(1);
    expect(sample(text, 'asg_approvals_pending')).toBe(0);
    // Every series once, though five services recorded into it (one MeterProvider per process).
    const typeLines = text.split('\n').filter((line) => line.startsWith('# TYPE asg_turns_total '));
    expect(typeLines).toHaveLength(1);
  });

  it('counts a pending approval while it waits', async () => {
    const paused = await post(`${agent.url}/conversations/${conversationId}/messages`, {
      message: 'add resource waiting-one with value 1',
    });
    expect(paused.body.result.waiting_approval).toBe(true);
    expect(sample(await metrics(agent.url), 'asg_approvals_pending')).toBe(1);
    const rejected = await post(`${agent.url}/approvals/${paused.body.result.approval.uuid}`, { approved: false });
    expect(rejected.status).toBe(200);
    const text = await metrics(agent.url);
    expect(sample(text, 'asg_approvals_pending')).toBe(0);
    expect(sample(text, 'asg_approvals_decided_total', { outcome: 'rejected' })).toBe(1);
  });
});

describe('LOG_LEVEL=warn', () => {
  it("leaves out the info lines, over the configuration's log.level", async () => {
    const quiet = await startScriptedModel(resourceAgentScript);
    const dir = tempDir();
    const port = await freePort();
    const configFile = join(dir, 'agent.yaml');
    writeFileSync(configFile, stringify({ ...defaultConfig(dir), port, log: { level: 'debug' } }));
    const agent = spawnProcess(
      process.execPath,
      [ASG, 'up', '--config', configFile],
      testEnvironment(quiet.geminiBaseUrl, { LOG_LEVEL: 'warn' }),
    );
    try {
      await until(
        'the agent to answer /health',
        async () =>
          (await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined))?.status === 200,
        60_000,
      );
      expect((await post(`http://127.0.0.1:${port}/conversations`, { message: 'list resources' })).status).toBe(201);
    } finally {
      await agent.stop();
      await quiet.close();
    }
    const { lines, malformed } = parseLogLines(agent.output());
    expect(malformed).toEqual([]);
    expect(lines.filter((line) => line.level === 'info' || line.level === 'debug')).toEqual([]);
  }, 90_000);
});

describe('GET /metrics with auth on', () => {
  it('is for admins, unless metrics.public is true', async () => {
    const scripted = await startScriptedModel(resourceAgentScript);
    const tokens = {
      tokens: [
        { name: 'ops', token_env: 'OPS_TOKEN', roles: ['admin'] },
        { name: 'user', token_env: 'USER_TOKEN', roles: ['chat'] },
      ],
    };
    const env = { OPS_TOKEN: 'ops-token-0123456789abcdef', USER_TOKEN: 'user-token-0123456789abcdef' };
    const closed = await startAgent({ geminiBaseUrl: scripted.geminiBaseUrl, config: { auth: tokens }, env });
    const open = await startAgent({ geminiBaseUrl: scripted.geminiBaseUrl, config: { auth: tokens, metrics: { public: true } }, env });
    try {
      expect((await get(`${closed.url}/metrics`)).status).toBe(401);
      expect((await get(`${closed.url}/metrics`, { Authorization: `Bearer ${env.USER_TOKEN}` })).status).toBe(403);
      expect(await metrics(closed.url, { Authorization: `Bearer ${env.OPS_TOKEN}` })).toContain('# TYPE');
      expect(await metrics(open.url)).toContain('# TYPE');
    } finally {
      await Promise.all([closed.stop(), open.stop()]);
      await scripted.close();
    }
  }, 90_000);
});
