import { once } from 'node:events';
import {
  Server,
  ServerCredentials,
  status as GrpcStatus,
  type Metadata,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { parseA2aHops, runWithContext, type RequestContext } from '../context.js';
import { isLogLevelEnabled, type Logger } from '../log.js';
import { redactSecrets } from '../secrets.js';
import { parseSessionId } from '../session-id.js';
import { entryTraceContext, SESSION_ATTRIBUTE, SpanKind, withSpan } from '../telemetry.js';
import { DEFAULT_GRPC_SETTINGS, type GrpcSettings } from '../config/schema.js';
import { MAX_MESSAGE_BYTES } from './client.js';
import { RpcError, ServiceError } from './errors.js';
import type { ServerStreamingMethodDefinition, UnaryMethodDefinition } from './method-definition.js';

/** What a handler sees besides its request. */
export interface HandlerContext {
  request: RequestContext;
  metadata: Metadata;
}

/**
 * What a streaming handler sees besides its request. `signal` aborts when the client cancels
 * the call or its deadline passes: the handler must then stop its own work (pass the signal
 * to what it awaits), because nothing it yields afterwards reaches anyone.
 */
export interface StreamHandlerContext extends HandlerContext {
  signal: AbortSignal;
}

/** A server-streaming method: every value the generator yields is one message to the client. */
export type ServerStreamHandler<Req, Res> = (request: Req, ctx: StreamHandlerContext) => AsyncIterable<Res>;

export type UnaryHandlers<S> = {
  [K in keyof S]: S[K] extends UnaryMethodDefinition<infer Req, infer Res> ? (request: Req, ctx: HandlerContext) => Promise<Res> : never;
};

/** The handlers of a service that may mix unary and server-streaming methods. */
export type ServiceHandlers<S> = {
  [K in keyof S]: S[K] extends UnaryMethodDefinition<infer Req, infer Res>
    ? (request: Req, ctx: HandlerContext) => Promise<Res>
    : S[K] extends ServerStreamingMethodDefinition<infer Req, infer Res>
      ? ServerStreamHandler<Req, Res>
      : never;
};

type AnyUnaryHandler = (request: unknown, ctx: HandlerContext) => Promise<unknown>;
type AnyStreamHandler = ServerStreamHandler<unknown, unknown>;

function first(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value : value?.toString('utf8');
}

/** Read from any server call: unary calls and server streams carry the same metadata and deadline. */
export function requestContextFrom(call: Pick<ServerUnaryCall<unknown, unknown>, 'metadata' | 'getDeadline'>): RequestContext {
  const deadline = call.getDeadline();
  const deadlineMs = deadline instanceof Date ? deadline.getTime() : Number.isFinite(deadline) ? Number(deadline) : undefined;
  return {
    sessionId: parseSessionId(first(call.metadata, 'x-session-id')) ?? '',
    authorization: first(call.metadata, 'authorization'),
    deadline: deadlineMs,
    a2aHops: parseA2aHops(first(call.metadata, 'x-a2a-hops')),
  };
}

function toGrpcError(error: unknown, log: Logger, path: string): { code: GrpcStatus; details: string } {
  if (error instanceof ServiceError) return { code: error.code, details: redactSecrets(error.message) };
  // An error from a downstream service keeps its code: NOT_FOUND stays NOT_FOUND end to end.
  if (error instanceof RpcError) return { code: error.code, details: redactSecrets(error.message) };
  const message = error instanceof Error ? error.message : String(error);
  log.error('unhandled error in handler', { method: path, error: message });
  return { code: GrpcStatus.INTERNAL, details: redactSecrets(`internal error in ${path}: ${message}`) };
}

/**
 * Turns typed async handlers into a grpc-js implementation: each call runs inside its
 * request context (session id, authorization, deadline from metadata) and a SERVER span
 * whose parent is the caller's `traceparent`; thrown errors become gRPC statuses.
 * Server-streaming methods (`responseStream: true`) take async generators; see
 * `serverStreamCall`. Methods that stream their requests are refused at start.
 */
export function implement<S extends Record<string, unknown>>(
  definition: S,
  service: string,
  handlers: ServiceHandlers<S>,
  log: Logger,
): UntypedServiceImplementation {
  const implementation: UntypedServiceImplementation = {};
  const debug = isLogLevelEnabled('debug');
  for (const [name, raw] of Object.entries(definition)) {
    const method = raw as UnaryMethodDefinition<unknown, unknown> | ServerStreamingMethodDefinition<unknown, unknown>;
    const handler = (handlers as Record<string, AnyUnaryHandler | AnyStreamHandler>)[name];
    if (!handler) throw new Error(`${service}: no handler for ${method.path}`);
    if ((method as { requestStream: boolean }).requestStream) {
      throw new Error(`${service}: ${method.path} streams its requests; only unary and server-streaming methods are supported`);
    }
    implementation[name] = method.responseStream
      ? serverStreamCall(service, method.path, handler as AnyStreamHandler, log, debug)
      : unaryCall(service, method.path, handler as AnyUnaryHandler, log, debug);
  }
  return implementation;
}

function unaryCall(service: string, path: string, handler: AnyUnaryHandler, log: Logger, debug: boolean) {
  return (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
    const request = requestContextFrom(call);
    const started = performance.now();
    void runWithContext(request, () =>
      // The caller's trace context is read on top of the request context, so the span's
      // context carries both.
      withSpan(service, path.slice(1), SpanKind.SERVER, { 'rpc.system': 'grpc', [SESSION_ATTRIBUTE]: request.sessionId }, () =>
        handler(call.request, { request, metadata: call.metadata }), entryTraceContext((key) => first(call.metadata, key)))
        .then((response) => {
          if (debug) log.debug('rpc', { method: path, code: 'OK', ms: (performance.now() - started).toFixed(2) });
          callback(null, response);
        })
        .catch((error: unknown) => {
          const { code, details } = toGrpcError(error, log, path);
          if (debug) log.debug('rpc', { method: path, code: GrpcStatus[code], ms: (performance.now() - started).toFixed(2) });
          callback({ code, details });
        }),
    );
  };
}

/**
 * A server-streaming call: the same request context, SERVER span (open until the stream ends)
 * and error mapping as a unary call. Each yielded value is written as one message, waiting
 * when the client reads slower than the handler yields. A handler error after some messages
 * ends the stream with that error's status. When the client cancels or the deadline passes
 * (grpc-js reports both as 'cancelled'), the handler's signal aborts and no status is sent:
 * the call is already over.
 */
function serverStreamCall(service: string, path: string, handler: AnyStreamHandler, log: Logger, debug: boolean) {
  return (call: ServerWritableStream<unknown, unknown>) => {
    const request = requestContextFrom(call);
    const started = performance.now();
    const cancellation = new AbortController();
    call.once('cancelled', () => {
      const deadlinePassed = request.deadline !== undefined && Date.now() >= request.deadline;
      cancellation.abort(new Error(deadlinePassed ? `the deadline of ${path} passed` : `the client cancelled ${path}`));
    });
    const logEnd = (code: string) => {
      if (debug) log.debug('rpc', { method: path, code, ms: (performance.now() - started).toFixed(2) });
    };
    void runWithContext(request, () =>
      withSpan(service, path.slice(1), SpanKind.SERVER, { 'rpc.system': 'grpc', [SESSION_ATTRIBUTE]: request.sessionId }, () =>
        writeAll(call, handler(call.request, { request, metadata: call.metadata, signal: cancellation.signal }), cancellation.signal), entryTraceContext((key) => first(call.metadata, key)))
        .then(() => {
          if (call.cancelled) return logEnd('CANCELLED');
          logEnd('OK');
          call.end();
        })
        .catch((error: unknown) => {
          if (call.cancelled) return logEnd('CANCELLED');
          const { code, details } = toGrpcError(error, log, path);
          logEnd(GrpcStatus[code]);
          // grpc-js's server stream turns an 'error' event into the call's final status.
          call.emit('error', { code, details });
        }),
    );
  };
}

async function writeAll(call: ServerWritableStream<unknown, unknown>, messages: AsyncIterable<unknown>, cancelled: AbortSignal): Promise<void> {
  // Leaving the loop early (cancelled) calls the generator's return(), which runs its finally blocks.
  for await (const message of messages) {
    if (cancelled.aborted) return;
    if (!call.write(message)) await drained(call, cancelled);
  }
}

/** Until the client has read enough for the next write, or the call is cancelled. */
async function drained(call: ServerWritableStream<unknown, unknown>, cancelled: AbortSignal): Promise<void> {
  try {
    await once(call, 'drain', { signal: cancelled });
  } catch {
    // Cancelled: writeAll stops at its next message.
  }
}

/**
 * What every service's gRPC server is created with (issue 12: a burst of reads was refused).
 *
 * - `grpc.max_concurrent_streams`: the streams one connection may have open at once. A client
 *   learns it from the server's SETTINGS before its first call and queues the calls above it
 *   (HTTP/2 does so in the client, nghttp2's pending streams) instead of opening streams the
 *   server would refuse, so a burst waits for a free stream rather than failing. The limit
 *   bounds what one caller makes the server hold in memory at once; it is far above what a
 *   mesh has in flight, since every live watcher (WatchEvents, one per open web chat or SSE
 *   client) holds one stream for as long as it watches.
 * - message sizes: the same ceiling as the client (client.ts, MAX_MESSAGE_BYTES). The largest
 *   answers are whole histories read by a turn; pages of history are bounded far below it
 *   (store.proto, GetConversationRequest).
 */
export const SERVER_OPTIONS = {
  'grpc.max_concurrent_streams': 4096,
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
} as const;

/**
 * The options a server takes from the `grpc` section of the configuration (issue 14):
 *
 * - `grpc.max_connection_age_ms` (+ grace): each connection is ended with a GOAWAY once it is
 *   this old (grpc-js adds ±10% jitter, so a fleet's connections do not all end at once). The
 *   client reconnects and re-resolves its target: a replica started since gets its share of
 *   the calls instead of the old replicas keeping every long-lived channel. Calls in flight
 *   finish within the grace; a stream still open then is cut, and its reader resumes it
 *   (WatchEvents: gateway/app/event-feed.ts).
 * - keepalive: the server pings a quiet connection too, so a client that vanished (and the
 *   watch streams it held open) is let go after `keepalive_time` + `keepalive_timeout`.
 * - `grpc.http2.min_ping_interval_without_data_ms`: the ping policy a server tells to enforce
 *   (gRPC's keepalive spec, gRFC A8): pings from a client closer together than this get a
 *   GOAWAY `too_many_pings`. Our clients ping every `keepalive_time` even without calls
 *   (client.ts, channelOptions), so this allows half of that, with room for timer jitter.
 *   grpc-js itself does not police pings; the option speaks for servers and proxies that do.
 */
export function serverOptions(settings: Omit<GrpcSettings, 'drain_delay'> = DEFAULT_GRPC_SETTINGS): Record<string, number> {
  return {
    ...SERVER_OPTIONS,
    'grpc.max_connection_age_ms': settings.max_connection_age,
    'grpc.max_connection_age_grace_ms': settings.max_connection_age_grace,
    'grpc.keepalive_time_ms': settings.keepalive_time,
    'grpc.keepalive_timeout_ms': settings.keepalive_timeout,
    'grpc.http2.min_ping_interval_without_data_ms': Math.floor(settings.keepalive_time / 2),
  };
}

/** A gRPC server with `serverOptions(settings)`; `overrides` for tests that need a tighter limit. */
export function createServer(settings: Omit<GrpcSettings, 'drain_delay'> = DEFAULT_GRPC_SETTINGS, overrides: Record<string, number> = {}): Server {
  return new Server({ ...serverOptions(settings), ...overrides });
}

/** Binds a server on `address` ("127.0.0.1:0" picks a free port) and returns the bound port. */
export async function listen(server: Server, address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, port) => (error ? reject(error) : resolve(port)));
  });
}

/** How long a stop without a deadline gives the calls in flight. */
export const DEFAULT_STOP_GRACE_MS = 5000;

/**
 * Stops accepting calls, gives running ones until `deadline` (epoch ms; absent: DEFAULT_STOP_GRACE_MS from now)
 * to finish, then cancels them (forceShutdown).
 */
export async function shutdown(server: Server, deadline?: number): Promise<void> {
  const graceMs = deadline === undefined ? DEFAULT_STOP_GRACE_MS : Math.max(0, deadline - Date.now());
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export { Server, type ServiceDefinition };
