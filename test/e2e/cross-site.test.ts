/**
 * End to end against a real mesh (bin/asg up) with a scripted model:
 * a web page cannot approve — a `text/plain` approval is 415, a foreign-Origin approval 403,
 * and the destructive call does not run; the server's own origin and a listed CORS origin
 * work; a foreign `Host` is refused on REST, /a2a, /trpc and /mcp (421), while
 * `server.allowed_hosts` and the host of `server.public_url` are answered; undecodable ids are
 * 400 on every route, bad ids a 4xx, and neither is logged at error level.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { rawRequest } from '../support/raw-http.js';
import { resourceNames } from '../support/resources-db.js';
import { logLines } from '../support/log-lines.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

const ALLOWED_ORIGIN = 'https://app.example';

let model: ScriptedModelServer;
let agent: AgentProcess;
let port: string;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    config: { server: { allowed_hosts: ['agent.test'], public_url: 'https://public.test/', cors: { allowed_origins: [ALLOWED_ORIGIN] } } },
  });
  port = new URL(agent.url).port;
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

const resourcesDb = () => join(agent.dir, 'resources.db');

/** A conversation stopped at the approval of `resources_add` for `name`. */
async function pendingApproval(name: string): Promise<{ id: string; uuid: string; messages: number }> {
  const created = await post(`${agent.url}/conversations`, { message: `add resource ${name} with value 1` });
  expect(created.status).toBe(201);
  expect(created.body.result.waiting_approval).toBe(true);
  return { id: created.body.conversation.id, uuid: created.body.result.approval.uuid, messages: created.body.conversation.messages.length };
}

/** The approval still waits, nothing was added to the conversation, and the tool did not run. */
async function expectUntouched(pending: { id: string; messages: number }, name: string): Promise<void> {
  const after = await get(`${agent.url}/conversations/${pending.id}`);
  expect(after.body.conversation.status).toBe('waiting_approval');
  expect(after.body.conversation.messages).toHaveLength(pending.messages);
  expect(resourceNames(resourcesDb())).not.toContain(name);
}

describe('a web page cannot approve', () => {
  it('a text/plain approval (valid JSON, mislabelled) is refused 415 and the tool does not run', async () => {
    const pending = await pendingApproval('plain-1');
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=b']) {
      const answer = await fetch(`${agent.url}/approvals/${pending.uuid}`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: '{"approved": true}',
      });
      expect(answer.status, type).toBe(415);
      expect(((await answer.json()) as { error: string }).error).toContain('application/json');
    }
    await expectUntouched(pending, 'plain-1');
  });

  it('a foreign-Origin approval is refused 403 and the tool does not run', async () => {
    const pending = await pendingApproval('foreign-1');
    for (const origin of ['https://evil.example', 'null', `http://localhost:${Number(port) + 1}`]) {
      const answer = await post(`${agent.url}/approvals/${pending.uuid}`, { approved: true }, { origin });
      expect(answer.status, origin).toBe(403);
      expect(answer.body.error).toContain('server.cors.allowed_origins');
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    }
    // Its preflight too: a page could not even ask.
    const preflight = await fetch(`${agent.url}/approvals/${pending.uuid}`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    await expectUntouched(pending, 'foreign-1');
  });

  it('the server’s own origin approves', async () => {
    const pending = await pendingApproval('own-1');
    const answer = await post(`${agent.url}/approvals/${pending.uuid}`, { approved: true }, { origin: agent.url });
    expect(answer.status).toBe(200);
    expect(answer.body.result.response).toMatch(/^Done\. resources_add/);
    expect(resourceNames(resourcesDb())).toContain('own-1');
  });

  it('a listed CORS origin approves, after its preflight, and gets the CORS headers', async () => {
    const pending = await pendingApproval('cors-1');
    const preflight = await fetch(`${agent.url}/approvals/${pending.uuid}`, {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-session-id',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-session-id');
    const answer = await post(`${agent.url}/approvals/${pending.uuid}`, { approved: true }, { origin: ALLOWED_ORIGIN });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(answer.headers.get('vary')).toContain('Origin');
    expect(resourceNames(resourcesDb())).toContain('cors-1');
  });
});

