import { mkdirSync } from 'node:fs';
import type { AgentConfig } from '../services/common/config/schema.js';
import { configSlice } from '../services/common/config/slices.js';
import { InProcessChannels } from '../services/common/grpc/in-process.js';
import type { Logger } from '../services/common/log.js';
import type { RunningService } from '../services/common/service.js';
import { startConversationStore } from '../services/conversation-store/index.js';
import { startLlmGateway } from '../services/llm-gateway/index.js';
import { startOrchestrator } from '../services/orchestrator/index.js';
import { runNode } from '../services/orchestrator/index.js';
import { startToolBroker } from '../services/tool-broker/index.js';
import { startA2aBridge } from '../services/a2a-bridge/index.js';
import { startGateway } from '../gateway/index.js';

const LOOPBACK_ANY_PORT = '127.0.0.1:0';

export interface Mesh {
  url: string;
  services: RunningService[];
  /** Stops every service, the gateway first; requests in flight may finish until `deadline` (epoch ms). */
  stop(deadline?: number): Promise<void>;
}

/**
 * Every service in this process, each on its own loopback port. With `grpc.in_process` (the
 * default) they call each other's handlers directly, with the contracts they keep over gRPC
 * (services/common/grpc/in-process.ts); without it, over their loopback ports exactly as they
 * do when deployed apart. Started in dependency order and stopped in reverse; a
 * failure part-way stops what already started. Stopping in reverse is what lets turns finish:
 * the gateway drains first while everything behind it still serves, then the orchestrator
 * gets what is left of the grace, then the services it called, the store last.
 */
export async function startMesh(given: AgentConfig, log: (service: string) => Logger): Promise<Mesh> {
  // No probe or balancer watches the services' loopback ports here (only the gateway is reached
  // from outside, and it drains first): a stopping service has no one to wait for.
  const config: AgentConfig = { ...given, grpc: { ...given.grpc, drain_delay: 0 } };
  mkdirSync(config.data_dir, { recursive: true });
  const inProcess = config.grpc.in_process ? new InProcessChannels() : undefined;
  const started: RunningService[] = [];
  const stopAll = async (deadline?: number) => {
    for (const service of [...started].reverse()) {
      await service.stop(deadline).catch((error: unknown) => log('asg').error('stop failed', { service: service.name, error: String(error) }));
    }
  };
  try {
    const store = await startConversationStore({ config: configSlice(config, 'conversationStore'), listen: LOOPBACK_ANY_PORT, log: log('conversation-store'), inProcess });
    started.push(store);
    const llm = await startLlmGateway({ config: configSlice(config, 'llmGateway'), listen: LOOPBACK_ANY_PORT, log: log('llm-gateway'), inProcess });
    started.push(llm);
    const tools = await startToolBroker({ config: configSlice(config, 'toolBroker'), listen: LOOPBACK_ANY_PORT, log: log('tool-broker'), inProcess });
    started.push(tools);
    const a2a = await startA2aBridge({ config: configSlice(config, 'a2aBridge'), listen: LOOPBACK_ANY_PORT, log: log('a2a-bridge'), inProcess });
    started.push(a2a);
    const orchestrator = await startOrchestrator({
      config: configSlice(config, 'orchestrator'),
      listen: LOOPBACK_ANY_PORT,
      log: log('orchestrator'),
      inProcess,
      peers: { conversationStore: store.address, llmGateway: llm.address, toolBroker: tools.address, a2aBridge: a2a.address },
      // The services listen on ports picked at each start; the gateway's is what stays (issue 14: a restart takes over its own runs at once).
      node: runNode(`${config.host}:${config.port}`),
    });
    started.push(orchestrator);
    const gateway = await startGateway({
      config: configSlice(config, 'gateway'),
      log: log('gateway'),
      peers: { orchestrator: orchestrator.address, conversationStore: store.address },
      inProcess,
    });
    started.push(gateway);
    return { url: gateway.url, services: started, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
