import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GatewayConfig, OnlySlice } from '../services/common/config/slices.js';
import type { Logger } from '../services/common/log.js';
import type { RunningService } from '../services/common/service.js';
import { taskBackend } from './a2a/backend.js';
import { a2aRouter } from './a2a/router.js';
import { createAgent } from './app/agent.js';
import { connectBackends, type BackendAddresses } from './app/backends.js';
import { backendReadiness } from './app/readiness.js';
import { createHttpApp } from './http/app.js';
import { HOST_EXEMPT_PATHS } from './http/cross-site.js';
import { HttpDrain } from './http/drain.js';
import { reachableUrl } from './http/url.js';
import { mcpRouter } from './mcp/router.js';
import { restRouter } from './rest/router.js';
import { createEventFeed } from './app/event-feed.js';
import { eventStreamRouter } from './rest/event-stream.js';
import { trpcRouter } from './trpc/middleware.js';
import { findWebDist, webAppRouter } from './web/static-app.js';

export interface GatewayOptions {
  config: OnlySlice<GatewayConfig>;
  log: Logger;
  /** gRPC targets ("host:port", "dns:///host:port") of the services the gateway calls. */
  peers: BackendAddresses;
}

/**
 * Starts the stateless HTTP gateway (REST, A2A and MCP) on `config.host`:`config.port`; port 0
 * takes a free port. `stop(deadline)` drains (http/drain.ts: new requests 503, requests in
 * flight finish until the deadline, event streams end at once), then closes the server, its
 * connections and the gRPC clients; without a deadline it cuts at once.
 */
export async function startGateway(options: GatewayOptions): Promise<RunningService & { url: string }> {
  const { config, log } = options;
  const backends = connectBackends(options.peers, config);
  const agent = createAgent(backends);
  const a2a = a2aRouter({ backend: taskBackend(agent, backends.orchestrator), identity: { name: config.name, description: config.description }, log });
  const mcp = mcpRouter({ agent, config, log });
  const feed = createEventFeed(backends.store);
  const events = eventStreamRouter({ feed, getConversation: (id) => agent.getConversation(id), viewConversation: (id) => agent.viewConversation(id) }, log);
  const trpc = trpcRouter({ agent, feed }, log);
  // The web chat at `/`, when it was built (npm run build); the API works without it.
  const webDist = findWebDist();
  const web = webDist ? [webAppRouter(webDist)] : [];
  // Read at each probe, once `drain` below exists.
  const readiness = backendReadiness(backends.health, () => drain.isDraining);
  const app = createHttpApp([restRouter(agent, readiness, log), events, trpc, a2a, mcp, ...web], log, { host: config.host, server: config.server });
  // The probes still answer while draining: /health 200, /ready 503 "draining".
  const drain = new HttpDrain(app, HOST_EXEMPT_PATHS);
  const server = createServer(drain.listener);

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: config.host, port: config.port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    backends.close();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`gateway cannot listen on ${config.host}:${config.port}: ${reason}`);
  }

  const { port } = server.address() as AddressInfo;
  const url = reachableUrl(config.host, port);
  log.info('gateway listening', { url });

  let stopping: Promise<void> | undefined;
  return {
    name: 'gateway',
    address: `${config.host}:${port}`,
    port,
    url,
    stop(deadline = Date.now()) {
      stopping ??= (async () => {
        log.info('gateway draining', { grace_ms: Math.max(0, deadline - Date.now()) });
        try {
          const outcome = await drain.drain(server, deadline, config.server.drain_delay);
          log.info('gateway drained', { finished: outcome.finished, streams_ended: outcome.streamsEnded, cut: outcome.cut });
        } finally {
          backends.close();
        }
      })();
      return stopping;
    },
  };
}
