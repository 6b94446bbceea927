import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { configSchema } from '../services/common/config/schema.js';
import { configSlice, type GatewayConfig } from '../services/common/config/slices.js';
import { createLogger, type Logger } from '../services/common/log.js';
import { reachableUrl } from './http/url.js';
import { startGateway } from './index.js';
import { logLines } from '../test/support/log-lines.js';
import { freePort } from '../test/support/ports.js';
import { rawRequest } from '../test/support/raw-http.js';

/**
 * The real gateway on 127.0.0.1:0. Nothing here needs a working backend: the routes are
 * checked up to the point where they would call one, and outages are real ones — a port
 * nobody listens on (503) and a socket that accepts and never answers (504).
 */

// For the suites that do not read the log.
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

type Gateway = Awaited<ReturnType<typeof startGateway>>;

const CONVERSATION_ID = '6f1c9a52-3d47-4b8e-9a21-0c5e7d4f8b13';
const APPROVAL_UUID = 'b2e4d8f1-7a36-4c95-8e10-5d9f3a6c2e47';

function testConfig(overrides: Record<string, unknown> = {}): GatewayConfig {
  return configSlice(configSchema.parse({ host: '127.0.0.1', port: 0, ...overrides }), 'gateway');
}

/** A TCP server that accepts connections and never says a word: a hung backend. */
async function silentServer(): Promise<{ address: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Everything the gateway's logger writes while `fn` runs. */
function captureStdout(): { lines: () => string[]; restore: () => void } {
  const written: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  });
  return { lines: () => written.join('').split('\n').filter(Boolean), restore: () => spy.mockRestore() };
}

