/**
 * Session ids and secrets: the session id
 * is taken or made at the entry point, stored and reused; API keys and bearer tokens reach
 * the services that need them and nothing else — no response, log line or stored file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpResourcesHttp } from '../../services/mcp-resources/index.js';
import { startAgent, tempDir, TEST_BEARER, TEST_GEMINI_KEY, type AgentProcess } from '../support/agent-process.js';
import { filesContaining } from '../support/files.js';
import { get, post, type JsonResponse } from '../support/http.js';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { logLines, logLineWhere, type LogLine } from '../support/log-lines.js';
import { join } from 'node:path';

let model: ScriptedModelServer;
let agent: AgentProcess;
let mcp: Awaited<ReturnType<typeof startMcpResourcesHttp>>;
let proxy: RecordingProxy;
const responses: JsonResponse[] = [];

async function call(method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = method === 'GET' ? await get(`${agent.url}${path}`, headers) : await post(`${agent.url}${path}`, body, headers);
  responses.push(response);
  return response;
}

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  mcp = await startMcpResourcesHttp({ dbPath: join(tempDir(), 'resources.db'), host: '127.0.0.1', port: 0 });
  proxy = await startRecordingProxy(mcp.url);
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    config: { mcp_servers: [{ name: 'resources', url: `${proxy.url}/mcp` }] },
  });
});

afterAll(async () => {
  await agent?.stop();
  await proxy?.close();
  await mcp?.close();
  await model?.close();
});

describe('session id: taken or made at the entry point, stored and reused', () => {
  it('takes a valid X-Session-ID and stores it on the conversation', async () => {
    const created = await call('POST', '/conversations', {}, { 'X-Session-ID': 'abcdef12' });
    expect(created.body.conversation.session_id).toBe('abcdef12');
    expect(created.headers.get('x-session-id')).toBe('abcdef12');
  });

  it('normalises case and refuses ids of the wrong shape', async () => {
    expect((await call('POST', '/conversations', {}, { 'X-Session-ID': 'ABCDEF34' })).body.conversation.session_id).toBe('abcdef34');
    const bad = await call('POST', '/conversations', {}, { 'X-Session-ID': 'not-a-session-id"\n' });
    expect(bad.body.conversation.session_id).toMatch(/^[0-9a-f]{8}$/);
    expect(bad.body.conversation.session_id).not.toBe('not-a-se');
  });

  it('makes one when none is given and reuses it for later requests of the conversation', async () => {
    const created = await call('POST', '/conversations', {});
    const sid = created.body.conversation.session_id;
    expect(sid).toMatch(/^[0-9a-f]{8}$/);
    const id = created.body.conversation.id;
    const sent = await call('POST', `/conversations/${id}/messages`, { message: 'list resources' });
    expect(sent.headers.get('x-session-id')).toBe(sid);
    const fetched = await call('GET', `/conversations/${id}`);
    expect(fetched.body.conversation.session_id).toBe(sid);
    // Every service logged its lines about this request with the same sid.
    const about = (svc: string, test: (line: LogLine) => boolean = () => true) =>
      logLineWhere((line) => line.session_id === sid && line.svc === svc && test(line));
    await agent.waitForLine(about('gateway', (line) => line.path === `/conversations/${id}/messages`));
    await agent.waitForLine(about('gateway', (line) => line.path === `/conversations/${id}`));
    await agent.waitForLine(about('orchestrator'));
  });

  it('logs a sid on every request line', async () => {
    await call('GET', '/health');
    await agent.waitForLine(logLineWhere((line) => line.svc === 'gateway' && line.path === '/health'));
    const requestLines = logLines(agent.output()).filter((line) => line.svc === 'gateway' && line.msg === 'request');
    expect(requestLines.length).toBeGreaterThan(3);
    for (const line of requestLines) expect(line.session_id).toMatch(/^[0-9a-f]{8}$/);
  });
});

describe('secrets: in no response, log line or stored file', () => {
  it('forwards the bearer token to the HTTP MCP server on each call', async () => {
    const seenBefore = proxy.headers.length;
    const created = await call('POST', '/conversations', { message: 'list resources' }, { Authorization: `Bearer ${TEST_BEARER}` });
    expect(created.body.result.waiting_approval).toBe(false);
    const calls = proxy.headers.slice(seenBefore);
    expect(calls.some((headers) => headers.authorization === `Bearer ${TEST_BEARER}`)).toBe(true);
    // A request without a token forwards none.
    const seen = proxy.headers.length;
    await call('POST', '/conversations', { message: 'list resources' });
    expect(proxy.headers.slice(seen).every((headers) => headers.authorization === undefined)).toBe(true);
  });

  it('keeps a key that a provider error echoes out of the conversation', async () => {
    model.setScript(() => ({
      httpStatus: 500,
      body: { error: { code: 500, message: `internal error for key ${TEST_GEMINI_KEY}`, status: 'INTERNAL' } },
    }));
    try {
      const created = await call('POST', '/conversations', { message: 'list resources' }, { Authorization: `Bearer ${TEST_BEARER}` });
      expect(created.status).toBe(201);
      expect(created.body.result.response).toMatch(/model could not answer/i);
    } finally {
      model.setScript(resourceAgentScript);
    }
  });

  it('the key reached the provider, and no key or token appears in any response, log line or data file', async () => {
    expect(model.requests.some((request) => request.headers['x-goog-api-key'] === TEST_GEMINI_KEY)).toBe(true);
    for (const response of responses) {
      const text = JSON.stringify(response.body) + JSON.stringify([...response.headers.entries()]);
      expect(text).not.toContain(TEST_GEMINI_KEY);
      expect(text).not.toContain(TEST_BEARER);
    }
    expect(agent.output()).not.toContain(TEST_GEMINI_KEY);
    expect(agent.output()).not.toContain(TEST_BEARER);
    expect(filesContaining(agent.dataDir, TEST_GEMINI_KEY)).toEqual([]);
    expect(filesContaining(agent.dataDir, TEST_BEARER)).toEqual([]);
  });
});
