import { OrchestratorServiceService } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { createServer, listen, shutdown } from '../common/grpc/server.js';
import type { OrchestratorConfig } from '../common/config/slices.js';
import type { Peers, RunningService, ServiceOptions } from '../common/service.js';
import { createClients } from './clients.js';
import { orchestratorImplementation } from './server.js';
import { TurnRunner } from './turns.js';

/** Starts the orchestrator: stateless, so any number of replicas can serve any conversation. */
export async function startOrchestrator(options: ServiceOptions<OrchestratorConfig> & { peers: Pick<Peers, 'conversationStore' | 'llmGateway' | 'toolBroker' | 'a2aBridge'> }): Promise<RunningService> {
  const clients = createClients(options.config, options.peers);
  const turns = new TurnRunner(options.config, clients, options.log);
  const server = createServer();
  server.addService(OrchestratorServiceService, orchestratorImplementation(turns, options.log));
  const port = await listen(server, options.listen);
  const host = options.listen.slice(0, options.listen.lastIndexOf(':'));
  return {
    name: 'orchestrator',
    address: `${host}:${port}`,
    port,
    // The gateway has drained before this runs (cli/mesh.ts): turns still in flight here are
    // ones it cut, or callers of a served orchestrator; they get what is left of the grace.
    stop: async (deadline) => {
      await shutdown(server, deadline);
      clients.close();
    },
  };
}
