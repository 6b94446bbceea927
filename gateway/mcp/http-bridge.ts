import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import { redactSecrets } from '../../services/common/secrets.js';
import { toWebRequest as nodeToWebRequest, writeWebResponse } from '../../services/common/web-http.js';

/** Express ↔ the web-standard Request/Response the MCP SDK serves (services/common/web-http.ts). */

/** The express request as a web Request; the body streams through unread, aborted with `signal`. */
export function toWebRequest(req: ExpressRequest, signal: AbortSignal): Request {
  // The URL's origin is never used for routing or checks (the cross-site guard reads the Host
  // header before this); a fixed one keeps a hostile Host header from breaking parsing.
  return nodeToWebRequest(req, new URL(req.originalUrl, 'http://gateway.invalid'), signal);
}

/** Writes a web Response to express, streaming SSE bodies event by event until either side ends. */
export const sendWebResponse = (response: Response, res: ExpressResponse): Promise<void> => writeWebResponse(response, res);

/** A JSON-RPC error answered before any MCP server saw the request (no id is known). */
export function jsonRpcErrorResponse(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message: redactSecrets(message) } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}
