import { createPromiseClient, type PromiseClient } from '../../services/common/grpc/client.js';
import type { InProcessChannels } from '../../services/common/grpc/in-process.js';
import type { GatewayConfig } from '../../services/common/config/slices.js';
import { OrchestratorServiceService } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ConversationStoreServiceService } from '../../gen/ts/asg/store/v1/store.js';
import { HEALTH_DEFINITION } from '../../services/common/grpc/health.js';

/** Reads from the store are single queries; ten seconds means the store is in trouble. */
const STORE_DEADLINE_MS = 10_000;
/** Listing tools asks every MCP server; allow as long as one MCP call may take by default. */
const TOOL_LISTING_DEADLINE_MS = 30_000;
/**
 * Describing runs (app/run-views.ts) is part of reading conversations and decodes what the
 * store read, with no other call: it gets the store reads' deadline, not a turn's.
 */
const RUN_VIEWS_DEADLINE_MS = STORE_DEADLINE_MS;

export type OrchestratorClient = PromiseClient<typeof OrchestratorServiceService>;
export type ConversationStoreClient = PromiseClient<typeof ConversationStoreServiceService>;
/** grpc.health.v1 Check of a backend (app/readiness.ts). */
export type HealthClient = PromiseClient<typeof HEALTH_DEFINITION>;

/** The two services the gateway calls, with their deadlines (every call has one, so nothing waits forever). */
export interface Backends {
  orchestrator: OrchestratorClient;
  store: ConversationStoreClient;
  /** The backends' grpc.health.v1 Check, which `/ready` asks (app/readiness.ts). */
  health: { orchestrator: HealthClient; conversation_store: HealthClient };
  close(): void;
}

export interface BackendAddresses {
  orchestrator: string;
  conversationStore: string;
}

/** The gateway's clients; a backend served in this process (`inProcess`, `asg up`) is called directly. */
export function connectBackends(
  peers: BackendAddresses,
  config: Pick<GatewayConfig, 'chat' | 'grpc'>,
  inProcess?: InProcessChannels,
): Backends {
  // A turn runs the model and tools until it answers or stops for approval: it gets the
  // configured turn deadline. The clients connect lazily, so a peer that is not up yet only
  // fails the requests that need it.
  const options = { channel: config.grpc, inProcess };
  const orchestrator = createPromiseClient(
    OrchestratorServiceService,
    peers.orchestrator,
    'gateway',
    config.chat.turn_timeout,
    {
      listTools: TOOL_LISTING_DEADLINE_MS,
      describeRuns: RUN_VIEWS_DEADLINE_MS,
    },
    options,
  );
  const store = createPromiseClient(ConversationStoreServiceService, peers.conversationStore, 'gateway', STORE_DEADLINE_MS, {}, options);
  const health = {
    orchestrator: createPromiseClient(HEALTH_DEFINITION, peers.orchestrator, 'gateway', STORE_DEADLINE_MS, {}, options),
    conversation_store: createPromiseClient(HEALTH_DEFINITION, peers.conversationStore, 'gateway', STORE_DEADLINE_MS, {}, options),
  };
  return {
    orchestrator,
    store,
    health,
    close() {
      orchestrator.close();
      store.close();
      health.orchestrator.close();
      health.conversation_store.close();
    },
  };
}