describe('Host', () => {
  const jsonRpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  const faces = [
    { face: 'REST list', method: 'GET', path: '/conversations' },
    { face: 'REST approval', method: 'POST', path: '/approvals/00000000-0000-4000-8000-000000000000', body: '{"approved":true}' },
    {
      face: '/a2a',
      method: 'POST',
      path: '/a2a',
      body: jsonRpc('message/send', { message: { role: 'user', parts: [{ kind: 'text', text: 'hi' }], messageId: 'm1' } }),
    },
    { face: '/trpc', method: 'GET', path: `/trpc/conversations.list?input=${encodeURIComponent('{}')}` },
    {
      face: '/mcp',
      method: 'POST',
      path: '/mcp',
      body: jsonRpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } }),
    },
    { face: 'web app', method: 'GET', path: '/' },
  ];
  const send = (face: (typeof faces)[number], host: string) =>
    rawRequest(agent.url, {
      method: face.method,
      path: face.path,
      headers: { host, accept: 'application/json, text/event-stream', ...(face.body ? { 'content-type': 'application/json' } : {}) },
      body: face.body,
    });

  it('a foreign Host (DNS rebinding) is refused with 421 on REST, /a2a, /trpc, /mcp and the web app', async () => {
    for (const face of faces) {
      for (const host of ['evil.example', `evil.example:${port}`, `agent.test.evil.example:${port}`]) {
        const answer = await send(face, host);
        expect(answer.status, `${face.face} with Host ${host}`).toBe(421);
        expect(answer.json.error).toContain('server.allowed_hosts');
      }
    }
    // Probes address pods by IP: /health and /ready answer whatever the Host.
    expect((await rawRequest(agent.url, { path: '/health', headers: { host: 'evil.example' } })).status).toBe(200);
    expect((await rawRequest(agent.url, { path: '/ready', headers: { host: 'evil.example' } })).json).toMatchObject({ status: 'ready' });
  });

  it('the loopback names, server.allowed_hosts and the host of server.public_url are answered', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `agent.test:${port}`, 'agent.test', 'public.test']) {
      const answer = await rawRequest(agent.url, { path: '/conversations', headers: { host } });
      expect(answer.status, host).toBe(200);
    }
    // public_url's origin is the server's own, as seen through its proxy.
    const pending = await pendingApproval('public-1');
    const approved = await rawRequest(agent.url, {
      method: 'POST',
      path: `/approvals/${pending.uuid}`,
      headers: { host: 'public.test', origin: 'https://public.test', 'content-type': 'application/json' },
      body: '{"approved": true}',
    });
    expect(approved.status).toBe(200);
    expect(resourceNames(resourcesDb())).toContain('public-1');
  });
});

describe('undecodable and bad ids are 4xx on every route, never logged at error level', () => {
  const BAD_IDS = ['%zz', '%E0%A4', '%', 'not-a-uuid', '00000000-0000-4000-8000-000000000000', '..%2F..%2Fetc%2Fpasswd', 'x'.repeat(2000)];
  const trpcInput = (value: unknown) => encodeURIComponent(JSON.stringify(value));
  /** `inPath`: the id is a path segment as written (else it travels decoded, inside JSON). */
  const routes = (id: string): { method: string; path: string; body?: string; inPath: boolean }[] => [
    { method: 'GET', path: `/conversations/${id}`, inPath: true },
    { method: 'GET', path: `/conversations/${id}/events`, inPath: true },
    { method: 'POST', path: `/conversations/${id}/messages`, body: '{"message":"hi"}', inPath: true },
    { method: 'POST', path: `/approvals/${id}`, body: '{"approved":true}', inPath: true },
    { method: 'GET', path: `/trpc/conversations.get?input=${trpcInput({ id: decodeSafely(id) })}`, inPath: false },
    { method: 'POST', path: '/trpc/approvals.resolve', body: JSON.stringify({ uuid: decodeSafely(id), approved: true }), inPath: false },
    { method: 'GET', path: `/trpc/${id}`, inPath: true },
    { method: 'GET', path: `/trpc/conversations.get?input=${id}`, inPath: false },
    { method: 'GET', path: `/conversations?cursor=${id}`, inPath: false },
    { method: 'POST', path: `/a2a/${id}`, body: '{}', inPath: true },
    { method: 'POST', path: `/mcp/${id}`, body: '{}', inPath: true },
    { method: 'GET', path: `/.well-known/${id}`, inPath: true },
    { method: 'GET', path: `/assets/${id}`, inPath: true },
    { method: 'GET', path: `/${id}`, inPath: true },
  ];

  it('answers each with a 4xx and {"error"} — %-escapes that do not decode with 400', async () => {
    const seen: string[] = [];
    for (const id of BAD_IDS) {
      for (const route of routes(id)) {
        const answer = await rawRequest(agent.url, {
          method: route.method,
          path: route.path,
          headers: route.body ? { 'content-type': 'application/json' } : {},
          body: route.body,
        });
        const label = `${route.method} ${route.path.slice(0, 80)}`;
        seen.push(`${answer.status} ${label}`);
        expect(answer.status, label).toBeGreaterThanOrEqual(400);
        expect(answer.status, label).toBeLessThan(500);
        if (route.inPath && !isDecodable(id)) expect(answer.status, label).toBe(400);
        expect(answer.json ?? answer.text, label).toBeTruthy();
      }
    }
    expect(seen.length).toBe(BAD_IDS.length * routes('x').length);
  });

  it('A2A JSON-RPC with bad task ids answers JSON-RPC errors (HTTP 200, as the binding wants), never a 5xx', async () => {
    for (const id of BAD_IDS) {
      const answer = await rawRequest(agent.url, {
        method: 'POST',
        path: '/a2a',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id } }),
      });
      expect(answer.status, id).toBe(200);
      expect(answer.json.error, id).toBeDefined();
    }
  });

  it('logged nothing about them at error level, and no log line is longer than the cap allows', () => {
    const lines = agent.output().split('\n');
    expect(logLines(agent.output()).filter((line) => line.level === 'error')).toEqual([]);
    expect(lines.filter((line) => line.includes('x'.repeat(600)))).toEqual([]);
  });
});

function isDecodable(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** The id as a client library would send it in JSON: decoded when it can be, else as written. */
function decodeSafely(text: string): string {
  return isDecodable(text) ? decodeURIComponent(text) : text;
}
