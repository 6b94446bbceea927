import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { lineLogger } from '../../test/support/line-logger.js';
import { configSchema } from '../common/config/schema.js';
import { startMcpResourcesHttp } from '../mcp-resources/index.js';
import { ToolComposite } from './composite.js';

/**
 * HTTP MCP servers that need credentials. The fixture is the real mcp-resources
 * server behind a gate that answers 401 (with the RFC 9728 `resource_metadata` pointer) to any
 * request without the right bearer token, and, for OAuth, a small authorization server:
 * RFC 9728 protected-resource metadata, RFC 8414 metadata and a client_credentials token endpoint.
 */

const TOKEN = 'static-token-4b1d9e7a2c';
const CLIENT_ID = 'asg-broker';
const CLIENT_SECRET = 'client-secret-8e2f6a1c9d';
const ISSUED = 'issued-token-3c7e9b2a5f';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'server-auth-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

interface Gate {
  url: string;
  /** The Authorization headers the MCP endpoint saw, in order. */
  seen: string[];
  tokenRequests: number;
}

/** The gate: `accepted` is the only token let through to the MCP server; `oauth` adds the authorization server. */
async function gatedServer(accepted: string, oauth: boolean): Promise<Gate> {
  const upstream = await startMcpResourcesHttp({ dbPath: join(dir, `${Math.random().toString(36).slice(2)}.db`), port: 0 });
  cleanups.push(() => upstream.close());
  const gate: Gate = { url: '', seen: [], tokenRequests: 0 };
  const server = createServer((req, res) => {
    void (async () => {
      const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (oauth && req.url === '/.well-known/oauth-protected-resource/mcp')
        return json(200, { resource: `${origin}/mcp`, authorization_servers: [origin] });
      if (oauth && req.url === '/.well-known/oauth-authorization-server') {
        // The SDK wants authorization_endpoint although client_credentials never uses it.
        return json(200, {
          issuer: origin,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          response_types_supported: ['token'],
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
        });
      }
      if (oauth && req.url === '/token' && req.method === 'POST') {
        gate.tokenRequests++;
        const form = new URLSearchParams((await body(req)).toString());
        const basic = `Basic ${Buffer.from(`${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET)}`).toString('base64')}`;
        if (req.headers.authorization !== basic || form.get('grant_type') !== 'client_credentials')
          return json(401, { error: 'invalid_client' });
        return json(200, { access_token: ISSUED, token_type: 'Bearer', expires_in: 3600 });
      }
      if (!req.url?.startsWith('/mcp')) return json(404, { error: 'not found' });
      gate.seen.push(req.headers.authorization ?? '');
      if (req.headers.authorization !== `Bearer ${accepted}`) {
        res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` }).end();
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection', 'authorization'].includes(name)),
      ) as Record<string, string>;
      const answer = await fetch(upstream.url, { method: req.method, headers, body: req.method === 'POST' ? await body(req) : undefined });
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      res.end(Buffer.from(await answer.arrayBuffer()));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  gate.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
  return gate;
}

async function start(entry: Record<string, unknown>, env: Record<string, string | undefined>) {
  const log = lineLogger();
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  cleanups.push(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
  const composite = await ToolComposite.start(configSchema.parse({ mcp_servers: [{ name: 'gated', ...entry }] }).mcp_servers, log, {
    initialMs: 10_000,
    maxMs: 10_000,
    startupMs: 0,
  });
  cleanups.push(() => composite.close());
  return { composite, log };
}

describe('HTTP MCP servers that need credentials', () => {
  it('are refused (401) without them: the server is unavailable, and says why', async () => {
    const gate = await gatedServer(TOKEN, false);
    const { composite } = await start({ url: gate.url }, {});
    expect(composite.servers()[0]).toMatchObject({
      available: false,
      error: expect.stringMatching(/^MCP server gated \(http:\/\/127\.0\.0\.1:\d+\/mcp\) could not be reached: .*(401|Unauthorized)/),
    });
    expect(gate.seen).toContain('');
  });

  it('send the bearer token from bearer_token_env on every request, and never log it', async () => {
    const gate = await gatedServer(TOKEN, false);
    const { composite, log } = await start({ url: gate.url, bearer_token_env: 'GATED_MCP_TOKEN' }, { GATED_MCP_TOKEN: TOKEN });
    expect(composite.servers()[0]).toEqual({ name: 'gated', required: false, available: true });
    const result = await composite.callTool('resources_list', {}, {});
    expect(result.isError).toBe(false);
    expect(new Set(gate.seen)).toEqual(new Set([`Bearer ${TOKEN}`]));
    // The caller's own token is not forwarded to a server with credentials of its own.
    await composite.callTool('resources_list', {}, { authorization: 'Bearer callers-token' });
    expect(gate.seen).not.toContain('Bearer callers-token');
    expect(log.lines.join('\n')).not.toContain(TOKEN);
  });

  it('leave the server unavailable, naming the variable, when bearer_token_env is not set', async () => {
    const gate = await gatedServer(TOKEN, false);
    const { composite } = await start({ url: gate.url, bearer_token_env: 'GATED_MCP_TOKEN_UNSET' }, { GATED_MCP_TOKEN_UNSET: undefined });
    expect(composite.servers()[0]!.error).toBe(
      `MCP server gated (${gate.url}) cannot be used: the environment variable GATED_MCP_TOKEN_UNSET (bearer_token_env) is not set`,
    );
    expect(gate.seen).toEqual([]);
  });

  it('get a token with OAuth client credentials from the authorization server the server names (RFC 9728, RFC 8414)', async () => {
    const gate = await gatedServer(ISSUED, true);
    const { composite, log } = await start(
      { url: gate.url, oauth: { client_id: CLIENT_ID, client_secret_env: 'GATED_MCP_SECRET' } },
      { GATED_MCP_SECRET: CLIENT_SECRET },
    );
    expect(composite.servers()[0]).toEqual({ name: 'gated', required: false, available: true });
    expect((await composite.callTool('resources_list', {}, {})).isError).toBe(false);
    expect(gate.tokenRequests).toBe(1);
    expect(gate.seen.filter((header) => header === `Bearer ${ISSUED}`).length).toBeGreaterThan(1);
    const text = log.lines.join('\n');
    expect(text).not.toContain(CLIENT_SECRET);
    expect(text).not.toContain(ISSUED);
  });

  it('with a wrong client secret, the server is unavailable and the secret is not in the report', async () => {
    const gate = await gatedServer(ISSUED, true);
    const { composite } = await start(
      { url: gate.url, oauth: { client_id: CLIENT_ID, client_secret_env: 'GATED_MCP_SECRET' } },
      { GATED_MCP_SECRET: 'wrong-secret-1a2b3c4d' },
    );
    const [server] = composite.servers();
    expect(server!.available).toBe(false);
    expect(server!.error).not.toContain('wrong-secret-1a2b3c4d');
    expect(gate.tokenRequests).toBeGreaterThan(0);
  });
});

describe('credentials in the config', () => {
  const parse = (entry: Record<string, unknown>) => configSchema.safeParse({ mcp_servers: [{ name: 'x', ...entry }] });
  it('apply to HTTP servers only, one kind at a time, and required defaults to false', () => {
    const plain = parse({ url: 'http://127.0.0.1:1/mcp' });
    expect(plain.success && plain.data.mcp_servers[0]).toMatchObject({ required: false });
    expect(parse({ command: 'x', bearer_token_env: 'T' }).error?.issues[0]?.message).toBe(
      '"bearer_token_env" and "oauth" apply to HTTP servers ("url") only',
    );
    expect(
      parse({ url: 'http://127.0.0.1:1/mcp', bearer_token_env: 'T', oauth: { client_id: 'c', client_secret_env: 'S' } }).error?.issues[0]
        ?.message,
    ).toBe('at most one of "bearer_token_env" or "oauth"');
    expect(parse({ url: 'http://127.0.0.1:1/mcp', bearer_token_env: 'not a name' }).success).toBe(false);
  });
});
