import { OrchestratorServiceService } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ConversationStoreServiceService } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import { serviceNameOf, type HealthCheckResponse } from '../../services/common/grpc/health.js';
import type { ToolServer } from '../../gen/ts/asg/tools/v1/tools.js';
import type { HealthClient } from './backends.js';
import { readyServerJson, type ReadyServerJson } from './shapes.js';

/**
 * How long `/ready` waits for a backend's health answer. Under Kubernetes' default probe
 * timeout (1 s): a backend too slow to answer a health check in time is not ready for work.
 */
const READINESS_CHECK_MS = 800;

/** What a backend's grpc.health.v1 Check said, or why it said nothing. */
type BackendState = HealthCheckResponse['status'] | 'UNREACHABLE' | 'NO_ANSWER' | 'NO_HEALTH_SERVICE' | 'FAILED';

/**
 * What `/ready` answers, with no token: states only. Why something is down (a database's
 * error, an MCP server's stderr with its stack trace and paths) goes to the log, and to
 * `GET /tools` for the callers allowed to list tools.
 */
type ReadinessReport =
  // `mcp_servers`: each configured MCP server and whether its tools are available. A server
  // that is down does not make the gateway unready: the agent serves without its tools while
  // it is retried (a `required` server stops startup instead).
  | { status: 'ready'; mcp_servers?: ReadyServerJson[] }
  | { status: 'not_ready'; backends: Record<BackendName, BackendState>; error: string }
  | { status: 'draining'; error: string };

export type BackendName = 'orchestrator' | 'conversation_store';

export interface Readiness {
  check(): Promise<ReadinessReport>;
}

/**
 * The gateway's readiness (`GET /ready`): it can serve when both services it calls say
 * SERVING over grpc.health.v1 — the orchestrator, which runs every turn, and the conversation
 * store, which every read goes to — and it is not draining. Each probe asks anew; with several
 * replicas behind a name, the answer is that of the replica the channel picked, which is the
 * one the next call would go to.
 */
export function backendReadiness(
  health: Record<BackendName, HealthClient>,
  isDraining: () => boolean,
  toolServers?: () => Promise<ToolServer[]>,
): Readiness {
  const names: Record<BackendName, string> = {
    orchestrator: serviceNameOf(OrchestratorServiceService),
    conversation_store: serviceNameOf(ConversationStoreServiceService),
  };
  return {
    async check() {
      if (isDraining()) return { status: 'draining', error: 'the gateway is stopping and takes no new requests' };
      const entries = await Promise.all(
        (Object.keys(names) as BackendName[]).map(async (backend) => [backend, await stateOf(health[backend], names[backend])] as const),
      );
      const backends = Object.fromEntries(entries) as Record<BackendName, BackendState>;
      // The stop may have begun while the checks were out.
      if (isDraining()) return { status: 'draining', error: 'the gateway is stopping and takes no new requests' };
      const notReady = entries.filter(([, state]) => state !== 'SERVING');
      if (notReady.length === 0) return { status: 'ready', ...(await mcpServers(toolServers)) };
      return {
        status: 'not_ready',
        backends,
        error: `not ready: ${notReady.map(([backend, state]) => `${backend} is ${state}`).join(', ')}`,
      };
    },
  };
}

/** The MCP servers' availability, when the orchestrator tells it in time; nothing otherwise (readiness is about the backends). */
async function mcpServers(toolServers: (() => Promise<ToolServer[]>) | undefined): Promise<{ mcp_servers?: ReadyServerJson[] }> {
  if (!toolServers) return {};
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), READINESS_CHECK_MS)));
  try {
    const servers = await Promise.race([toolServers(), late]);
    return servers ? { mcp_servers: servers.map(readyServerJson) } : {};
  } catch {
    return {};
  } finally {
    clearTimeout(timer);
  }
}

async function stateOf(client: HealthClient, service: string): Promise<BackendState> {
  try {
    return (await client.Check({ service }, { timeoutMs: READINESS_CHECK_MS })).status;
  } catch (error) {
    if (!(error instanceof RpcError)) return 'FAILED';
    switch (error.code) {
      case GrpcStatus.UNAVAILABLE:
        return 'UNREACHABLE';
      case GrpcStatus.DEADLINE_EXCEEDED:
        return 'NO_ANSWER';
      // A backend that serves health but not this service (another service at that address).
      case GrpcStatus.NOT_FOUND:
        return 'SERVICE_UNKNOWN';
      case GrpcStatus.UNIMPLEMENTED:
        return 'NO_HEALTH_SERVICE';
      default:
        return 'FAILED';
    }
  }
}
