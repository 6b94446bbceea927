import { once } from 'node:events';
import {
  Server,
  ServerCredentials,
  status as GrpcStatus,
  type Metadata,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { context, ROOT_CONTEXT, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import { parseA2aHops, parseConversationId, runWithContext, type RequestContext } from '../context.js';
import { isLogLevelEnabled, type Logger } from '../log.js';
import { loadMetrics, recordError } from '../metrics.js';
import { redactSecrets } from '../secrets.js';
import { parseSessionId } from '../session-id.js';
import { entryTraceContext, SERVICE_ATTRIBUTE, SESSION_ATTRIBUTE, SpanKind, tracer, withSpan } from '../telemetry.js';
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

/** A handler of either kind, as the transports look it up by method. */
export type AnyHandler = AnyUnaryHandler | AnyStreamHandler;

/** The status a failed call ends with, as grpc-js sends it (a StatusObject without metadata). */
export interface CallStatus {
  code: GrpcStatus;
  details: string;
}

/**
 * What serving one method needs whatever the transport: grpc-js here, or a direct call within
 * one process (in-process.ts). `service` names the server in spans and logs.
 */
export interface ServedMethod {
  service: string;
  path: string;
  log: Logger;
}

/** The parts of an incoming call the request context is read from: its metadata and deadline. */
export type IncomingCall = Pick<ServerUnaryCall<unknown, unknown>, 'metadata' | 'getDeadline'>;

function first(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value : value?.toString('utf8');
}

function deadlineMsOf(call: Pick<IncomingCall, 'getDeadline'>): number | undefined {
  const deadline = call.getDeadline();
  return deadline instanceof Date ? deadline.getTime() : Number.isFinite(deadline) ? Number(deadline) : undefined;
}

/** Read from any server call: unary calls and server streams carry the same metadata and deadline. */
function requestContextFrom(call: IncomingCall): RequestContext {
  return {
    sessionId: parseSessionId(first(call.metadata, 'x-session-id')) ?? '',
    authorization: first(call.metadata, 'authorization'),
    deadline: deadlineMsOf(call),
    a2aHops: parseA2aHops(first(call.metadata, 'x-a2a-hops')),
    conversationId: parseConversationId(first(call.metadata, 'x-conversation-id')),
  };
}

/**
 * The status a handler's error travels with: a ServiceError's or a downstream RpcError's own
 * code, so NOT_FOUND stays NOT_FOUND end to end; anything else is a bug here, logged, and
 * INTERNAL naming the method. Details are always redacted.
 */
function toGrpcError(error: unknown, log: Logger, path: string): CallStatus {
  if (error instanceof ServiceError || error instanceof RpcError) return { code: error.code, details: redactSecrets(error.message) };
  const message = error instanceof Error ? error.message : String(error);
  recordError('internal');
  log.error('unhandled error in handler', { method: path, error: message });
  return { code: GrpcStatus.INTERNAL, details: redactSecrets(`internal error in ${path}: ${message}`) };
}

/**
 * Why a stream's handler signal aborts: its deadline passed, or its client left. `expired` is
 * what the caller's side knows when it knows it: a timer may fire a millisecond before the clock
 * reads the deadline, and its word is the one that counts.
 */
export function cancellationOf(path: string, deadline: number | undefined, expired = false): Error {
  const deadlinePassed = expired || (deadline !== undefined && Date.now() >= deadline);
  return new Error(deadlinePassed ? `the deadline of ${path} passed` : `the client cancelled ${path}`);
}

function logRpc(log: Logger, path: string, code: string, started: number): void {
  if (isLogLevelEnabled('debug')) log.debug('rpc', { method: path, code, ms: (performance.now() - started).toFixed(2) });
}

/**
 * The server side of one unary call, whatever carried it: the handler runs inside the request
 * context read from the call (session id, authorization, deadline, A2A hops) and a SERVER span
 * whose parent is the caller's `traceparent` — and nothing else of the caller's: it starts from
 * the root context, so what a caller in the same process had in its own context does not leak
 * in. Resolves with the response; rejects with the CallStatus of what the handler threw
 * (toGrpcError).
 */
export function serveUnary(served: ServedMethod, handler: AnyUnaryHandler, request: unknown, call: IncomingCall): Promise<unknown> {
  const { service, path, log } = served;
  const requestContext = requestContextFrom(call);
  const started = performance.now();
  // The call's own context (its span, its request context): the lines written once the
  // handler is done belong to the call too, and carry its trace id.
  let inCall: Context | undefined;
  const inside = <T>(fn: () => T): T => (inCall ? context.with(inCall, fn) : fn());
  return context.with(ROOT_CONTEXT, () =>
    runWithContext(requestContext, () =>
      // The caller's trace context is read on top of the request context, so the span's context carries both.
      withSpan(
        service,
        path.slice(1),
        SpanKind.SERVER,
        { 'rpc.system': 'grpc', [SESSION_ATTRIBUTE]: requestContext.sessionId },
        () => {
          inCall = context.active();
          return handler(request, { request: requestContext, metadata: call.metadata });
        },
        entryTraceContext((key) => first(call.metadata, key)),
      ).then(
        (response) => {
          inside(() => logRpc(log, path, 'OK', started));
          return response;
        },
        (error: unknown) =>
          inside(() => {
            const status = toGrpcError(error, log, path);
            logRpc(log, path, GrpcStatus[status.code] ?? String(status.code), started);
            throw status;
          }),
      ),
    ),
  );
}

/**
 * The server side of one server stream, whatever carried it: the handler's messages, pulled one
 * at a time, each step of the handler run inside the call's request context and its SERVER span
 * (open until the stream ends), from the root context as in serveUnary. The transport writes
 * what it yields; reading at the client's pace is the backpressure. A handler error ends it with
 * that error's CallStatus. When `signal` aborts (the client cancelled, or the deadline passed)
 * the handler's signal aborts with it and the stream ends quietly: nobody hears a status any
 * more. Leaving it early (return()) closes the handler's generator, which runs its finally blocks.
 */
export async function* serveStream(
  served: ServedMethod,
  handler: AnyStreamHandler,
  request: unknown,
  call: IncomingCall,
  signal: AbortSignal,
): AsyncGenerator<unknown, void, undefined> {
  const { service, path, log } = served;
  const requestContext = requestContextFrom(call);
  const started = performance.now();
  const parent = context.with(ROOT_CONTEXT, () =>
    runWithContext(requestContext, () => entryTraceContext((key) => first(call.metadata, key))),
  );
  const span = tracer(service).startSpan(
    path.slice(1),
    {
      kind: SpanKind.SERVER,
      attributes: { [SERVICE_ATTRIBUTE]: service, 'rpc.system': 'grpc', [SESSION_ATTRIBUTE]: requestContext.sessionId },
    },
    parent,
  );
  const inCall = trace.setSpan(parent, span);
  const inside = <T>(fn: () => T): T => context.with(inCall, fn);
  const messages = inside(() => handler(request, { request: requestContext, metadata: call.metadata, signal })[Symbol.asyncIterator]());
  let code = 'OK';
  let finished = false;
  try {
    for (;;) {
      const next = await inside(() => messages.next());
      if (next.done) {
        finished = true;
        return;
      }
      if (signal.aborted) return;
      yield next.value;
    }
  } catch (error) {
    finished = true;
    if (signal.aborted) return;
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    const status = inside(() => toGrpcError(error, log, path));
    code = GrpcStatus[status.code] ?? String(status.code);
    throw status;
  } finally {
    if (signal.aborted) code = 'CANCELLED';
    // Left early (cancelled, or the transport stopped reading): close the generator, which runs its finally blocks.
    const close = messages.return?.bind(messages);
    if (!finished && close) await inside(() => close()).catch(() => undefined);
    span.end();
    inside(() => logRpc(log, path, code, started));
  }
}

/**
 * Turns typed async handlers into a grpc-js implementation: each call runs inside its
 * request context (session id, authorization, deadline from metadata) and a SERVER span
 * whose parent is the caller's `traceparent`; thrown errors become gRPC statuses
 * (serveUnary, serveStream: the same code serves calls within one process, in-process.ts).
 * Methods that stream their requests are refused at start.
 */
export function implement<S extends Record<string, unknown>>(
  definition: S,
  service: string,
  handlers: ServiceHandlers<S>,
  log: Logger,
): UntypedServiceImplementation {
  const implementation: UntypedServiceImplementation = {};
  for (const { name, method, handler } of handlerEntries(definition, service, handlers)) {
    const served = { service, path: method.path, log };
    implementation[name] = method.responseStream
      ? serverStreamCall(served, handler as AnyStreamHandler)
      : unaryCall(served, handler as AnyUnaryHandler);
  }
  return implementation;
}

/** Each method of `definition` with its handler; a missing handler or a client-streaming method stops the start. */
export function handlerEntries<S extends Record<string, unknown>>(
  definition: S,
  service: string,
  handlers: ServiceHandlers<S>,
): {
  name: string;
  method: UnaryMethodDefinition<unknown, unknown> | ServerStreamingMethodDefinition<unknown, unknown>;
  handler: AnyHandler;
}[] {
  return Object.entries(definition).map(([name, raw]) => {
    const method = raw as UnaryMethodDefinition<unknown, unknown> | ServerStreamingMethodDefinition<unknown, unknown>;
    const handler = (handlers as Record<string, AnyHandler>)[name];
    if (!handler) throw new Error(`${service}: no handler for ${method.path}`);
    if ((method as { requestStream: boolean }).requestStream) {
      throw new Error(`${service}: ${method.path} streams its requests; only unary and server-streaming methods are supported`);
    }
    return { name, method, handler };
  });
}

function unaryCall(served: ServedMethod, handler: AnyUnaryHandler) {
  return (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
    serveUnary(served, handler, call.request, call).then(
      (response) => callback(null, response),
      (status: CallStatus) => callback(status),
    );
  };
}

/**
 * A server-streaming call over grpc-js: serveStream's messages written one by one, waiting
 * when the client reads slower than the handler yields. A handler error after some messages
 * ends the stream with that error's status. When the client cancels or the deadline passes
 * (grpc-js reports both as 'cancelled'), the handler's signal aborts and no status is sent:
 * the call is already over.
 */
function serverStreamCall(served: ServedMethod, handler: AnyStreamHandler) {
  return (call: ServerWritableStream<unknown, unknown>) => {
    const cancellation = new AbortController();
    call.once('cancelled', () => cancellation.abort(cancellationOf(served.path, deadlineMsOf(call))));
    writeAll(call, serveStream(served, handler, call.request, call, cancellation.signal), cancellation.signal).then(
      () => {
        if (!call.cancelled) call.end();
      },
      (status: CallStatus) => {
        // grpc-js's server stream turns an 'error' event into the call's final status.
        if (!call.cancelled) call.emit('error', status);
      },
    );
  };
}

async function writeAll(
  call: ServerWritableStream<unknown, unknown>,
  messages: AsyncIterable<unknown>,
  cancelled: AbortSignal,
): Promise<void> {
  // Leaving the loop early (cancelled) returns serveStream, which closes the handler's generator.
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
 * What every service's gRPC server is created with (a burst of reads was refused).
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
 * The options a server takes from the `grpc` section of the configuration:
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
function serverOptions(settings: Omit<GrpcSettings, 'drain_delay'> = DEFAULT_GRPC_SETTINGS): Record<string, number> {
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
export function createServer(
  settings: Omit<GrpcSettings, 'drain_delay'> = DEFAULT_GRPC_SETTINGS,
  overrides: Record<string, number> = {},
): Server {
  // Every service makes its server as it starts: the metrics SDK is loaded then, not mid-turn.
  loadMetrics();
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

export { Server };
