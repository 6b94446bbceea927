import { A2ABridgeServiceService } from '../../gen/ts/asg/a2a/v1/a2a.js';
import { createServer, implement, listen, shutdown } from '../common/grpc/server.js';
import type { A2aBridgeConfig } from '../common/config/slices.js';
import type { RunningService, ServiceOptions } from '../common/service.js';
import { A2aBridge } from './bridge.js';
import { a2aBridgeHandlers } from './server.js';

/**
 * a2a-bridge: the mesh's outbound A2A. Holds no connections and no state besides a few
 * minutes' memory of each peer's dialect, so it starts at once and any replica serves any call.
 */
export async function startA2aBridge(options: ServiceOptions<A2aBridgeConfig>): Promise<RunningService> {
  const { config, log } = options;
  const bridge = new A2aBridge(config.a2a_max_depth, log);
  const server = createServer();
  server.addService(A2ABridgeServiceService, implement(A2ABridgeServiceService, 'a2a-bridge', a2aBridgeHandlers(bridge), log));
  const port = await listen(server, options.listen);
  const host = options.listen.slice(0, options.listen.lastIndexOf(':'));
  log.info('a2a-bridge listening', { address: `${host}:${port}`, max_depth: config.a2a_max_depth });
  let stopping: Promise<void> | undefined;
  return {
    name: 'a2a-bridge',
    address: `${host}:${port}`,
    port,
    stop: (deadline) => (stopping ??= shutdown(server, deadline)),
  };
}
