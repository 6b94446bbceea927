import type { AgentConfig } from './schema.js';

/**
 * Each service receives only its own slice of the configuration, so what a
 * service may depend on is visible here and in docs/architecture.md, and a service started
 * alone (`asg serve <service>`) is known to need nothing else. The types are picked from the
 * zod schema's output (schema.ts), never written out again.
 */
export const CONFIG_SLICES = {
  // `grpc` (every service): its server's connection age, ping policy and drain; its clients' keepalive.
  // `chat`: turn_timeout bounds how long a running-turn mark can be live (older marks are stale);
  // `store`: SQLite in data_dir or a PostgreSQL URL, and the pool's limits;
  // `events`: NATS JetStream for the events that cross replicas (PostgreSQL only).
  conversationStore: ['data_dir', 'chat', 'store', 'events', 'grpc'],
  // `agent`: the models named by the tree's llm nodes are checked at start (startup-checks.ts).
  llmGateway: ['llm', 'agent', 'rate_limits', 'grpc'],
  toolBroker: ['mcp_servers', 'rate_limits', 'grpc'],
  a2aBridge: ['a2a_max_depth', 'grpc'],
  // `llm`: the default model and the model-call deadline; `mcp_servers`: the tool deadlines.
  // `runs`: the lease on the turns it runs, the takeover of runs whose replica died, and how long journals are kept.
  // `approvals`: when the approvals it creates expire; `webhooks`: where it delivers their events.
  // `retention`, `events`: what its lifecycle sweep removes (events.keep).
  // `name`: the agent's name, simple mode's node in a run's journal.
  orchestrator: [
    'name',
    'prompt',
    'llm',
    'chat',
    'mcp_servers',
    'a2a',
    'agent',
    'runs',
    'approvals',
    'webhooks',
    'a2a_push',
    'retention',
    'events',
    'grpc',
  ],
  // `chat`: the turn deadline of its calls to the orchestrator.
  // `auth`, `insecure`: who may call it; `metrics`: whether GET /metrics is open; `a2a_push`: which push URLs it accepts.
  gateway: ['name', 'description', 'host', 'port', 'server', 'serve_mcp', 'chat', 'auth', 'insecure', 'metrics', 'grpc', 'a2a_push'],
} as const satisfies Record<string, readonly (keyof AgentConfig)[]>;

export type ConfigSliceName = keyof typeof CONFIG_SLICES;
export type ConfigSlice<S extends ConfigSliceName> = Pick<AgentConfig, (typeof CONFIG_SLICES)[S][number]>;

export type ConversationStoreConfig = ConfigSlice<'conversationStore'>;
export type LlmGatewayConfig = ConfigSlice<'llmGateway'>;
export type ToolBrokerConfig = ConfigSlice<'toolBroker'>;
export type A2aBridgeConfig = ConfigSlice<'a2aBridge'>;
export type OrchestratorConfig = ConfigSlice<'orchestrator'>;
export type GatewayConfig = ConfigSlice<'gateway'>;

/**
 * A slice and nothing more: the type checker refuses the other fields of AgentConfig, so a
 * caller (or a test) cannot hand a service the whole configuration by accident.
 */
export type OnlySlice<Slice> = Slice & { [Field in Exclude<keyof AgentConfig, keyof Slice>]?: never };

/** The fields of `service`'s slice, and only those: what its `start…` function is given. */
export function configSlice<S extends ConfigSliceName>(config: AgentConfig, service: S): ConfigSlice<S> {
  const fields: readonly (keyof AgentConfig)[] = CONFIG_SLICES[service];
  return Object.fromEntries(fields.filter((field) => field in config).map((field) => [field, config[field]])) as ConfigSlice<S>;
}
