import { A2ABridgeServiceService } from '../../gen/ts/asg/a2a/v1/a2a.js';
import { LlmGatewayServiceService } from '../../gen/ts/asg/llm/v1/llm.js';
import { ConversationStoreServiceService } from '../../gen/ts/asg/store/v1/store.js';
import { ToolBrokerServiceService } from '../../gen/ts/asg/tools/v1/tools.js';
import type { OrchestratorConfig } from '../common/config/slices.js';
import { createPromiseClient, type PromiseClient } from '../common/grpc/client.js';
import type { InProcessChannels } from '../common/grpc/in-process.js';
import type { Peers } from '../common/service.js';

/** The services a turn talks to, as typed promise clients with deadlines. */
export interface OrchestratorClients {
  store: PromiseClient<typeof ConversationStoreServiceService>;
  llm: PromiseClient<typeof LlmGatewayServiceService>;
  tools: PromiseClient<typeof ToolBrokerServiceService>;
  a2a: PromiseClient<typeof A2ABridgeServiceService>;
  close(): void;
}

const STORE_TIMEOUT_MS = 10_000;
// Headroom over the downstream deadline so that the downstream service reports the
// timeout itself, with its clearer message.
export const HEADROOM_MS = 5_000;

/** The slowest configured A2A peer (top-level agents, llm nodes' agents, a2a nodes), at least the default A2A deadline of 60 s. */
function slowestPeer(config: OrchestratorConfig): number {
  const timeouts = config.a2a.map((agent) => agent.timeout);
  const visit = (node: NonNullable<OrchestratorConfig['agent']>): void => {
    for (const agent of node.a2a ?? []) timeouts.push(Number(agent.timeout ?? 60_000));
    node.agents?.forEach(visit);
  };
  if (config.agent) visit(config.agent);
  return Math.max(60_000, ...timeouts);
}

/** The clients of the orchestrator's peers; those served in this process (`inProcess`) are called directly. */
export function createClients(
  config: OrchestratorConfig,
  peers: Pick<Peers, 'conversationStore' | 'llmGateway' | 'toolBroker' | 'a2aBridge'>,
  inProcess?: InProcessChannels,
): OrchestratorClients {
  const slowestTool = Math.max(30_000, ...config.mcp_servers.map((server) => server.timeout));
  const options = { channel: config.grpc, inProcess };
  const store = createPromiseClient(
    ConversationStoreServiceService,
    peers.conversationStore,
    'orchestrator',
    STORE_TIMEOUT_MS,
    {},
    options,
  );
  const llm = createPromiseClient(
    LlmGatewayServiceService,
    peers.llmGateway,
    'orchestrator',
    config.llm.timeout + HEADROOM_MS,
    {},
    options,
  );
  const tools = createPromiseClient(ToolBrokerServiceService, peers.toolBroker, 'orchestrator', slowestTool + HEADROOM_MS, {}, options);
  const a2a = createPromiseClient(A2ABridgeServiceService, peers.a2aBridge, 'orchestrator', slowestPeer(config) + HEADROOM_MS, {}, options);
  return {
    store,
    llm,
    tools,
    a2a,
    close: () => {
      store.close();
      llm.close();
      tools.close();
      a2a.close();
    },
  };
}
