import { setTimeout as delay } from 'node:timers/promises';
import { status as GrpcStatus, type Server, type ServerWritableStream, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { HealthImplementation, service as healthDefinition, type ServingStatus } from 'grpc-health-check';
import { ServiceError } from './errors.js';
import type { ServerStreamingMethodDefinition, UnaryMethodDefinition } from './method-definition.js';
import type { ServiceHandlers } from './server.js';

/**
 * The health name that answers for the process alone: SERVING as long as the server answers,
 * whether or not the service is ready (a store waiting for its database is alive). For
 * liveness and startup probes, which restart a process that fails them; readiness probes ask
 * "" or the service's name.
 */
export const LIVENESS_SERVICE = 'liveness';

/** How a stop ends a health watch: its caller watches another replica. */
const WATCH_ENDED = 'the server is stopping; watch the health of another replica';

/**
 * grpc.health.v1 (the gRPC health checking protocol) on a service's server, with the grpc
 * project's own implementation (`grpc-health-check`): `Check` and `Watch` answer for the
 * server as a whole ("") and for each service it serves by its full name
 * ("asg.store.v1.ConversationStoreService"). Kubernetes' gRPC probes, `grpc_health_probe`,
 * load balancers and the gateway's `/ready` (gateway/app/readiness.ts) ask it.
 *
 * A server starts NOT_SERVING, is SERVING once `markServing` says it is ready (each service
 * decides what ready means: docs/architecture.md, "Health"), and is NOT_SERVING again as soon
 * as its stop begins (`beginStop`), while it still takes calls: whoever probes it stops
 * sending new work during the grace period.
 */
export class ServingHealth {
  private readonly health: HealthImplementation;
  private readonly names: string[];
  /** Open Watch calls: a stop ends them, or they would hold the server's graceful shutdown until its deadline. */
  private readonly watches = new Set<ServerWritableStream<unknown, unknown>>();
  /** The status of every name, as `set` last made it. */
  private status: ServingStatus = 'NOT_SERVING';
  /** A stop began: NOT_SERVING for good, whatever the service says after. */
  private stopping = false;
  /** Open Watch calls from this process (in-process.ts): told each status, and the end of a stop. */
  private readonly localWatches = new Set<(event: ServingStatus | 'ended') => void>();

  /** Adds grpc.health.v1 to `server` for `definitions` (generated service definitions), all NOT_SERVING. */
  constructor(server: Server, definitions: Record<string, unknown>[]) {
    this.names = ['', ...definitions.map(serviceNameOf)];
    this.health = new HealthImplementation({
      ...Object.fromEntries(this.names.map((name) => [name, 'NOT_SERVING' as ServingStatus])),
      [LIVENESS_SERVICE]: 'SERVING',
    });
    // The library adds its service itself; its Watch handler is wrapped on the way to keep
    // track of the open watches, which it never ends.
    this.health.addToServer({
      addService: (definition: Parameters<Server['addService']>[0], implementation: UntypedServiceImplementation) => {
        const watch = implementation.watch as (call: ServerWritableStream<unknown, unknown>) => void;
        server.addService(definition, {
          ...implementation,
          watch: (call: ServerWritableStream<unknown, unknown>) => {
            this.watches.add(call);
            call.once('cancelled', () => this.watches.delete(call));
            call.once('finish', () => this.watches.delete(call));
            watch(call);
          },
        });
      },
    } as unknown as Parameters<HealthImplementation['addToServer']>[0]);
  }

  /** Every name this server answers health checks for: "" and each service's full name. */
  get serviceNames(): readonly string[] {
    return this.names;
  }

  /** Ready (again); ignored once a stop began. */
  markServing(): void {
    if (!this.stopping) this.set('SERVING');
  }

  /** Not ready for now (a service whose dependency is away): probes take it out until markServing. */
  markNotServing(): void {
    if (!this.stopping) this.set('NOT_SERVING');
  }

  /**
   * The start of a stop: NOT_SERVING at once (told to every Watch), then up to `drainDelayMs`
   * (bounded by `deadline`, epoch ms) of serving on so that probes and balancers see it and
   * take this server out, then every Watch is ended with UNAVAILABLE — its caller watches
   * another replica — so that nothing holds the server's shutdown, which comes next.
   */
  async beginStop(deadline: number, drainDelayMs: number): Promise<void> {
    this.stopping = true;
    this.set('NOT_SERVING');
    const wait = Math.min(drainDelayMs, Math.max(0, deadline - Date.now()));
    if (wait > 0) await delay(wait);
    for (const call of this.watches) {
      // A server stream's 'error' event is its final status; the NOT_SERVING written before it is sent first.
      call.emit('error', { code: GrpcStatus.UNAVAILABLE, details: WATCH_ENDED });
    }
    this.watches.clear();
    for (const watch of this.localWatches) watch('ended');
  }

  /**
   * `Check` and `Watch` as handlers, for the clients of this process (in-process.ts): the same
   * answers as the grpc-health-check library gives over gRPC — NOT_FOUND from Check and
   * SERVICE_UNKNOWN from Watch for a name this server does not serve, every status set told to
   * each watch, UNAVAILABLE when a stop ends the watches.
   */
  get handlers(): ServiceHandlers<typeof HEALTH_DEFINITION> {
    return {
      Check: async ({ service }) => {
        if (service === LIVENESS_SERVICE) return { status: 'SERVING' };
        if (!this.names.includes(service)) throw new ServiceError(GrpcStatus.NOT_FOUND, `Health status unknown for service ${service}`);
        return { status: this.status };
      },
      Watch: ({ service }, ctx) => this.watchHere(service, ctx.signal),
    };
  }

  private async *watchHere(service: string, signal: AbortSignal): AsyncGenerator<HealthCheckResponse> {
    const alive = service === LIVENESS_SERVICE;
    const known = alive || this.names.includes(service);
    const events: (ServingStatus | 'ended')[] = [];
    let wake: (() => void) | undefined;
    const listener = (event: ServingStatus | 'ended') => {
      events.push(event);
      wake?.();
    };
    const onAbort = () => wake?.();
    this.localWatches.add(listener);
    signal.addEventListener('abort', onAbort);
    try {
      yield { status: alive ? 'SERVING' : known ? this.status : 'SERVICE_UNKNOWN' };
      while (!signal.aborted) {
        const event = events.shift();
        if (event === undefined) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        } else if (event === 'ended') {
          throw new ServiceError(GrpcStatus.UNAVAILABLE, WATCH_ENDED);
        } else if (known && !alive) {
          yield { status: event };
        }
      }
    } finally {
      this.localWatches.delete(listener);
      signal.removeEventListener('abort', onAbort);
    }
  }

  private set(status: ServingStatus): void {
    if (status === this.status) return;
    this.status = status;
    for (const name of this.names) this.health.setStatus(name, status);
    for (const watch of this.localWatches) watch(status);
  }
}

/** The full name of a generated service definition's service, from a method's path ("/asg.store.v1.ConversationStoreService/GetConversation"). */
export function serviceNameOf(definition: Record<string, unknown>): string {
  const first = Object.values(definition)[0] as { path?: string } | undefined;
  const name = first?.path?.split('/')[1];
  if (!name) throw new Error('not a gRPC service definition: it has no method with a path');
  return name;
}

/** grpc.health.v1 HealthCheckRequest / HealthCheckResponse as the library's proto loader reads them (enums as names). */
export interface HealthCheckRequest {
  service: string;
}
export interface HealthCheckResponse {
  status: ServingStatus | 'SERVICE_UNKNOWN';
}

/**
 * The health service's `Check` and `Watch`, typed, for `createPromiseClient`. `Check` is not a
 * read the client retries (its name is no Get/List/Describe): a probe wants the answer of now,
 * within its deadline.
 */
export const HEALTH_DEFINITION = {
  Check: healthDefinition.Check as unknown as UnaryMethodDefinition<HealthCheckRequest, HealthCheckResponse>,
  Watch: healthDefinition.Watch as unknown as ServerStreamingMethodDefinition<HealthCheckRequest, HealthCheckResponse>,
};
