import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../services/common/config/schema.js';
import { configSlice } from '../services/common/config/slices.js';
import type { Logger } from '../services/common/log.js';
import { FakeEventFeed } from '../test/support/fake-event-feed.js';
import { sized } from '../test/support/size.js';
import type { Backends } from './app/backends.js';
import { createAgent } from './app/agent.js';
import { setUpAuth } from './auth/index.js';
import { createGatewayApp } from './index.js';

/**
 * The 2025-era MCP sessions of `/mcp` are bounded per principal (serve_mcp.sessions), so that
 * one caller's sessions never make room for another's: over real HTTP on 127.0.0.1, through the
 * gateway's whole application with API tokens. Opening, pinging, streaming and closing a session
 * are the MCP face's own: no call reaches the mesh, whose clients are left unset.
 */

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const TOKENS = { alice: 'alice-mcp-session-token-5d2c', bob: 'bob-mcp-session-token-8e1f', carol: 'carol-mcp-session-token-3a7b' };
const ENV = { ALICE_TOKEN: TOKENS.alice, BOB_TOKEN: TOKENS.bob, CAROL_TOKEN: TOKENS.carol };
const AUTH = {
  tokens: (['alice', 'bob', 'carol'] as const).map((name) => ({ name, token_env: `${name.toUpperCase()}_TOKEN`, roles: ['chat'] })),
};
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
};

interface Gateway {
  url: string;
  close(): Promise<void>;
}

async function gatewayWith(sessions: { max: number; max_per_principal: number }): Promise<Gateway> {
  const config = configSlice(
    configSchema.parse({ name: 'test-agent', host: '127.0.0.1', port: 0, auth: AUTH, serve_mcp: { sessions } }),
    'gateway',
  );
  const auth = setUpAuth({ config, audit: { appendAudit: async () => ({}) }, log: quiet, env: ENV });
  const app = createGatewayApp({
    config,
    log: quiet,
    auth,
    agent: createAgent({} as Pick<Backends, 'orchestrator' | 'store'>),
    feed: new FakeEventFeed(),
    readiness: { check: async () => ({ status: 'ready' }) },
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const mcpHeaders = (token: string, sessionId?: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${token}`,
  ...(sessionId && { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }),
});

async function opened(url: string, token: string): Promise<{ status: number; sessionId: string | null; body: string }> {
  const response = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: mcpHeaders(token),
    body: JSON.stringify(INITIALIZE),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, sessionId: response.headers.get('mcp-session-id'), body: await response.text() };
}

async function open(url: string, token: string): Promise<string> {
  const answer = await opened(url, token);
  expect(answer.status, answer.body).toBe(200);
  return answer.sessionId!;
}

async function ping(url: string, token: string, sessionId: string): Promise<number> {
  const response = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: mcpHeaders(token, sessionId),
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    signal: AbortSignal.timeout(10_000),
  });
  await response.text();
  return response.status;
}

describe("2025-era MCP sessions are bounded per principal: nobody closes anyone else's", () => {
  it("closes only the opener's own sessions past its bound, the one unused the longest first; another's open session keeps answering", async () => {
    const gateway = await gatewayWith({ max: 1000, max_per_principal: 2 });
    try {
      const bobs = await open(gateway.url, TOKENS.bob);
      const alices: string[] = [];
      for (let index = 0; index < sized(12, 1200); index++) {
        alices.push(await open(gateway.url, TOKENS.alice));
        expect(await ping(gateway.url, TOKENS.bob, bobs), `after alice's session ${index + 1}`).toBe(200);
      }
      // Alice keeps her newest two; every older one was hers to close.
      for (const id of alices.slice(-2)) expect(await ping(gateway.url, TOKENS.alice, id)).toBe(200);
      for (const id of alices.slice(0, -2)) expect(await ping(gateway.url, TOKENS.alice, id)).toBe(404);
    } finally {
      await gateway.close();
    }
  });

  it('closes an idle session of the opener before one with a request in flight, even one unused for longer', async () => {
    const gateway = await gatewayWith({ max: 1000, max_per_principal: 2 });
    const stream = new AbortController();
    try {
      const busy = await open(gateway.url, TOKENS.alice);
      const idle = await open(gateway.url, TOKENS.alice);
      // busy holds its server→client stream open (a request in flight), then idle is used after it.
      const listening = await fetch(`${gateway.url}/mcp`, {
        method: 'GET',
        headers: { ...mcpHeaders(TOKENS.alice, busy), accept: 'text/event-stream' },
        signal: stream.signal,
      });
      expect(listening.status).toBe(200);
      expect(await ping(gateway.url, TOKENS.alice, idle)).toBe(200);
      const third = await open(gateway.url, TOKENS.alice);
      expect(await ping(gateway.url, TOKENS.alice, idle)).toBe(404);
      expect(await ping(gateway.url, TOKENS.alice, busy)).toBe(200);
      expect(await ping(gateway.url, TOKENS.alice, third)).toBe(200);
    } finally {
      stream.abort();
      await gateway.close();
    }
  });

  it("makes room in a full gateway from the opener's own sessions, and refuses (429) one who holds none rather than close a stranger's", async () => {
    const gateway = await gatewayWith({ max: 3, max_per_principal: 2 });
    try {
      const alices = [await open(gateway.url, TOKENS.alice), await open(gateway.url, TOKENS.alice)];
      const firstOfBob = await open(gateway.url, TOKENS.bob);
      // Full: bob's next closes his own first one.
      const secondOfBob = await open(gateway.url, TOKENS.bob);
      expect(await ping(gateway.url, TOKENS.bob, firstOfBob)).toBe(404);
      expect(await ping(gateway.url, TOKENS.bob, secondOfBob)).toBe(200);
      // Carol holds none: nothing is hers to close.
      const refused = await opened(gateway.url, TOKENS.carol);
      expect(refused.status).toBe(429);
      expect(refused.sessionId).toBeNull();
      expect(JSON.parse(refused.body)).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32000, message: expect.stringContaining('none of them yours') },
      });
      for (const id of alices) expect(await ping(gateway.url, TOKENS.alice, id)).toBe(200);
      expect(await ping(gateway.url, TOKENS.bob, secondOfBob)).toBe(200);
      // Once one closes (DELETE), carol gets its place.
      const closed = await fetch(`${gateway.url}/mcp`, {
        method: 'DELETE',
        headers: mcpHeaders(TOKENS.bob, secondOfBob),
        signal: AbortSignal.timeout(10_000),
      });
      expect(closed.status).toBe(200);
      const carols = await open(gateway.url, TOKENS.carol);
      expect(await ping(gateway.url, TOKENS.carol, carols)).toBe(200);
    } finally {
      await gateway.close();
    }
  });

  it('refuses a bad bound at startup, with the path of the field', () => {
    expect(() => configSchema.parse({ serve_mcp: { sessions: { max_per_principal: 0 } } })).toThrow(/max_per_principal/);
  });
});
