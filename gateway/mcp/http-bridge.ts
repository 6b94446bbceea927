import { Readable } from 'node:stream';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import { redactSecrets } from '../../services/common/secrets.js';

/**
 * Express ↔ the web-standard Request/Response the MCP SDK serves (no
 * `@modelcontextprotocol/node` adapter is installed; this is the part of it the gateway needs).
 */

/** The express request as a web Request; the body streams through unread, aborted with `signal`. */
export function toWebRequest(req: ExpressRequest, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  // The URL's origin is never used for routing or checks (the Host header is what the
  // loopback guard reads); a fixed one keeps a hostile Host header from breaking parsing.
  return new Request(new URL(req.originalUrl, 'http://gateway.invalid'), {
    method: req.method,
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  } as RequestInit);
}

/** Writes a web Response to express, streaming SSE bodies event by event until either side ends. */
export async function sendWebResponse(response: Response, res: ExpressResponse): Promise<void> {
  res.status(response.status);
  response.headers.forEach((value, name) => res.setHeader(name, value));
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

/** A JSON-RPC error answered before any MCP server saw the request (no id is known). */
export function jsonRpcErrorResponse(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message: redactSecrets(message) } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}
