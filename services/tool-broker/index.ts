import { ToolBrokerServiceService } from '../../gen/ts/asg/tools/v1/tools.js';
import { ServingHealth } from '../common/grpc/health.js';
import { serveInProcess } from '../common/grpc/in-process.js';
import { createServer, DEFAULT_STOP_GRACE_MS, implement, listen, shutdown } from '../common/grpc/server.js';
import { rateRules } from '../common/config/schema.js';
import { RateLimiter } from '../common/rate-limit.js';
import type { ToolBrokerConfig } from '../common/config/slices.js';
import type { RunningService, ServiceOptions } from '../common/service.js';
import { ToolComposite } from './composite.js';
import { toolBrokerHandlers } from './server.js';

/**
 * tool-broker: connects to every MCP server of `config.mcp_servers` (startup fails when one
 * cannot be reached or two offer the same tool name), then serves ToolBrokerService. Ready
 * (health SERVING) from then on, also while an MCP server is down later: that is reported per
 * tool call (and the connection is made again), and the broker's other servers still serve.
 */
export async function startToolBroker(options: ServiceOptions<ToolBrokerConfig>): Promise<RunningService> {
  const { config, log } = options;
  const composite = await ToolComposite.start(config.mcp_servers, log);
  const server = createServer(config.grpc);
  const health = new ServingHealth(server, [ToolBrokerServiceService]);
  const limiter = new RateLimiter(rateRules(config.rate_limits.tools), config.rate_limits.max_wait, 'tool');
  const handlers = toolBrokerHandlers(composite, limiter);
  server.addService(ToolBrokerServiceService, implement(ToolBrokerServiceService, 'tool-broker', handlers, log));
  let port: number;
  try {
    port = await listen(server, options.listen);
  } catch (error) {
    await composite.close();
    throw error;
  }
  const host = options.listen.slice(0, options.listen.lastIndexOf(':'));
  const local = serveInProcess(
    options.inProcess,
    { definition: ToolBrokerServiceService, address: `${host}:${port}`, handlers, service: 'tool-broker', log },
    health,
  );
  health.markServing();
  log.info('tool-broker listening', { address: `${host}:${port}`, tools: composite.listTools().length });
  let stopping: Promise<void> | undefined;
  return {
    name: 'tool-broker',
    address: `${host}:${port}`,
    port,
    // The MCP children are closed after the calls in flight (bounded: mcp-connection.ts).
    stop: (deadline = Date.now() + DEFAULT_STOP_GRACE_MS) =>
      (stopping ??= (async () => {
        await health.beginStop(deadline, config.grpc.drain_delay);
        await Promise.all([shutdown(server, deadline), local.stop(deadline)]);
        await composite.close();
      })()),
  };
}
