import type { AgentConfig, ServiceName } from '../services/common/config/schema.js';
import { configSlice } from '../services/common/config/slices.js';
import { createLogger } from '../services/common/log.js';
import { startMetricsServer, type MetricsServer } from '../services/common/metrics-server.js';
import type { Peers, RunningService } from '../services/common/service.js';
import { SERVICE_NAMES } from './service-names.js';

export { SERVICE_NAMES };

const ENV_ADDRESS: Record<ServiceName, string> = {
  conversation_store: 'ASG_CONVERSATION_STORE_ADDR',
  llm_gateway: 'ASG_LLM_GATEWAY_ADDR',
  tool_broker: 'ASG_TOOL_BROKER_ADDR',
  orchestrator: 'ASG_ORCHESTRATOR_ADDR',
  a2a_bridge: 'ASG_A2A_BRIDGE_ADDR',
};

/** Where a service is reached: its environment variable, else `services.<name>` in the config. */
function addressOf(config: AgentConfig, service: ServiceName): string {
  return process.env[ENV_ADDRESS[service]] || config.services[service];
}

/** `--host` and `--port` (or PORT) of `asg serve`. */
export interface Listen {
  host?: string | undefined;
  port?: number | undefined;
}

/** `host:port` of a gRPC address; an IPv6 host in brackets. */
function hostPort(host: string, port: string | number): string {
  return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/**
 * A served service listens on all interfaces (it runs in its own container) on its configured
 * port, or on ASG_LISTEN; --host and --port replace either part.
 */
function listenAddress(config: AgentConfig, service: ServiceName, listen: Listen): string {
  const base = process.env.ASG_LISTEN || hostPort('0.0.0.0', portOf(addressOf(config, service)));
  if (listen.host === undefined && listen.port === undefined) return base;
  const separator = base.lastIndexOf(':');
  return hostPort(listen.host ?? base.slice(0, separator).replace(/^\[(.*)\]$/, '$1'), listen.port ?? base.slice(separator + 1));
}

function portOf(address: string): string {
  return address.slice(address.lastIndexOf(':') + 1);
}

function peers(config: AgentConfig): Peers {
  return {
    conversationStore: addressOf(config, 'conversation_store'),
    llmGateway: addressOf(config, 'llm_gateway'),
    toolBroker: addressOf(config, 'tool_broker'),
    orchestrator: addressOf(config, 'orchestrator'),
    a2aBridge: addressOf(config, 'a2a_bridge'),
  };
}

/**
 * The metrics port of a service alone: ASG_METRICS_PORT, else `metrics.port`; 0 is none. A
 * gRPC service's listens where its gRPC port does (--host, else ASG_LISTEN's host, else all
 * interfaces); the gateway's where the gateway does (its `host`, which --host replaced), so a
 * gateway kept on loopback keeps its metrics there too.
 */
function metricsAddress(service: string, config: AgentConfig, listen: Listen): { host: string; port: number } | undefined {
  const fromEnv = process.env.ASG_METRICS_PORT?.trim();
  const port = fromEnv ? Number(fromEnv) : config.metrics.port;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`ASG_METRICS_PORT must be a port number (0 to 65535), not ${JSON.stringify(fromEnv)}`);
  if (port === 0) return undefined;
  if (service === 'gateway') return { host: config.host, port };
  const grpc = process.env.ASG_LISTEN;
  const host = listen.host ?? (grpc ? grpc.slice(0, grpc.lastIndexOf(':')).replace(/^\[|\]$/g, '') : '0.0.0.0');
  return { host, port };
}

/**
 * Starts one service alone (`asg serve <service>`), for one container per service; only that
 * service's code is loaded. Every service gets a metrics port, closed after the
 * service stops: the gRPC services' own ports speak only gRPC, and the gateway's GET /metrics
 * on its HTTP port takes the admin role when `auth` is on, which a scraper inside the cluster
 * should not need; its metrics port answers nothing but counts, like the others'.
 */
export async function startOneService(
  service: ServiceName | 'gateway' | (typeof SERVICE_NAMES)[number],
  config: AgentConfig,
  listen: Listen = {},
): Promise<RunningService> {
  const running = await startServiceAlone(service, config, listen);
  const where = metricsAddress(service, config, listen);
  if (!where) return running;
  let metrics: MetricsServer;
  try {
    metrics = await startMetricsServer(where.host, where.port, createLogger(service));
  } catch (error) {
    await running.stop();
    throw error;
  }
  return {
    ...running,
    stop: async (deadline) => {
      try {
        await running.stop(deadline);
      } finally {
        await metrics.close();
      }
    },
  };
}

async function startServiceAlone(
  service: ServiceName | 'gateway' | (typeof SERVICE_NAMES)[number],
  config: AgentConfig,
  listen: Listen,
): Promise<RunningService> {
  const log = createLogger(service);
  // The gateway listens on the config's host and port, which --host and --port replaced already (cli/agent.ts).
  switch (service) {
    case 'gateway': {
      const { startGateway } = await import('../gateway/index.js');
      return startGateway({ config: configSlice(config, 'gateway'), log, peers: peers(config) });
    }
    case 'orchestrator': {
      const { startOrchestrator } = await import('../services/orchestrator/index.js');
      return startOrchestrator({
        config: configSlice(config, 'orchestrator'),
        log,
        listen: listenAddress(config, 'orchestrator', listen),
        peers: peers(config),
      });
    }
    case 'conversation-store':
    case 'conversation_store': {
      const { startConversationStore } = await import('../services/conversation-store/index.js');
      return startConversationStore({
        config: configSlice(config, 'conversationStore'),
        log,
        listen: listenAddress(config, 'conversation_store', listen),
      });
    }
    case 'llm-gateway':
    case 'llm_gateway': {
      const { startLlmGateway } = await import('../services/llm-gateway/index.js');
      return startLlmGateway({ config: configSlice(config, 'llmGateway'), log, listen: listenAddress(config, 'llm_gateway', listen) });
    }
    case 'tool-broker':
    case 'tool_broker': {
      const { startToolBroker } = await import('../services/tool-broker/index.js');
      return startToolBroker({ config: configSlice(config, 'toolBroker'), log, listen: listenAddress(config, 'tool_broker', listen) });
    }
    case 'a2a-bridge':
    case 'a2a_bridge': {
      const { startA2aBridge } = await import('../services/a2a-bridge/index.js');
      return startA2aBridge({ config: configSlice(config, 'a2aBridge'), log, listen: listenAddress(config, 'a2a_bridge', listen) });
    }
  }
}
