import {
  connectivityState,
  credentials,
  Client,
  Metadata,
  status as GrpcStatus,
  type CallOptions,
  type ChannelOptions,
  type ServiceError as GrpcServiceError,
} from '@grpc/grpc-js';
import { DEFAULT_GRPC_SETTINGS, type GrpcSettings } from '../config/schema.js';
import { context, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import { currentContext } from '../context.js';
import { injectTraceContext, SERVICE_ATTRIBUTE, SESSION_ATTRIBUTE, SpanKind, tracer, withSpan } from '../telemetry.js';
import { RpcError } from './errors.js';
import type { InProcessChannels } from './in-process.js';
import type { ServerStreamingMethodDefinition, UnaryMethodDefinition } from './method-definition.js';

export interface CallOpts {
  /** Milliseconds from now; capped by the deadline of the request being served. For a stream, the time until its last message. */
  timeoutMs?: number;
  /** A stream only: cancels the call when aborted (a reader blocked waiting for the next message cannot leave its loop). */
  signal?: AbortSignal;
}

/**
 * Unary methods return a promise; server-streaming methods return the messages as an async
 * iterable, read with `for await`. Leaving that loop early cancels the call.
 */
export type PromiseClient<S> = {
  [K in keyof S]: S[K] extends UnaryMethodDefinition<infer Req, infer Res>
    ? (request: Req, opts?: CallOpts) => Promise<Res>
    : S[K] extends ServerStreamingMethodDefinition<infer Req, infer Res>
      ? (request: Req, opts?: CallOpts) => AsyncIterable<Res>
      : never;
} & { close(): void };

/** Metadata every hop carries: x-session-id, authorization, x-a2a-hops and x-conversation-id (when present), traceparent. */
function outgoingMetadata(): Metadata {
  const metadata = new Metadata();
  const ctx = currentContext();
  if (ctx?.sessionId) metadata.set('x-session-id', ctx.sessionId);
  if (ctx?.authorization) metadata.set('authorization', ctx.authorization);
  if (ctx?.a2aHops) metadata.set('x-a2a-hops', String(ctx.a2aHops));
  if (ctx?.conversationId) metadata.set('x-conversation-id', ctx.conversationId);
  injectTraceContext((key, value) => metadata.set(key, value));
  return metadata;
}

/** The earlier of `now + timeoutMs` and the deadline of the request being served. */
function effectiveDeadline(timeoutMs: number): Date {
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

/** The largest message a channel sends or accepts; servers use the same (server.ts, SERVER_OPTIONS). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * The HTTP/2 receive window of a channel (per stream and for the connection): large enough
 * that a page of history or of conversations crosses loopback in a few round trips, small
 * enough that a burst of reads buffers at most this much per connection.
 */
const FLOW_CONTROL_WINDOW_BYTES = 1024 * 1024;

/**
 * Unary methods that only read (store.proto and the others name them so): safe to send again.
 * Describe* reads too: the orchestrator's DescribeRuns decodes what it is given, and changes nothing.
 */
const IDEMPOTENT_READ = /^(Get|List|Describe)[A-Z]/;

/**
 * How often an idempotent read is tried when it fails with UNAVAILABLE — a stream the server
 * refused, a GOAWAY, a connection reset (a burst of list reads surfaced them as 503
 * and 500). Attempts back off from 50 ms to 1 s and all stay under the call's one deadline.
 */
const READ_RETRY_POLICY = {
  maxAttempts: 4,
  initialBackoff: '0.05s',
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
} as const;

/** The unary methods of a definition that only read, by name: the ones a retry may send again. */
export function idempotentReads(definition: Record<string, unknown>): { service: string; method: string }[] {
  return Object.values(definition).flatMap((raw) => {
    const method = raw as { path: string; requestStream: boolean; responseStream: boolean };
    const [, service = '', name = ''] = method.path.split('/');
    // Streams (WatchEvents) resume on their own (gateway/app/event-feed.ts).
    return !method.requestStream && !method.responseStream && IDEMPOTENT_READ.test(name) ? [{ service, method: name }] : [];
  });
}

/**
 * The channel's service config (gRFC A2):
 *
 * - `round_robin` over every address the target resolves to: a `dns:///` name of several
 *   replicas (a headless Kubernetes Service) spreads calls over all of them, where grpc-js's
 *   default `pick_first` would pin one. With one address it behaves as before.
 * - READ_RETRY_POLICY for every idempotent unary read of the service (`idempotentReads`);
 *   nothing for the rest. A method that changes state (StartTurn, UpdateRun, ClaimApproval,
 *   CallTool…) is sent once — a tool call must never run twice — except for gRPC's transparent
 *   retry of a stream the server refused before any handler saw it, which is safe by
 *   definition (gRFC A6).
 */
export function serviceConfigOf(definition: Record<string, unknown>): string {
  const reads = idempotentReads(definition);
  return JSON.stringify({
    loadBalancingConfig: [{ round_robin: {} }],
    methodConfig: reads.length > 0 ? [{ name: reads, retryPolicy: READ_RETRY_POLICY }] : [],
  });
}

/** What a channel takes from the `grpc` section of the configuration. */
export type ChannelSettings = Pick<GrpcSettings, 'keepalive_time' | 'keepalive_timeout'>;

/**
 * The options of every channel between services. Keepalive: a client pings a connection that
 * has been quiet for `keepalive_time`, also with no call in flight, so a peer that vanished
 * without closing its connections (a killed pod, a dropped NAT entry) is noticed and replaced
 * before the next call instead of that call hanging until its deadline. Servers allow pings
 * that often (server.ts, serverOptions: `grpc.http2.min_ping_interval_without_data_ms`), so
 * none answers them with GOAWAY `too_many_pings`.
 */
export function channelOptions(definition: Record<string, unknown>, settings: ChannelSettings = DEFAULT_GRPC_SETTINGS): ChannelOptions {
  return {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW_BYTES,
    // Balancing and retries as the service config says (reads only); see serviceConfigOf.
    'grpc.enable_retries': 1,
    'grpc.service_config': serviceConfigOf(definition),
    // A call to a method without a config is committed after one attempt; no need to buffer
    // more than a read's request for a retry.
    'grpc.per_rpc_retry_buffer_size': 256 * 1024,
    'grpc.enable_channelz': 0,
    // A restarted peer is found again within a second, not after grpc-js's default backoff of up to 2 minutes.
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 1000,
    'grpc.keepalive_time_ms': settings.keepalive_time,
    'grpc.keepalive_timeout_ms': settings.keepalive_timeout,
    'grpc.keepalive_permit_without_calls': 1,
  };
}

/**
 * How a client's calls reach their server: a grpc-js channel (`channelTransport`), or a direct
 * call into a server of the same process (in-process.ts). Metadata, deadline and the CLIENT
 * span are made before a transport is asked; both fail with RpcError.
 */
export interface CallTransport {
  /** Whether calls stay in this process: their CLIENT spans say so (`network.transport` "inproc"). */
  readonly inProcess: boolean;
  /** Sends one unary call. */
  unary(method: UnaryMethodDefinition<unknown, unknown>, request: unknown, metadata: Metadata, deadline: Date): Promise<unknown>;
  /**
   * Opens one server stream. Leaving the iteration early (its `return()`) or `signal` aborting
   * cancels the call; the server's handler sees its signal abort.
   */
  stream(
    method: ServerStreamingMethodDefinition<unknown, unknown>,
    request: unknown,
    metadata: Metadata,
    deadline: Date,
    signal: AbortSignal | undefined,
  ): AsyncIterable<unknown>;
  close(): void;
}

/** What else a client may be given besides its service, address and deadlines. */
export interface ClientOptions {
  /** Keepalive of the channel (the `grpc` section of the configuration). */
  channel?: ChannelSettings;
  /**
   * The servers of this process (`asg up`): when `address` serves the definition's service
   * here, calls go to its handlers directly (in-process.ts) instead of through a channel;
   * otherwise, and without it, over gRPC.
   */
  inProcess?: InProcessChannels;
}

/**
 * A promise-returning client for a generated service definition. Every call gets a
 * deadline, the request's metadata and a CLIENT span named after the method path.
 * Server-streaming methods are offered as async iterables (see `serverStreamCall`);
 * methods that stream their requests are left out. Over gRPC, idempotent reads are retried on
 * UNAVAILABLE within their deadline, calls are balanced round robin over every address of the
 * target (`serviceConfigOf`), and idle connections are kept alive (`channelOptions`); to a
 * server of the same process given in `options.inProcess`, calls go to its handlers directly,
 * with the same contract.
 */
export function createPromiseClient<S extends Record<string, unknown>>(
  definition: S,
  address: string,
  caller: string,
  defaultTimeoutMs: number,
  perMethodTimeoutMs: Partial<Record<keyof S, number>> = {},
  options: ClientOptions = {},
): PromiseClient<S> {
  const transport =
    options.inProcess?.transportTo(definition, address) ?? channelTransport(definition, address, options.channel ?? DEFAULT_GRPC_SETTINGS);
  const result: Record<string, unknown> = { close: () => transport.close() };
  const spanAttributes = transport.inProcess ? IN_PROCESS_ATTRIBUTES : {};
  for (const [name, raw] of Object.entries(definition)) {
    const method = raw as UnaryMethodDefinition<unknown, unknown> | ServerStreamingMethodDefinition<unknown, unknown>;
    if ((method as { requestStream: boolean }).requestStream) continue;
    const timeout = perMethodTimeoutMs[name as keyof S] ?? defaultTimeoutMs;
    if (method.responseStream) {
      result[name] = serverStreamCall(transport, method, caller, timeout, spanAttributes);
      continue;
    }
    result[name] = (request: unknown, opts: CallOpts = {}) =>
      withSpan(
        caller,
        method.path.slice(1),
        SpanKind.CLIENT,
        { 'rpc.system': 'grpc', [SESSION_ATTRIBUTE]: currentContext()?.sessionId ?? '', ...spanAttributes },
        () => transport.unary(method, request, outgoingMetadata(), effectiveDeadline(opts.timeoutMs ?? timeout)),
      );
  }
  return result as PromiseClient<S>;
}

/** What the CLIENT span of a call that stays in this process carries (OpenTelemetry's value for in-process communication). */
const IN_PROCESS_ATTRIBUTES = { 'network.transport': 'inproc' } as const;

/** Calls over a grpc-js channel to `address` (a gRPC target: "host:port", "dns:///host:port", "ipv4:a:p,b:p"). */
function channelTransport(definition: Record<string, unknown>, address: string, settings: ChannelSettings): CallTransport {
  // "host:port" and "dns:///host:port" resolve through DNS, "ipv4:a:p,b:p" is a fixed list;
  // round_robin spreads calls over what it resolves to.
  const client = new Client(address, credentials.createInsecure(), channelOptions(definition, settings));
  const peer = new PeerReadiness(client);
  return {
    inProcess: false,
    async unary(method, request, metadata, deadline) {
      await peer.settle(deadline);
      return new Promise((resolve, reject) => {
        const options: CallOptions = { deadline };
        client.makeUnaryRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          request,
          metadata,
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
    },
    stream: (method, request, metadata, deadline, signal) => channelStream(client, peer, method, request, metadata, deadline, signal),
    close: () => client.close(),
  };
}

async function* channelStream(
  client: Client,
  peer: PeerReadiness,
  method: ServerStreamingMethodDefinition<unknown, unknown>,
  request: unknown,
  metadata: Metadata,
  deadline: Date,
  signal: AbortSignal | undefined,
): AsyncGenerator<unknown> {
  await peer.settle(deadline);
  const call = client.makeServerStreamRequest(method.path, method.requestSerialize, method.responseDeserialize, request, metadata, {
    deadline,
  });
  // grpc-js ends the stream and then emits a failed status as 'error', also the CANCELLED
  // that our own cancel() causes after the loop was left and nobody reads any more. The
  // loop below still receives every failure; this listener keeps the late ones from being
  // thrown as unhandled 'error' events.
  call.on('error', () => undefined);
  const cancel = () => call.cancel();
  if (signal?.aborted) cancel();
  signal?.addEventListener('abort', cancel);
  let ended = false;
  try {
    for await (const message of call) {
      peer.reached();
      yield message;
    }
    ended = true;
  } finally {
    signal?.removeEventListener('abort', cancel);
    if (!ended) call.cancel();
  }
}

/**
 * A server-streaming method as an async iterable. The metadata, deadline and parent span are
 * those where the method was called; the call itself starts at the first read. Its CLIENT
 * span stays open until the stream ends, fails or is left. Leaving the `for await` loop early
 * cancels the call, which the server sees as a cancellation (its handler's signal aborts).
 */
function serverStreamCall(
  transport: CallTransport,
  method: ServerStreamingMethodDefinition<unknown, unknown>,
  caller: string,
  timeoutMs: number,
  spanAttributes: Record<string, string>,
) {
  return (request: unknown, opts: CallOpts = {}): AsyncIterable<unknown> => {
    const callerContext = context.active();
    return {
      [Symbol.asyncIterator]: () =>
        receive(transport, method, request, caller, opts.timeoutMs ?? timeoutMs, callerContext, opts.signal, spanAttributes),
    };
  };
}

async function* receive(
  transport: CallTransport,
  method: ServerStreamingMethodDefinition<unknown, unknown>,
  request: unknown,
  caller: string,
  timeoutMs: number,
  callerContext: Context,
  signal: AbortSignal | undefined,
  spanAttributes: Record<string, string>,
): AsyncGenerator<unknown> {
  const span = tracer(caller).startSpan(
    method.path.slice(1),
    {
      kind: SpanKind.CLIENT,
      attributes: {
        [SERVICE_ATTRIBUTE]: caller,
        'rpc.system': 'grpc',
        [SESSION_ATTRIBUTE]: context.with(callerContext, () => currentContext()?.sessionId ?? ''),
        ...spanAttributes,
      },
    },
    callerContext,
  );
  const { metadata, deadline } = context.with(trace.setSpan(callerContext, span), () => ({
    metadata: outgoingMetadata(),
    deadline: effectiveDeadline(timeoutMs),
  }));
  try {
    // Leaving this loop early returns the transport's stream too, which cancels the call.
    yield* transport.stream(method, request, metadata, deadline, signal);
  } catch (error) {
    const failure = toRpcError(error, method.path);
    span.setStatus({ code: SpanStatusCode.ERROR, message: failure instanceof Error ? failure.message : String(failure) });
    throw failure;
  } finally {
    span.end();
  }
}

/** A failed status as the RpcError unary calls throw; anything else (not from grpc-js) as it is. */
function toRpcError(error: unknown, path: string): unknown {
  if (error instanceof RpcError) return error;
  const status = error as Partial<GrpcServiceError>;
  if (typeof status.code !== 'number') return error;
  return new RpcError(status.code, status.details || status.message || GrpcStatus[status.code] || 'unknown error', path);
}
