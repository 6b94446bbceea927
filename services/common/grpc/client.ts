import { connectivityState, credentials, Client, Metadata, status as GrpcStatus, type CallOptions, type ServiceError as GrpcServiceError } from '@grpc/grpc-js';
import { currentContext } from '../context.js';
import { injectTraceContext, SESSION_ATTRIBUTE, SpanKind, withSpan } from '../telemetry.js';
import { RpcError } from './errors.js';

/** The shape ts-proto generates for each method of a `…Service` definition. */
interface UnaryMethodDefinition<Req, Res> {
  path: string;
  requestStream: false;
  responseStream: false;
  requestSerialize: (value: Req) => Buffer;
  responseDeserialize: (value: Buffer) => Res;
}

export interface CallOpts {
  /** Milliseconds from now; capped by the deadline of the request being served. */
  timeoutMs?: number;
}

export type PromiseClient<S> = {
  [K in keyof S]: S[K] extends UnaryMethodDefinition<infer Req, infer Res> ? (request: Req, opts?: CallOpts) => Promise<Res> : never;
} & { close(): void };

/** Metadata every hop carries: x-session-id, authorization (when present), traceparent. */
export function outgoingMetadata(): Metadata {
  const metadata = new Metadata();
  const ctx = currentContext();
  if (ctx?.sessionId) metadata.set('x-session-id', ctx.sessionId);
  if (ctx?.authorization) metadata.set('authorization', ctx.authorization);
  injectTraceContext((key, value) => metadata.set(key, value));
  return metadata;
}

/** The earlier of `now + timeoutMs` and the deadline of the request being served. */
export function effectiveDeadline(timeoutMs: number): Date {
  const own = Date.now() + timeoutMs;
  const inherited = currentContext()?.deadline;
  return new Date(inherited !== undefined ? Math.min(own, inherited) : own);
}

/** How long a call waits for a peer that answered before and is reconnecting (a restart). */
const RECONNECT_WAIT_MS = 2000;

/**
 * Whether to wait for the connection before a call. A peer that has answered before and is
 * not connected now is most likely restarting (a rolling update, a crashed pod coming back):
 * the call waits for it briefly instead of failing at once. A peer never reached fails fast.
 * Only the connection is awaited — a call is never sent twice.
 */
class PeerReadiness {
  private everReached = false;

  constructor(private readonly client: Client) {}

  reached(): void {
    this.everReached = true;
  }

  async settle(deadline: Date): Promise<void> {
    if (!this.everReached) return;
    const channel = this.client.getChannel();
    if (channel.getConnectivityState(true) === connectivityState.READY) return;
    const until = new Date(Math.min(deadline.getTime(), Date.now() + RECONNECT_WAIT_MS));
    // A peer still down after the wait: the call itself then fails with UNAVAILABLE.
    await new Promise<void>((resolve) => this.client.waitForReady(until, () => resolve()));
  }
}

/**
 * A promise-returning client for a generated service definition. Every call gets a
 * deadline, the request's metadata and a CLIENT span named after the method path.
 */
export function createPromiseClient<S extends Record<string, unknown>>(
  definition: S,
  address: string,
  caller: string,
  defaultTimeoutMs: number,
  perMethodTimeoutMs: Partial<Record<keyof S, number>> = {},
): PromiseClient<S> {
  const client = new Client(address, credentials.createInsecure(), {
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    'grpc.max_send_message_length': 64 * 1024 * 1024,
    // Deliberately no transparent retries: a call is made once (a tool call must never run
    // twice), and skipping the retry buffering and channelz bookkeeping saves time on every call.
    'grpc.enable_retries': 0,
    'grpc.enable_channelz': 0,
    // A restarted peer is found again within a second, not after grpc-js's default backoff of up to 2 minutes.
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 1000,
  });
  const peer = new PeerReadiness(client);
  const result: Record<string, unknown> = { close: () => client.close() };
  for (const [name, raw] of Object.entries(definition)) {
    const method = raw as UnaryMethodDefinition<unknown, unknown>;
    if (method.requestStream || method.responseStream) continue;
    const timeout = perMethodTimeoutMs[name as keyof S] ?? defaultTimeoutMs;
    result[name] = (request: unknown, opts: CallOpts = {}) =>
      withSpan(caller, method.path.slice(1), SpanKind.CLIENT, { 'rpc.system': 'grpc', [SESSION_ATTRIBUTE]: currentContext()?.sessionId ?? '' }, async () => {
        const deadline = effectiveDeadline(opts.timeoutMs ?? timeout);
        await peer.settle(deadline);
        return new Promise((resolve, reject) => {
          const options: CallOptions = { deadline };
          client.makeUnaryRequest(
            method.path,
            method.requestSerialize,
            method.responseDeserialize,
            request,
            outgoingMetadata(),
            options,
            (error: GrpcServiceError | null, response?: unknown) => {
              if (error) reject(new RpcError(error.code ?? GrpcStatus.UNKNOWN, error.details || error.message, method.path));
              else {
                peer.reached();
                resolve(response);
              }
            },
          );
        });
      });
  }
  return result as PromiseClient<S>;
}
