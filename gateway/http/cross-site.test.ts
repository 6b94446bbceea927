/**
 * The cross-site guard, one rule at a time, on a real HTTP server built with
 * createHttpApp and a small router: Host, Origin (with CORS answers) and Content-Type.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Router } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../services/common/config/schema.js';
import { createLogger } from '../../services/common/log.js';
import { rawRequest } from '../../test/support/raw-http.js';
import { createHttpApp } from './app.js';
import { crossSitePolicy, isJsonContentType, isLoopbackBinding, normalizeOrigin, parseHost, type CrossSiteSettings } from './cross-site.js';

const quiet = createLogger('test', {});

/** What a face does once a request is through: it echoes what it got. */
function echoRouter(): Router {
  const router = express.Router();
  router.get('/health', (_req, res) => res.json({ status: 'ok' }));
  router.get('/ready', (_req, res) => res.json({ status: 'ready' }));
  router.get('/things/:id', (req, res) => res.json({ id: req.params.id }));
  router.post('/things', express.json({ type: ['application/json', 'application/*+json'] }), (req, res) =>
    res.status(201).json({ got: req.body ?? null }),
  );
  router.delete('/things/:id', (_req, res) => res.status(204).end());
  // Stand-ins for the event streams: the guard knows them by path and Accept, not by their answer.
  router.get('/conversations/:id/events', (_req, res) => res.json({ stream: 'rest' }));
  router.get('/trpc/:procedures', (req, res) => res.json({ stream: req.params.procedures }));
  return router;
}

const servers: Server[] = [];

/** A server on 127.0.0.1 whose guard believes it listens on `host` with `server` settings. */
async function serve(host: string, server: Record<string, unknown> = {}): Promise<string> {
  const config = configSchema.parse({ host, port: 0, server });
  const app = createHttpApp([echoRouter()], quiet, { host: config.host, server: config.server });
  const listening = createServer(app);
  servers.push(listening);
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
}

