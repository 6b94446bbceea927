import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from './log.js';
import { prometheusText, PROMETHEUS_CONTENT_TYPE } from './metrics.js';

/** A metrics port that is up: where, and how to close it. */
export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * The metrics port of a service run alone (`asg serve <service>`): GET /metrics in
 * Prometheus' text format, 404 for anything else. A gRPC service's own port speaks only gRPC;
 * the gateway's GET /metrics on its HTTP port takes the admin role when `auth` is on. This port
 * answers nothing but counts, so it takes no authentication, like the gRPC health service;
 * keep it inside the network that runs the services, as their gRPC ports are (the Kubernetes
 * layout admits only the monitoring namespace: docs/deploy.md).
 */
export async function startMetricsServer(host: string, port: number, log: Logger): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'only GET /metrics is served on this port' }));
      return;
    }
    prometheusText().then(
      (text) => res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE }).end(req.method === 'HEAD' ? undefined : text),
      (error: unknown) => {
        log.error('metrics could not be collected', { error: error instanceof Error ? error.message : String(error) });
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'metrics could not be collected' }));
      },
    );
  });
  // A scrape is one short request: idle connections do not hold a stop.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    throw new Error(
      `the metrics port cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)} (set metrics.port or ASG_METRICS_PORT; 0 turns it off)`,
    );
  });
  const bound = (server.address() as AddressInfo).port;
  log.info('metrics listening', { url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics` });
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
