import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import type { FilesystemConfig } from './config.js';
import { logToStderr } from './log.js';
import { Sandbox } from './sandbox.js';
import { createFilesystemServer } from './server.js';
import { isForbiddenWebMethod, mcpMethodNotAllowed } from '../common/web-http.js';

export const MCP_PATH = '/mcp';
const HEALTH_PATH = '/health';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export interface FilesystemHttpServer {
  /** `http://host:port/mcp` */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The incoming request as a fetch `Request`; the body is streamed, not buffered. */
function fetchRequest(req: IncomingMessage, base: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const init: RequestInit & { duplex?: 'half' } = { method: req.method, headers, signal };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    init.body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
    init.duplex = 'half';
  }
  return new Request(new URL(req.url ?? '/', base), init);
}

async function sendResponse(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) {
    res.end();
    return;
  }
  // SSE bodies are written event by event as the handler produces them.
  await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>), res);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/**
 * mcp-filesystem over Streamable HTTP at `/mcp` (and `GET /health`). Stateless: every request
 * gets a fresh MCP server over the one shared sandbox, so there are no sessions to lose. On a
 * loopback address, a foreign Host or Origin header is refused (DNS rebinding).
 */
export async function startFilesystemHttp(
  config: FilesystemConfig,
  overrides: { host?: string; port?: number } = {},
): Promise<FilesystemHttpServer> {
  const host = overrides.host ?? config.host;
  const sandbox = new Sandbox(config);
  const handler = createMcpHandler(() => createFilesystemServer(sandbox), {
    onerror: (error) => logToStderr('warn', 'mcp request failed', { error: error.message }),
  });
  const guarded = LOOPBACK.has(host);
  let base = '';

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://placeholder').pathname;
    if (path === HEALTH_PATH && req.method === 'GET') return json(res, 200, { status: 'ok' });
    if (path !== MCP_PATH) return json(res, 404, { error: `not found; the MCP endpoint is ${MCP_PATH}` });
    if (isForbiddenWebMethod(req.method)) {
      void sendResponse(mcpMethodNotAllowed(), res).catch(() => res.destroy());
      return;
    }
    const aborted = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) aborted.abort(); // the client left before the answer was complete
    });
    const request = fetchRequest(req, base, aborted.signal);
    const refused = guarded
      ? (hostHeaderValidationResponse(request, localhostAllowedHostnames()) ?? originValidationResponse(request, localhostAllowedOrigins()))
      : undefined;
    Promise.resolve(refused ?? handler.fetch(request))
      .then((response) => sendResponse(response, res))
      .catch((error: unknown) => {
        if (aborted.signal.aborted) return; // the client went away
        logToStderr('error', 'http request failed', { error: error instanceof Error ? error.message : String(error) });
        if (res.headersSent) res.destroy();
        else json(res, 500, { error: 'internal error' });
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(overrides.port ?? config.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  // The bound address, not a client's Host header, is the base URL: a hostile Host must reach the guard, not URL parsing.
  base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url: `${base}${MCP_PATH}`,
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