afterAll(async () => {
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

const JSON_TYPE = { 'content-type': 'application/json' };

describe('parsing the pieces', () => {
  it('reads Host values and allowed_hosts entries', () => {
    expect(parseHost('LocalHost:8080')).toEqual({ name: 'localhost', port: '8080' });
    expect(parseHost('[::1]:80')).toEqual({ name: '[::1]', port: '80' });
    expect(parseHost('agent.example.com.')).toEqual({ name: 'agent.example.com', port: undefined });
    for (const bad of ['', 'a b', 'user@host', 'host:port', 'http://x', '::1']) expect(parseHost(bad)).toBeUndefined();
  });

  it('knows loopback listeners from the others', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopbackBinding(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.5', 'agent.internal']) expect(isLoopbackBinding(host)).toBe(false);
  });

  it('takes application/json and application/*+json, parameters allowed', () => {
    for (const type of [
      'application/json',
      'Application/JSON; charset=utf-8',
      'application/merge-patch+json',
      'application/vnd.api+json ; q=1',
    ])
      expect(isJsonContentType(type)).toBe(true);
    for (const type of [
      undefined,
      '',
      'text/plain',
      'text/plain;charset=UTF-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
      'text/json',
    ])
      expect(isJsonContentType(type)).toBe(false);
  });

  it('normalizes origins; "null" and junk are not origins', () => {
    expect(normalizeOrigin('HTTP://Example.COM:80')).toBe('http://example.com');
    expect(normalizeOrigin('https://a.example:8443')).toBe('https://a.example:8443');
    for (const bad of ['null', '', 'file://', 'http://a.example/path', 'javascript:alert(1)']) expect(normalizeOrigin(bad)).toBeUndefined();
  });

  it('refuses an allowed_hosts entry that is not a host, at startup', () => {
    const settings: CrossSiteSettings = {
      host: '127.0.0.1',
      server: { allowed_hosts: ['http://agent.example.com/'], cors: { allowed_origins: [] } },
    };
    expect(() => crossSitePolicy(settings)).toThrow('server.allowed_hosts: "http://agent.example.com/" is not a host');
  });
});

describe('Host on a loopback listener', async () => {
  const url = await serve('127.0.0.1', {
    allowed_hosts: ['agent.test', 'pinned.test:9000', '*.apps.test'],
    public_url: 'https://public.test/agent',
  });
  const withHost = (host: string, path = '/things/1') => rawRequest(url, { path, headers: { host } });

  it('answers the loopback names on any port', async () => {
    for (const host of ['localhost', 'localhost:1234', '127.0.0.1', '127.0.0.1:8080', '127.5.6.7:1', '[::1]', '[::1]:8080']) {
      expect((await withHost(host)).status, host).toBe(200);
    }
  });

  it('answers allowed_hosts (name, name:port, *.domain) and the host of public_url', async () => {
    for (const host of [
      'agent.test',
      'AGENT.test:8080',
      'pinned.test:9000',
      'x.apps.test',
      'a.b.apps.test:3000',
      'public.test',
      'public.test:443',
    ]) {
      expect((await withHost(host)).status, host).toBe(200);
    }
  });

  it('refuses any other Host with 421 naming server.allowed_hosts, on every route but GET /health and /ready', async () => {
    for (const host of [
      'evil.example',
      'evil.example:8080',
      'pinned.test:9001',
      'apps.test',
      'agent.test.evil.example',
      '10.0.0.1',
      'localhost.evil.example',
      '%zz',
      'a b',
    ]) {
      const refused = await withHost(host);
      expect(refused.status, host).toBe(421);
      expect(refused.json.error).toContain('server.allowed_hosts');
    }
    const post = await rawRequest(url, { method: 'POST', path: '/things', headers: { host: 'evil.example', ...JSON_TYPE }, body: '{}' });
    expect(post.status).toBe(421);
    expect((await withHost('evil.example', '/health')).status).toBe(200);
    // Readiness probes address pods by IP too.
    expect((await withHost('evil.example', '/ready')).status).toBe(200);
    expect((await withHost('evil.example', '/nowhere')).status).toBe(421);
  });
});

describe('Host on other addresses', async () => {
  const open = await serve('0.0.0.0');
  const listed = await serve('0.0.0.0', { allowed_hosts: ['agent.example.com'] });

  it('takes any Host when allowed_hosts is empty', async () => {
    expect((await rawRequest(open, { path: '/things/1', headers: { host: 'whatever.example' } })).status).toBe(200);
  });

  it('with allowed_hosts: those, the loopback names and IP addresses (no rebinding without a name)', async () => {
    for (const host of ['agent.example.com', 'localhost:8080', '10.1.2.3:8080', '[fd00::1]:8080']) {
      expect((await rawRequest(listed, { path: '/things/1', headers: { host } })).status, host).toBe(200);
    }
    expect((await rawRequest(listed, { path: '/things/1', headers: { host: 'evil.example' } })).status).toBe(421);
  });
});

describe('Origin', async () => {
  const url = await serve('127.0.0.1', {
    public_url: 'https://public.test',
    cors: { allowed_origins: ['https://app.example', 'http://localhost:5173'] },
  });
  const own = url;
  const send = (
    method: string,
    origin: string | undefined,
    extra: Record<string, string> = {},
    path = method === 'POST' ? '/things' : '/things/1',
  ) =>
    rawRequest(url, {
      method,
      path,
      headers: { ...(origin === undefined ? {} : { origin }), ...(method === 'POST' ? JSON_TYPE : {}), ...extra },
      body: method === 'POST' ? '{"a":1}' : undefined,
    });

  it('without Origin (curl, SDKs) nothing changes and no CORS headers are sent', async () => {
    const answer = await send('POST', undefined);
    expect(answer.status).toBe(201);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('the server’s own origin and public_url’s origin may change state, without CORS headers', async () => {
    for (const origin of [own, 'https://public.test']) {
      const answer = await send('POST', origin);
      expect(answer.status, origin).toBe(201);
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('a listed foreign origin may, and gets Access-Control-Allow-Origin echoed with Vary: Origin', async () => {
    for (const origin of ['https://app.example', 'http://localhost:5173']) {
      const answer = await send('POST', origin);
      expect(answer.status, origin).toBe(201);
      expect(answer.headers['access-control-allow-origin']).toBe(origin);
      expect(answer.headers.vary).toContain('Origin');
      expect(answer.headers['access-control-expose-headers']).toContain('X-Session-ID');
    }
  });

  it('any other origin, "null" included, is refused 403 on POST and DELETE, naming server.cors.allowed_origins', async () => {
    for (const origin of ['https://evil.example', 'null', 'http://127.0.0.1:1', 'http://app.example', 'https://app.example.evil']) {
      for (const method of ['POST', 'DELETE']) {
        const answer = await send(method, origin);
        expect(answer.status, `${method} ${origin}`).toBe(403);
        expect(answer.json.error).toContain('server.cors.allowed_origins');
        expect(answer.headers['access-control-allow-origin']).toBeUndefined();
      }
    }
  });

  it('a foreign origin may GET (the browser cannot read the answer: no CORS headers)', async () => {
    const answer = await send('GET', 'https://evil.example');
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a foreign origin may not open an event stream: the stream routes, tRPC subscriptions (also in a batch), any GET asking for text/event-stream', async () => {
    const streams: { path: string; accept?: string }[] = [
      { path: '/conversations/c1/events' },
      { path: '/Conversations/c1/events/' },
      { path: `/trpc/conversation.events?input=${encodeURIComponent('{"conversationId":"c1"}')}` },
      { path: '/trpc/approvals.pending' },
      { path: '/trpc/tools.list,approvals.pending?batch=1' },
      { path: '/trpc/approvals%2Epending' },
      { path: '/things/1', accept: 'text/event-stream' },
      { path: '/things/1', accept: 'application/json, Text/Event-Stream' },
    ];
    for (const { path, accept } of streams) {
      const headers: Record<string, string> = accept === undefined ? {} : { accept };
      for (const origin of ['https://evil.example', 'null']) {
        const refused = await rawRequest(url, { path, headers: { ...headers, origin } });
        expect(refused.status, `${origin} ${path} ${accept ?? ''}`).toBe(403);
        expect(refused.json.error).toContain('server.cors.allowed_origins');
        expect(refused.headers['access-control-allow-origin']).toBeUndefined();
      }
      // Same origin, a listed origin, and clients that send no Origin are unaffected.
      for (const origin of [own, 'https://public.test', 'https://app.example', undefined]) {
        const answer = await rawRequest(url, { path, headers: { ...headers, ...(origin === undefined ? {} : { origin }) } });
        expect(answer.status, `${origin ?? 'no Origin'} ${path}`).toBe(200);
      }
    }
    // What is not a stream stays readable by GET, as above: queries of tRPC too.
    expect((await rawRequest(url, { path: '/trpc/tools.list', headers: { origin: 'https://evil.example' } })).status).toBe(200);
  });

  it('answers the preflight of a listed origin with methods and headers, and refuses a foreign one', async () => {
    const preflight = { 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-session-id' };
    const allowed = await send('OPTIONS', 'https://app.example', preflight, '/things');
    expect(allowed.status).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(allowed.headers['access-control-allow-methods']).toContain('POST');
    const headers = String(allowed.headers['access-control-allow-headers']).split(', ');
    for (const name of [
      'content-type',
      'authorization',
      'x-session-id',
      'a2a-version',
      'mcp-session-id',
      'mcp-protocol-version',
      'last-event-id',
    ])
      expect(headers).toContain(name);
    const foreign = await send('OPTIONS', 'https://evil.example', preflight, '/things');
    expect(foreign.status).toBe(403);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    expect(foreign.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('"*" in allowed_origins allows every origin', async () => {
    const anyOrigin = await serve('127.0.0.1', { cors: { allowed_origins: ['*'] } });
    for (const origin of ['https://evil.example', 'null']) {
      const answer = await rawRequest(anyOrigin, { method: 'POST', path: '/things', headers: { origin, ...JSON_TYPE }, body: '{}' });
      expect(answer.status, origin).toBe(201);
      expect(answer.headers['access-control-allow-origin']).toBe(origin);
    }
  });
});

describe('Content-Type of state-changing requests', async () => {
  const url = await serve('127.0.0.1');
  const post = (headers: Record<string, string>, body?: string) => rawRequest(url, { method: 'POST', path: '/things', headers, body });

  it('refuses a body that is not labelled JSON with 415 naming application/json', async () => {
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const answer = await post({ 'content-type': type }, '{"a":1}');
      expect(answer.status, type).toBe(415);
      expect(answer.json.error).toContain('Content-Type: application/json');
    }
    const unlabelled = await post({}, '{"a":1}');
    expect(unlabelled.status).toBe(415);
    expect(unlabelled.json.error).toContain('(none)');
    const chunked = await post({ 'transfer-encoding': 'chunked', 'content-type': 'text/plain' }, '{"a":1}');
    expect(chunked.status).toBe(415);
  });

  it('takes application/json with a charset and application/*+json', async () => {
    for (const type of ['application/json; charset=utf-8', 'application/merge-patch+json'])
      expect((await post({ 'content-type': type }, '{"a":1}')).status, type).toBe(201);
  });

  it('leaves a POST without a body alone, and GET with any content type', async () => {
    expect((await post({})).status).toBe(201);
    expect((await post({ 'content-length': '0', 'content-type': 'text/plain' })).status).toBe(201);
    expect((await rawRequest(url, { path: '/things/1', headers: { 'content-type': 'text/plain' } })).status).toBe(200);
  });
});

describe('undecodable paths and client errors are 4xx', async () => {
  const url = await serve('127.0.0.1');

  it('answers %zz and cut UTF-8 in the path with 400, on known and unknown routes', async () => {
    for (const path of ['/things/%zz', '/things/%E0%A4', '/%zz', '/nowhere/%', '/things/%zz/more']) {
      const answer = await rawRequest(url, { path });
      expect(answer.status, path).toBe(400);
      expect(answer.json.error).toContain('percent-encoding');
    }
  });

  it('answers malformed JSON and an unsupported charset with 4xx, not 500', async () => {
    expect((await rawRequest(url, { method: 'POST', path: '/things', headers: JSON_TYPE, body: '{"a":' })).status).toBe(400);
    expect(
      (
        await rawRequest(url, {
          method: 'POST',
          path: '/things',
          headers: { 'content-type': 'application/json; charset=koi8-r' },
          body: '{}',
        })
      ).status,
    ).toBe(415);
  });
});
