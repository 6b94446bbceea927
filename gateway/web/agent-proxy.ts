import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Request, RequestHandler, Response } from 'express';

/**
 * Passes a request on to the agent unchanged and streams the answer back, server-sent
 * events included: `/trpc` (the chat's queries, mutations and subscriptions), the REST API,
 * `/docs`. When the browser goes away, the agent's side of a stream is closed too.
 */

// RFC 9110 §7.6.1: these describe one connection, not the message, and are not forwarded.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

export function endToEndHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const kept: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name.toLowerCase()) && value !== undefined) kept[name] = value;
  }
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
        headers: { ...endToEndHeaders(req.headers), host: target.host },
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
