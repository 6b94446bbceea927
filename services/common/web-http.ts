import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/**
 * Node's HTTP request and response ↔ the web-standard Request/Response that the MCP SDK
 * serves with (no `@modelcontextprotocol/node` adapter is installed; this is the part of it
 * the project needs: mcp-resources, the gateway's /mcp, test servers).
 */

/**
 * Methods a web Request cannot carry (Fetch standard, "forbidden method": `new Request` throws
 * on them). A server that hands Node's requests on as web Requests answers these itself, before
 * making one: thrown, TRACE was a 500, and where nothing caught it, the end of the process.
 * (Node's server takes CONNECT as a tunnel request and never routes it; TRACK it does not parse.)
 */
export function isForbiddenWebMethod(method: string | undefined): boolean {
  return method === 'TRACE' || method === 'TRACK' || method === 'CONNECT';
}

/**
 * A Streamable HTTP MCP endpoint's answer to a method it does not serve: 405 with the body the
 * MCP SDK gives any other such method (JSON-RPC -32000), and the methods it does serve (MCP
 * transports: POST a message, GET a stream, DELETE a session).
 */
export function mcpMethodNotAllowed(): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }), {
    status: 405,
    headers: { 'content-type': 'application/json', allow: 'GET, POST, DELETE' },
  });
}

/** Node's request as a web Request for `url`; the body streams through unread, aborted with `signal`. */
export function toWebRequest(req: IncomingMessage, url: URL, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(url, {
    method: req.method,
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  } as RequestInit);
}

/** Writes a web Response to Node's response, streaming SSE bodies event by event until either side ends. */
export async function writeWebResponse(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    res.setHeader(name, value);
  });
  if (!response.body) {
    res.end();
    return;
  }
  res.flushHeaders();
  const reader = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  res.once('close', stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      res.write(value);
    }
  } finally {
    res.off('close', stop);
    if (!res.destroyed) res.end();
  }
}