async function call(gateway: Gateway, method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) {
  const response = await fetch(gateway.url + path, {
    method,
    body: init.body,
    headers: { 'content-type': 'application/json', ...init.headers },
  });
  const text = await response.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

describe('gateway with its backends down', () => {
  let gateway: Gateway;
  let stdout: ReturnType<typeof captureStdout>;

  beforeAll(async () => {
    stdout = captureStdout();
    const port = await freePort();
    gateway = await startGateway({
      config: testConfig(),
      log: createLogger('gateway'),
      peers: { orchestrator: `127.0.0.1:${port}`, conversationStore: `127.0.0.1:${port}` },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    stdout.restore();
  });

  it('reports where it listens, as the CLI expects', () => {
    expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(gateway.port).toBeGreaterThan(0);
    expect(gateway.address).toBe(`127.0.0.1:${gateway.port}`);
    expect(logLines(stdout.lines().join('\n')).some((line) => line.msg === 'gateway listening' && line.url === gateway.url)).toBe(true);
  });

  it('GET /health answers {"status":"ok"} without any backend', async () => {
    const res = await call(gateway, 'GET', '/health');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ok' });
    expect(res.headers.get('x-powered-by')).toBeNull();
  });

  it('GET /docs serves the Scalar reference over GET /openapi.json, both without any backend', async () => {
    const res = await call(gateway, 'GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('<script src="/docs/scalar.js"></script>');
    expect(res.text).not.toMatch(/https?:\/\//);
    expect(res.text).toContain("Scalar.createApiReference('#app'");
    expect(res.text).toContain('"url": "/openapi.json"');
    // Offline, the fallback inside #app says where the document is.
    expect(res.text).toMatch(/<div id="app">.*href="\/openapi\.json".*<\/div>/);
    const document = await call(gateway, 'GET', '/openapi.json');
    expect(document.status).toBe(200);
    expect(document.headers.get('content-type')).toMatch(/^application\/json/);
    expect(document.json?.openapi).toBe('3.1.0');
    expect(Object.keys(document.json?.paths as object)).toContain('/approvals/{uuid}');
    // The page's script is Scalar's bundle, from the package, not from a CDN.
    const script = await call(gateway, 'GET', '/docs/scalar.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(script.text).toContain('@scalar/api-reference 1.40.9');
  });

  it('answers unknown routes and methods with 404 JSON', async () => {
    for (const [method, path] of [
      ['GET', '/nowhere?x=1'],
      ['DELETE', '/conversations'],
      ['GET', '/conversations/x/y/z'],
    ] as const) {
      const res = await call(gateway, method, path);
      expect(res.status).toBe(404);
      expect(res.json?.error).toBe(`no route for ${method} ${path.split('?')[0]}; the API reference is at GET /docs`);
    }
  });

  it('answers TRACE with 405 on every route, the faces that hand a request on as a web Request (tRPC, MCP) included, and logs no error', async () => {
    const before = stdout.lines().length;
    for (const path of [
      '/conversations',
      `/approvals/${APPROVAL_UUID}`,
      '/health',
      '/trpc/conversations.list',
      '/trpc/approvals.resolve',
      '/mcp',
      '/a2a',
      '/v1/chat/completions',
      '/',
      '/nowhere',
    ]) {
      const res = await rawRequest(gateway.url, { method: 'TRACE', path });
      expect([path, res.status, res.json?.error]).toEqual([path, 405, 'TRACE is not allowed on any route of this server']);
    }
    expect(logLines(stdout.lines().slice(before).join('\n')).filter((line) => line.level === 'error')).toEqual([]);
  });

  it('logs no error for a DELETE /mcp whose body was sent unframed (its bytes break the connection after the request)', async () => {
    const before = stdout.lines().length;
    const socket = net.connect(gateway.port, '127.0.0.1');
    const answer = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('utf8')));
      socket.on('close', () => resolve(text));
      socket.on('error', () => resolve(text));
    });
    // No Content-Length and no chunked framing: the body is, to HTTP, the start of a next request.
    socket.end(
      `DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\nContent-Type: application/json\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"ping"}`,
    );
    expect(await answer).toMatch(/^HTTP\/1\.1 [45]\d\d /);
    const logged = () => logLines(stdout.lines().slice(before).join('\n'));
    await vi.waitFor(() =>
      expect(logged().some((line) => line.msg === 'request' && line.method === 'DELETE' && line.path === '/mcp')).toBe(true),
    );
    expect(logged().filter((line) => line.level === 'error')).toEqual([]);
  });

  it('answers malformed JSON with 400', async () => {
    for (const path of ['/conversations', `/conversations/${CONVERSATION_ID}/messages`, `/approvals/${APPROVAL_UUID}`]) {
      const res = await call(gateway, 'POST', path, { body: '{"message": "unterminated' });
      expect(res.status).toBe(400);
      expect(res.json?.error).toMatch(/^malformed JSON body: /);
    }
  });

  it('answers a body field the route does not take with 400 naming it, before any backend is asked', async () => {
    for (const [path, body, named] of [
      ['/conversations', { message: 'hi', model: 'gpt-4o' }, 'unknown field "model"'],
      [`/conversations/${CONVERSATION_ID}/messages`, { mesage: 'hi' }, 'unknown field "mesage"'],
      [`/approvals/${APPROVAL_UUID}`, { approved: true, comment: 'fine', by: 'me' }, 'unknown fields "comment", "by"'],
    ] as const) {
      const res = await call(gateway, 'POST', path, { body: JSON.stringify(body) });
      expect(res.status, path).toBe(400);
      expect(res.json?.error, path).toMatch(new RegExp(`^${named}; expected `));
    }
    // tRPC, in its own error shape.
    const trpc = await call(gateway, 'POST', '/trpc/conversations.send', {
      body: JSON.stringify({ conversationId: CONVERSATION_ID, message: 'hi', stream: true }),
    });
    expect(trpc.status).toBe(400);
    expect(trpc.json?.error).toMatchObject({
      message: 'unknown field "stream"',
      data: { code: 'BAD_REQUEST', httpStatus: 400, path: 'conversations.send' },
    });
  });

  it('answers a body over 1 MB with 413', async () => {
    const res = await call(gateway, 'POST', '/conversations', { body: JSON.stringify({ message: 'x'.repeat(1024 * 1024 + 1) }) });
    expect(res.status).toBe(413);
    expect(res.json).toEqual({ error: 'the request body is larger than the limit of 1 MB' });
  });

  it('refuses an empty or missing message with 400 before calling anything', async () => {
    const path = `/conversations/${CONVERSATION_ID}/messages`;
    const empty = await call(gateway, 'POST', path, { body: '{"message": "   "}' });
    expect(empty.status).toBe(400);
    expect(empty.json).toEqual({ error: '"message" must not be empty; expected {"message": "<non-empty text>"}' });
    const missing = await call(gateway, 'POST', path, { body: '' });
    expect(missing.status).toBe(400);
    expect(missing.json?.error).toMatch(/^"message" is required/);
    const notAnObject = await call(gateway, 'POST', path, { body: '"hello"' });
    expect(notAnObject.status).toBe(400);
    expect(notAnObject.json?.error).toBe('the body must be a JSON object; expected {"message": "<non-empty text>"}');
    const created = await call(gateway, 'POST', '/conversations', { body: '{"message": ""}' });
    expect(created.status).toBe(400);
    expect(created.json?.error).toBe('"message" must not be empty; expected no body, {} or {"message": "<non-empty text>"}');
  });

  it('refuses an approval body that says neither yes nor no with 400', async () => {
    for (const body of ['{}', '{"answer": "maybe"}', '{"approved": "sure"}', '[]']) {
      const res = await call(gateway, 'POST', `/approvals/${APPROVAL_UUID}`, { body });
      expect(res.status).toBe(400);
      expect(res.json).toEqual({
        error:
          'expected {"approved": true|false}, {"action": "approve"|"reject"} or {"answer": "yes"|"no"}, each with an optional "reason"',
      });
    }
  });

  it('refuses a bad page size with 400', async () => {
    for (const query of ['limit=0', 'limit=501', 'limit=ten', 'limit=5&limit=6']) {
      const res = await call(gateway, 'GET', `/conversations?${query}`);
      expect(res.status).toBe(400);
      expect(res.json?.error).toMatch(/"limit" must be .*an integer from 1 to 500/);
    }
  });

  it('refuses bad approval and audit queries, and edited arguments with a rejection, with 400 before calling anything', async () => {
    const cases: [string, string, string | undefined, RegExp][] = [
      ['GET', '/approvals?status=waiting', undefined, /^"status" must be pending, approved, rejected or expired/],
      ['GET', '/approvals?status=pending&status=approved', undefined, /^"status" must be given once/],
      ['GET', '/approvals?limit=0', undefined, /^"limit" must be an integer from 1 to 500$/],
      ['GET', '/approvals?conversation_id=', undefined, /^"conversation_id" must not be empty/],
      ['GET', '/audit?kind=%3Cscript%3E', undefined, /^"kind" must be an entry kind/],
      [
        'POST',
        `/approvals/${APPROVAL_UUID}`,
        '{"approved": false, "arguments": {"id": 1}}',
        /^"arguments" are only taken with an approval/,
      ],
      ['POST', `/approvals/${APPROVAL_UUID}`, '{"approved": true, "arguments": [1]}', /^"arguments" must be a JSON object/],
    ];
    for (const [method, path, body, expected] of cases) {
      const res = await call(gateway, method, path, { body });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(String(res.json?.error)).toMatch(expected);
    }
  });

  it('answers 503 naming the call that could not be made, for every backend route', async () => {
    const cases: [string, string, string | undefined, string][] = [
      ['POST', '/conversations', '{"message": "hello"}', 'service unavailable: CreateConversation on the orchestrator failed: '],
      ['POST', '/conversations', undefined, 'service unavailable: CreateConversation on the orchestrator failed: '],
      ['GET', '/conversations', undefined, 'service unavailable: ListConversations on the conversation store failed: '],
      ['GET', `/conversations/${CONVERSATION_ID}`, undefined, 'service unavailable: GetConversation on the conversation store failed: '],
      [
        'POST',
        `/conversations/${CONVERSATION_ID}/messages`,
        '{"message": "hi"}',
        'service unavailable: SendMessage on the orchestrator failed: ',
      ],
      ['POST', `/approvals/${APPROVAL_UUID}`, '{"approved": true}', 'service unavailable: ResolveApproval on the orchestrator failed: '],
      ['GET', '/approvals?status=pending', undefined, 'service unavailable: ListApprovals on the conversation store failed: '],
      ['GET', `/approvals/${APPROVAL_UUID}`, undefined, 'service unavailable: GetApproval on the conversation store failed: '],
      ['GET', '/audit', undefined, 'service unavailable: ListAudit on the conversation store failed: '],
      ['GET', '/tools', undefined, 'service unavailable: ListTools on the orchestrator failed: '],
    ];
    for (const [method, path, body, expected] of cases) {
      const res = await call(gateway, method, path, { body });
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(String(res.json?.error)).toContain(expected);
      expect(res.text).not.toMatch(/\n\s+at /);
    }
    expect((await call(gateway, 'GET', '/health')).status).toBe(200);
  });

  it('keeps a well-formed caller session id (lowercased) and echoes it', async () => {
    const res = await call(gateway, 'GET', `/conversations/${CONVERSATION_ID}`, { headers: { 'X-Session-ID': 'ABCDEF12' } });
    expect(res.headers.get('x-session-id')).toBe('abcdef12');
  });

  it('makes a new session id for a new conversation when the caller sent none or a malformed one', async () => {
    const first = await call(gateway, 'POST', '/conversations', { headers: { 'X-Session-ID': 'not-hex!' } });
    const second = await call(gateway, 'POST', '/conversations');
    const ids = [first.headers.get('x-session-id'), second.headers.get('x-session-id')];
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}$/);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('leaves the session id to the conversation for requests about one', async () => {
    const res = await call(gateway, 'GET', `/conversations/${CONVERSATION_ID}`);
    expect(res.status).toBe(503);
    expect(res.headers.get('x-session-id')).toBeNull();
  });

  it('logs one JSON request line with method, path without query, status, duration, session and trace ids — and no headers', async () => {
    const authorization = 'Basic dXNlcjpodW50ZXIy';
    const res = await call(gateway, 'GET', '/conversations?limit=0&token=private', {
      headers: { 'X-Session-ID': '0badc0de', authorization },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify([...res.headers])).not.toContain('dXNlcjpodW50ZXIy');
    const requestLine = () =>
      logLines(stdout.lines().join('\n')).find((entry) => entry.msg === 'request' && entry.session_id === '0badc0de');
    await vi.waitFor(() => expect(requestLine()).toBeDefined());
    const { time, ms, trace_id, span_id, ...rest } = requestLine()!;
    expect(rest).toEqual({
      level: 'info',
      svc: 'gateway',
      msg: 'request',
      method: 'GET',
      path: '/conversations',
      status: 400,
      session_id: '0badc0de',
    });
    expect(Date.parse(time)).not.toBeNaN();
    expect(ms).toEqual(expect.any(Number));
    expect(trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(stdout.lines().join('\n')).not.toContain('dXNlcjpodW50ZXIy');
    expect(stdout.lines().join('\n')).not.toContain('private');
  });
});

describe('gateway with a backend that never answers', () => {
  let gateway: Gateway;
  let hung: Awaited<ReturnType<typeof silentServer>>;

  beforeAll(async () => {
    hung = await silentServer();
    gateway = await startGateway({
      config: testConfig({ chat: { turn_timeout: '400ms' } }),
      log: quiet,
      peers: { orchestrator: hung.address, conversationStore: hung.address },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await hung?.close();
  });

  it('answers 504 once the turn deadline has passed, as an unknown outcome naming the conversation, and stays up', async () => {
    const res = await call(gateway, 'POST', `/conversations/${CONVERSATION_ID}/messages`, { body: '{"message": "hi"}' });
    expect(res.status).toBe(504);
    expect(res.json).toMatchObject({ outcome: 'unknown', conversation_id: CONVERSATION_ID });
    expect(String(res.json?.error)).toMatch(
      /^outcome unknown: the orchestrator did not answer before the request's deadline \(chat.turn_timeout\), so whether the turn finished is not known here /,
    );
    expect(String(res.json?.error)).toContain(`GET /conversations/${CONVERSATION_ID}`);
    expect((await call(gateway, 'GET', '/health')).status).toBe(200);
  });
});

describe('gateway lifecycle', () => {
  const running: Gateway[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((gateway) => gateway.stop()));
  });

  it('stop() closes the port and idle keep-alive connections, and may be called twice', async () => {
    const gateway = await startGateway({
      config: testConfig(),
      log: quiet,
      peers: { orchestrator: '127.0.0.1:1', conversationStore: '127.0.0.1:1' },
    });
    expect((await call(gateway, 'GET', '/health')).status).toBe(200);
    await gateway.stop();
    await gateway.stop();
    await expect(fetch(`${gateway.url}/health`)).rejects.toThrow();
  });

  it('refuses to start on a port that is taken, saying which', async () => {
    const first = await startGateway({
      config: testConfig(),
      log: quiet,
      peers: { orchestrator: '127.0.0.1:1', conversationStore: '127.0.0.1:1' },
    });
    running.push(first);
    await expect(
      startGateway({
        config: testConfig({ port: first.port }),
        log: quiet,
        peers: { orchestrator: '127.0.0.1:1', conversationStore: '127.0.0.1:1' },
      }),
    ).rejects.toThrow(`gateway cannot listen on 127.0.0.1:${first.port}: listen EADDRINUSE`);
  });
});

describe('reachableUrl', () => {
  it('shows the wildcard addresses as loopback and brackets IPv6', () => {
    expect(reachableUrl('0.0.0.0', 8080)).toBe('http://127.0.0.1:8080');
    expect(reachableUrl('::', 8080)).toBe('http://[::1]:8080');
    expect(reachableUrl('::1', 8080)).toBe('http://[::1]:8080');
    expect(reachableUrl('localhost', 3000)).toBe('http://localhost:3000');
  });
});
