import { OrchestratorServiceService } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ConversationStoreServiceService } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import { serviceNameOf, type HealthCheckResponse } from '../../services/common/grpc/health.js';
import type { ToolServer } from '../../gen/ts/asg/tools/v1/tools.js';
import type { Logger } from '../../services/common/log.js';
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
 * What `/ready` answers, with no token: states, and which dependency is down in words. Why it
 * is down (a database's error, an MCP server's stderr with its stack trace and paths) goes to
 * the log, and to `GET /tools` for the callers allowed to list tools: an open route must not
 * show a stranger the machine's paths or the code's stack.
 */
type ReadinessReport =
  // `mcp_servers`: each configured MCP server and whether its tools are available. A server
  // that is down does not make the gateway unready: the agent serves without its tools while
  // it is retried (a `required` server stops startup instead); `warning` says so in words.
  | { status: 'ready'; mcp_servers?: ReadyServerJson[]; warning?: string }
  | { status: 'not_ready'; backends: Record<BackendName, BackendState>; error: string }
  | { status: 'draining'; error: string };

export type BackendName = 'orchestrator' | 'conversation_store';

export interface Readiness {
  check(): Promise<ReadinessReport>;
}

const BACKEND_WORDS: Record<BackendName, string> = {
  orchestrator: 'the orchestrator',
  conversation_store: 'the conversation store',
};

/** What each state means, in words a person on call reads: no code, no address, no path. */
const STATE_WORDS: Record<Exclude<BackendState, 'SERVING'>, string> = {
  NOT_SERVING: 'is not serving (starting, stopping, or its database is down)',
  UNKNOWN: 'does not know its own state yet',
  SERVICE_UNKNOWN: 'does not serve this service (is another service at its address?)',
  UNREACHABLE: 'cannot be reached',
  NO_ANSWER: 'did not answer its health check in time',
  NO_HEALTH_SERVICE: 'has no health service (is another program at its address?)',
  FAILED: 'failed its health check',
};

const DRAINING = 'the gateway is stopping and takes no new requests';

/**
 * The gateway's readiness (`GET /ready`): it can serve when both services it calls say
 * SERVING over grpc.health.v1 — the orchestrator, which runs every turn, and the conversation
 * store, which every read goes to — and it is not draining. Each probe asks anew; with several
 * replicas behind a name, the answer is that of the replica the channel picked, which is the
 * one the next call would go to. A backend's change of state is logged once, with the error
 * behind it.
 */
export function backendReadiness(
  health: Record<BackendName, HealthClient>,
  isDraining: () => boolean,
  toolServers?: () => Promise<ToolServer[]>,
  log?: Logger,
): Readiness {
  const names: Record<BackendName, string> = {
    orchestrator: serviceNameOf(OrchestratorServiceService),
    conversation_store: serviceNameOf(ConversationStoreServiceService),
  };
  const lastState = new Map<BackendName, BackendState>();
  const observe = (backend: BackendName, state: BackendState, detail: string | undefined) => {
    if (lastState.get(backend) === state) return;
    lastState.set(backend, state);
    if (state === 'SERVING') log?.info('readiness: backend serving', { backend });
    else log?.warn('readiness: backend not serving', { backend, state, error: detail });
  };
  return {
    async check() {
      if (isDraining()) return { status: 'draining', error: DRAINING };
      const entries = await Promise.all(
        (Object.keys(names) as BackendName[]).map(async (backend) => {
          const { state, detail } = await stateOf(health[backend], names[backend]);
          observe(backend, state, detail);
          return [backend, state] as const;
        }),
      );
      const backends = Object.fromEntries(entries) as Record<BackendName, BackendState>;
      // The stop may have begun while the checks were out.
      if (isDraining()) return { status: 'draining', error: DRAINING };
      const notReady = entries.filter(([, state]) => state !== 'SERVING');
      if (notReady.length === 0) return { status: 'ready', ...(await mcpServers(toolServers)) };
      return {
        status: 'not_ready',
        backends,
        error: `not ready: ${notReady
          .map(([backend, state]) => `${BACKEND_WORDS[backend]} ${STATE_WORDS[state as Exclude<BackendState, 'SERVING'>]}`)
          .join('; ')}; the log says why`,
      };
    },
  };
}

/** The MCP servers' availability, when the orchestrator tells it in time; nothing otherwise (readiness is about the backends). */
async function mcpServers(
  toolServers: (() => Promise<ToolServer[]>) | undefined,
): Promise<{ mcp_servers?: ReadyServerJson[]; warning?: string }> {
  if (!toolServers) return {};
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), READINESS_CHECK_MS)));
  try {
    const servers = await Promise.race([toolServers(), late]);
    if (!servers) return {};
    const down = servers.filter((server) => !server.available).map((server) => `"${server.name}"`);
    return {
      mcp_servers: servers.map(readyServerJson),
      ...(down.length > 0 && {
        warning: `MCP server${down.length > 1 ? 's' : ''} ${down.join(', ')} unavailable: the agent answers without ${down.length > 1 ? 'their' : 'its'} tools while it is retried; the log and GET /tools say why`,
      }),
    };
  } catch {
    return {};
  } finally {
    clearTimeout(timer);
  }
}

/** The backend's state, and the error behind it for the log (never for the answer). */
async function stateOf(client: HealthClient, service: string): Promise<{ state: BackendState; detail?: string }> {
  try {
    return { state: (await client.Check({ service }, { timeoutMs: READINESS_CHECK_MS })).status };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    if (!(error instanceof RpcError)) return { state: 'FAILED', detail };
    switch (error.code) {
      case GrpcStatus.UNAVAILABLE:
        return { state: 'UNREACHABLE', detail };
      case GrpcStatus.DEADLINE_EXCEEDED:
        return { state: 'NO_ANSWER', detail };
      // A backend that serves health but not this service (another service at that address).
      case GrpcStatus.NOT_FOUND:
        return { state: 'SERVICE_UNKNOWN', detail };
      case GrpcStatus.UNIMPLEMENTED:
        return { state: 'NO_HEALTH_SERVICE', detail };
      default:
        return { state: 'FAILED', detail };
    }
  }
}
