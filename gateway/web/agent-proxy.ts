import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Request, RequestHandler, Response } from 'express';

/**
 * Passes a request on to the agent and streams the answer back, server-sent events included:
 * `/trpc` (the chat's queries, mutations and subscriptions), the REST API, `/docs`. When the
 * browser goes away, the agent's side of a stream is closed too.
 *
 * The request goes as a server-side client's: `Host` is the agent's, and the
 * browser's `Origin` and `Referer` are dropped — this server's own cross-site guard has already
 * checked them against its own origin, which the agent cannot know.
 */

// RFC 9110 §7.6.1: these describe one connection, not the message, and are not forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);
/** The browser's word on where the request came from: for this server's guard, not the agent's. */
const BROWSER_ONLY = new Set(['origin', 'referer']);

export function endToEndHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const kept: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name.toLowerCase()) && value !== undefined) kept[name] = value;
  }
  return kept;
}

/** The headers sent on to the agent: end-to-end ones, less the browser's origin (see above). */
export function agentRequestHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const kept = endToEndHeaders(headers);
  for (const name of Object.keys(kept)) if (BROWSER_ONLY.has(name.toLowerCase())) delete kept[name];
  return kept;
}

export function agentProxy(agentUrl: string): RequestHandler {
  const target = new URL(agentUrl);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const basePath = target.pathname.replace(/\/+$/, '');
  return (req: Request, res: Response) => {
    const upstream = send(
      {
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port,
        method: req.method,
        path: `${basePath}${req.originalUrl}`,
        headers: { ...agentRequestHeaders(req.headers), host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEndHeaders(answer.headers));
        // Server-sent events must reach the browser as they come, not when a buffer fills.
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) res.status(502).json({ error: `the agent at ${agentUrl} is unreachable: ${error.message}` });
      else res.destroy();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  };
}
