import { A2ABridgeServiceService } from '../../gen/ts/asg/a2a/v1/a2a.js';
import { ServingHealth } from '../common/grpc/health.js';
import { serveInProcess } from '../common/grpc/in-process.js';
import { createServer, DEFAULT_STOP_GRACE_MS, implement, listen, shutdown } from '../common/grpc/server.js';
import type { A2aBridgeConfig } from '../common/config/slices.js';
import type { RunningService, ServiceOptions } from '../common/service.js';
import { A2aBridge } from './bridge.js';
import { a2aBridgeHandlers } from './server.js';

/**
 * a2a-bridge: the mesh's outbound A2A. Holds no connections and no state besides a few
 * minutes' memory of each peer's dialect, so it starts at once and any replica serves any call.
 * Ready (health SERVING) as soon as it listens: a peer agent that is down is reported per call.
 */
export async function startA2aBridge(options: ServiceOptions<A2aBridgeConfig>): Promise<RunningService> {
  const { config, log } = options;
  const bridge = new A2aBridge(config.a2a_max_depth, log);
  const server = createServer(config.grpc);
  const health = new ServingHealth(server, [A2ABridgeServiceService]);
  const handlers = a2aBridgeHandlers(bridge);
  server.addService(A2ABridgeServiceService, implement(A2ABridgeServiceService, 'a2a-bridge', handlers, log));
  const port = await listen(server, options.listen);
  const host = options.listen.slice(0, options.listen.lastIndexOf(':'));
  const local = serveInProcess(
    options.inProcess,
    { definition: A2ABridgeServiceService, address: `${host}:${port}`, handlers, service: 'a2a-bridge', log },
    health,
  );
  health.markServing();
  log.info('a2a-bridge listening', { address: `${host}:${port}`, max_depth: config.a2a_max_depth });
  let stopping: Promise<void> | undefined;
  return {
    name: 'a2a-bridge',
    address: `${host}:${port}`,
    port,
    stop: (deadline = Date.now() + DEFAULT_STOP_GRACE_MS) =>
      (stopping ??= (async () => {
        await health.beginStop(deadline, config.grpc.drain_delay);
        await Promise.all([shutdown(server, deadline), local.stop(deadline)]);
      })()),
  };
}
