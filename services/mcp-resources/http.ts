import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
  type McpHttpHandler,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import { isForbiddenWebMethod, mcpMethodNotAllowed, toWebRequest, writeWebResponse } from '../common/web-http.js';
import { logToStderr } from './log.js';
import { ResourceStore } from './store.js';
import { createResourcesServer } from './tools.js';

const MCP_PATH = '/mcp';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);

/** A listening Streamable HTTP MCP endpoint. */
export interface McpHttpEndpoint {
  /** `http://host:port/mcp` */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves MCP servers made by `factory` over Streamable HTTP at `/mcp`, statelessly:
 * `createMcpHandler` answers 2026-07-28 requests one request at a time and 2025-era requests
 * through its stateless fallback (a fresh server instance per request, no `Mcp-Session-Id`).
 * Nothing lives between requests, so a restarted server or a second replica serves any client
 * at once. On a loopback host, requests with a foreign Host or Origin are refused (DNS rebinding).
 */
export async function serveMcpHttp(factory: McpServerFactory, opts: { host?: string; port: number }): Promise<McpHttpEndpoint> {
  const host = opts.host ?? '127.0.0.1';
  const handler: McpHttpHandler = createMcpHandler(factory, {
    onerror: (error) => logToStderr('warn', 'mcp request failed', { error: error.message }),
  });
  const guardLocalhost = LOOPBACK_HOSTS.has(host);

  const server = createServer((req, res) => {
    const aborter = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborter.abort();
    });
    void (async () => {
      if (new URL(req.url ?? '/', 'http://localhost').pathname !== MCP_PATH) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: `not found; the MCP endpoint is ${MCP_PATH}` }));
        return;
      }
      if (isForbiddenWebMethod(req.method)) {
        await writeWebResponse(mcpMethodNotAllowed(), res);
        return;
      }
      // The bound address, not the Host header, is the URL base: a hostile Host must reach the guard below, not break URL parsing.
      const request = toWebRequest(req, new URL(req.url ?? '/', origin), aborter.signal);
      const rejected = guardLocalhost
        ? (hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
          originValidationResponse(request, localhostAllowedOrigins()))
        : undefined;
      await writeWebResponse(rejected ?? (await handler.fetch(request)), res);
    })().catch((error: unknown) => {
      logToStderr('error', 'http request failed', { error: error instanceof Error ? error.message : String(error) });
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'internal error' }));
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url: origin + MCP_PATH,
    port,
    close: () =>
      (closing ??= (async () => {
        await handler.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })()),
  };
}

/** mcp-resources over Streamable HTTP; `port: 0` picks a free port. */
export async function startMcpResourcesHttp(opts: { dbPath: string; host?: string; port: number }): Promise<McpHttpEndpoint> {
  const store = new ResourceStore(opts.dbPath);
  let endpoint: McpHttpEndpoint;
  try {
    endpoint = await serveMcpHttp(() => createResourcesServer(store), opts);
  } catch (error) {
    store.close();
    throw error;
  }
  return {
    ...endpoint,
    close: async () => {
      await endpoint.close();
      store.close();
    },
  };
}
