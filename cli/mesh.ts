import { mkdirSync } from 'node:fs';
import type { AgentConfig } from '../services/common/config/schema.js';
import { configSlice } from '../services/common/config/slices.js';
import { InProcessChannels } from '../services/common/grpc/in-process.js';
import type { Logger } from '../services/common/log.js';
import type { RunningService } from '../services/common/service.js';

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
 * do when deployed apart. Stopped in the reverse of the order below; a failure part-way stops
 * what already started. Stopping in reverse is what lets turns finish: the gateway drains
 * first while everything behind it still serves, then the orchestrator gets what is left of
 * the grace, then the services it called, the store last.
 *
 * The four services that need no peer start together, each as soon as its own code is loaded:
 * the tool broker first of all, so that its MCP servers (child processes that
 * load their own code) boot on another core while this process loads the others' code. The
 * orchestrator, which needs their addresses, and then the gateway follow.
 */
export async function startMesh(given: AgentConfig, log: (service: string) => Logger): Promise<Mesh> {
  // No probe or balancer watches the services' loopback ports here (only the gateway is reached
  // from outside, and it drains first): a stopping service has no one to wait for.
  const config: AgentConfig = { ...given, grpc: { ...given.grpc, drain_delay: 0 } };
  mkdirSync(config.data_dir, { recursive: true });
  const inProcess = config.grpc.in_process ? new InProcessChannels() : undefined;
  const started: RunningService[] = [];
  const stopAll = async (deadline?: number) => {
    // The gateway drains first, until the deadline: what the services behind it hand on before then still reaches its callers.
    if (deadline !== undefined) for (const service of started) service.stopsAt?.(deadline);
    for (const service of [...started].reverse()) {
      await service
        .stop(deadline)
        .catch((error: unknown) => log('asg').error('stop failed', { service: service.name, error: String(error) }));
    }
  };
  try {
    // The tool broker's code alone first: loaded with the others, it would finish with them.
    const { startToolBroker } = await import('../services/tool-broker/index.js');
    const tools = startToolBroker({
      config: configSlice(config, 'toolBroker'),
      listen: LOOPBACK_ANY_PORT,
      log: log('tool-broker'),
      inProcess,
    });
    const store = import('../services/conversation-store/index.js').then(({ startConversationStore }) =>
      startConversationStore({
        config: configSlice(config, 'conversationStore'),
        listen: LOOPBACK_ANY_PORT,
        log: log('conversation-store'),
        inProcess,
      }),
    );
    const llm = import('../services/llm-gateway/index.js').then(({ startLlmGateway }) =>
      startLlmGateway({ config: configSlice(config, 'llmGateway'), listen: LOOPBACK_ANY_PORT, log: log('llm-gateway'), inProcess }),
    );
    const a2a = import('../services/a2a-bridge/index.js').then(({ startA2aBridge }) =>
      startA2aBridge({ config: configSlice(config, 'a2aBridge'), listen: LOOPBACK_ANY_PORT, log: log('a2a-bridge'), inProcess }),
    );
    const later = Promise.all([
      import('../services/orchestrator/index.js'),
      import('../gateway/index.js'),
      // The copies the in-process calls make instead of protobuf bytes (message-copies.ts), in use before the callers start.
      inProcess ? import('../services/common/grpc/message-copies.js').then(({ loadMessageCopies }) => loadMessageCopies()) : undefined,
    ]);
    later.catch(() => undefined); // awaited below unless a peer failed first
    const peers = await Promise.allSettled([store, llm, tools, a2a]);
    for (const outcome of peers) if (outcome.status === 'fulfilled') started.push(outcome.value);
    const failed = peers.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    const [storeService, llmService, toolsService, a2aService] = started as [
      RunningService,
      RunningService,
      RunningService,
      RunningService,
    ];
    const [{ startOrchestrator, runNode }, { startGateway }, copies] = await later;
    if (inProcess && copies) inProcess.copyWith(copies);
    const orchestrator = await startOrchestrator({
      config: configSlice(config, 'orchestrator'),
      listen: LOOPBACK_ANY_PORT,
      log: log('orchestrator'),
      inProcess,
      peers: {
        conversationStore: storeService.address,
        llmGateway: llmService.address,
        toolBroker: toolsService.address,
        a2aBridge: a2aService.address,
      },
      // The services listen on ports picked at each start; the gateway's is what stays (a restart takes over its own runs at once).
      node: runNode(`${config.host}:${config.port}`),
    });
    started.push(orchestrator);
    const gateway = await startGateway({
      config: configSlice(config, 'gateway'),
      log: log('gateway'),
      peers: { orchestrator: orchestrator.address, conversationStore: storeService.address },
      inProcess,
    });
    started.push(gateway);
    return { url: gateway.url, services: started, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
