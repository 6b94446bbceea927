import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Logger } from '../../services/common/log.js';
import { finalErrorHandler, traceGuard, undecodablePathGuard } from '../http/app.js';
import { crossSiteGuard } from '../http/cross-site.js';
import { requestScopeMiddleware } from '../http/request-scope.js';
import { reachableUrl } from '../http/url.js';
import { agentProxy } from './agent-proxy.js';
import type { WebConfig } from './config.js';
import { apiRoutes } from './api-routes.js';
import { webAppRouter } from './static-app.js';

export interface WebServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * `asg web`: the chat on its own port in front of an agent. The
 * built app at `/`, the earlier web server's `/api/*` routes, and everything else — `/trpc` above all —
 * passed on to `agent_url`, so the same app works here and on the agent's own port.
 * Its own requests pass the same cross-site guard as the agent's, with this
 * server's `host` and `server` settings; what it passes on goes as a server-side client's.
 */
export async function startWebServer(options: { config: WebConfig; dist: string; log: Logger }): Promise<WebServer> {
  const { config, dist, log } = options;
  const app = express();
  app.disable('x-powered-by');
  app.use(requestScopeMiddleware(log));
  app.use(crossSiteGuard({ host: config.host, server: config.server }, log));
  app.use(undecodablePathGuard());
  app.use(traceGuard());
  app.use(webAppRouter(dist));
  app.use(apiRoutes(config.agent_url));
  app.use(agentProxy(config.agent_url));
  app.use(finalErrorHandler(log));
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new Error(`web server cannot listen on ${config.host}:${config.port}: ${error.message}`)));
    server.listen({ host: config.host, port: config.port }, resolve);
  });
  const url = reachableUrl(config.host, (server.address() as AddressInfo).port);
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Open event streams would hold close() open indefinitely.
        server.closeAllConnections();
      }),
  };
}
