import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { GatewayConfig, OnlySlice } from '../services/common/config/slices.js';
import type { InProcessChannels } from '../services/common/grpc/in-process.js';
import type { Logger } from '../services/common/log.js';
import { loadMetrics, observeGauge } from '../services/common/metrics.js';
import type { RunningService } from '../services/common/service.js';
import { taskBackend } from './a2a/backend.js';
import { a2aRouter } from './a2a/router.js';
import type { PushConfigStore } from './a2a/push.js';
import { createAgent, type Agent } from './app/agent.js';
import { connectBackends, type BackendAddresses } from './app/backends.js';
import { backendReadiness, type Readiness } from './app/readiness.js';
import { createHttpApp } from './http/app.js';
import { HOST_EXEMPT_PATHS } from './http/cross-site.js';
import { HttpDrain, serverDrainDelay } from './http/drain.js';
import { reachableUrl } from './http/url.js';
import { mcpRouter } from './mcp/router.js';
import { openAiRouter } from './openai/router.js';
import { metricsRouter } from './rest/metrics.js';
import { restRouter } from './rest/router.js';
import { openApiRouter } from './openapi/router.js';
import { createEventFeed, type EventFeed } from './app/event-feed.js';
import { eventStreamRouter } from './rest/event-stream.js';
import { trpcRouter } from './trpc/middleware.js';
import { findWebDist, webAppPaths, webAppRouter } from './web/static-app.js';
import { setUpAuth, type GatewayAuth } from './auth/index.js';

export interface GatewayOptions {
  config: OnlySlice<GatewayConfig>;
  log: Logger;
  /** gRPC targets ("host:port", "dns:///host:port") of the services the gateway calls. */
  peers: BackendAddresses;
  /** The services of this process (`asg up`): those among its peers are called directly (services/common/grpc/in-process.ts). */
  inProcess?: InProcessChannels;
}

/** What the HTTP application is made of; startGateway connects the real ones. */
export interface GatewayParts {
  config: OnlySlice<GatewayConfig>;
  log: Logger;
  /** The application layer, unguarded: decisions and conversations are guarded here when `auth` is on. */
  agent: Agent;
  feed: EventFeed;
  /** Where A2A push-notification configs are kept (the store); without it the A2A face offers none. */
  pushConfigs?: PushConfigStore;
  readiness: Readiness;
  auth: GatewayAuth;
  /** The built web chat, served at `/`; none when it was not built. */
  webDist?: string;
}

/** Unix seconds: the `created` of the agent as a model (GET /v1/models). */
const STARTED_AT = Math.floor(Date.now() / 1000);

/**
 * The gateway's HTTP application: the guards and authentication in front (http/app.ts), then
 * the faces — auth's own routes, REST, the OpenAPI document and /docs, the metrics, the
 * OpenAI-compatible face, the event streams, tRPC, A2A, MCP, the web chat.
 */
export function createGatewayApp(parts: GatewayParts): Express {
  const { config, log, auth, feed, webDist } = parts;
  // Every face's decisions and conversations pass the one guard (the approve role, and who owns a conversation).
  const agent = auth.guard(parts.agent);
  const a2a = a2aRouter({
    backend: taskBackend(agent, feed),
    identity: { name: config.name, description: config.description },
    log,
    security: auth.card,
    cardUrl: {
      ...(config.server.public_url !== undefined && { publicUrl: config.server.public_url }),
      trustedProxies: config.server.trusted_proxies,
    },
    ...(parts.pushConfigs && { push: { store: parts.pushConfigs, allowPrivateNetworks: config.a2a_push.allow_private_networks } }),
  });
  const mcp = mcpRouter({ agent, config, log });
  const events = eventStreamRouter(
    { feed, getConversation: (id) => agent.getConversation(id), viewConversation: (id) => agent.viewConversation(id) },
    log,
  );
  const trpc = trpcRouter({ agent, feed }, log);
  const openai = openAiRouter({ agent, feed, model: { id: config.name, created: STARTED_AT }, log });
  const web = webDist ? [webAppRouter(webDist)] : [];
  const gate = auth.gate(webDist ? webAppPaths(webDist) : undefined);
  return createHttpApp(
    [auth.router, restRouter(agent, parts.readiness, log), openApiRouter(log), metricsRouter(log), openai, events, trpc, a2a, mcp, ...web],
    log,
    { host: config.host, server: config.server },
    gate,
  );
}

/**
 * Starts the stateless HTTP gateway (REST, A2A and MCP) on `config.host`:`config.port`; port 0
 * takes a free port. `stop(deadline)` drains (http/drain.ts: new requests 503, requests in
 * flight finish until the deadline, event streams end at once), then closes the server, its
 * connections and the gRPC clients; without a deadline it cuts at once. Refuses to start
 * (InsecureBindingError, AuthConfigError) on a host beyond loopback without `auth`, or with a
 * token variable unset.
 */
export async function startGateway(options: GatewayOptions): Promise<RunningService & { url: string }> {
  const { config, log } = options;
  // The metrics SDK now, not at the first request that records one (services/common/metrics.ts).
  loadMetrics();
  // First, before anything is connected: the bind rule and the tokens.
  const auth = setUpAuth({ config, audit: { appendAudit: (request) => backends.store.appendAudit(request) }, log });
  const backends = connectBackends(options.peers, config, options.inProcess);
  const agent = createAgent(backends);
  const feed = createEventFeed(backends.store);
  // What every face's subscriptions hold open now: back to where it was once their clients are gone.
  const stopObserving = observeGauge(
    'asg_gateway_event_watches',
    'Event streams this gateway holds open to the store: the live subscriptions of every face',
    async () => feed.openWatches,
  );
  const app = createGatewayApp({
    config,
    log,
    auth,
    agent,
    feed,
    pushConfigs: backends.store,
    // Read at each probe, once `drain` below exists.
    readiness: backendReadiness(
      backends.health,
      () => drain.isDraining,
      async () => (await agent.toolListing()).servers,
      log,
    ),
    // The web chat at `/`, when it was built (npm run build); the API works without it.
    webDist: findWebDist(),
  });
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
    stopObserving();
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
          const outcome = await drain.drain(server, deadline, serverDrainDelay(config));
          log.info('gateway drained', { finished: outcome.finished, streams_ended: outcome.streamsEnded, cut: outcome.cut });
        } finally {
          stopObserving();
          backends.close();
        }
      })();
      return stopping;
    },
  };
}
