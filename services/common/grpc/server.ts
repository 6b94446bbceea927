import {
  Server,
  ServerCredentials,
  status as GrpcStatus,
  type Metadata,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { runWithContext, type RequestContext } from '../context.js';
import { isLogLevelEnabled, type Logger } from '../log.js';
import { redactSecrets } from '../secrets.js';
import { parseSessionId } from '../session-id.js';
import { entryTraceContext, SESSION_ATTRIBUTE, SpanKind, withSpan } from '../telemetry.js';
import { RpcError, ServiceError } from './errors.js';

interface UnaryMethodDefinition<Req, Res> {
  path: string;
  requestStream: false;
  responseStream: false;
  requestDeserialize: (value: Buffer) => Req;
  responseSerialize: (value: Res) => Buffer;
}

/** What a handler sees besides its request. */
export interface HandlerContext {
  request: RequestContext;
  metadata: Metadata;
}

export type UnaryHandlers<S> = {
  [K in keyof S]: S[K] extends UnaryMethodDefinition<infer Req, infer Res> ? (request: Req, ctx: HandlerContext) => Promise<Res> : never;
};

function first(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value : value?.toString('utf8');
}

export function requestContextFrom(call: ServerUnaryCall<unknown, unknown>): RequestContext {
  const deadline = call.getDeadline();
  const deadlineMs = deadline instanceof Date ? deadline.getTime() : Number.isFinite(deadline) ? Number(deadline) : undefined;
  return {
    sessionId: parseSessionId(first(call.metadata, 'x-session-id')) ?? '',
    authorization: first(call.metadata, 'authorization'),
    deadline: deadlineMs,
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
 */
export function implement<S extends Record<string, unknown>>(
  definition: S,
  service: string,
  handlers: UnaryHandlers<S>,
  log: Logger,
): UntypedServiceImplementation {
  const implementation: UntypedServiceImplementation = {};
  const debug = isLogLevelEnabled('debug');
  for (const [name, raw] of Object.entries(definition)) {
    const method = raw as UnaryMethodDefinition<unknown, unknown>;
    const handler = (handlers as Record<string, (request: unknown, ctx: HandlerContext) => Promise<unknown>>)[name];
    if (!handler) throw new Error(`${service}: no handler for ${method.path}`);
    implementation[name] = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      const request = requestContextFrom(call);
      const started = performance.now();
      void runWithContext(request, () =>
        // The caller's trace context is read on top of the request context, so the span's
        // context carries both.
        withSpan(service, method.path.slice(1), SpanKind.SERVER, { 'rpc.system': 'grpc', [SESSION_ATTRIBUTE]: request.sessionId }, () =>
          handler(call.request, { request, metadata: call.metadata }), entryTraceContext((key) => first(call.metadata, key)))
          .then((response) => {
            if (debug) log.debug('rpc', { method: method.path, code: 'OK', ms: (performance.now() - started).toFixed(2) });
            callback(null, response);
          })
          .catch((error: unknown) => {
            const { code, details } = toGrpcError(error, log, method.path);
            if (debug) log.debug('rpc', { method: method.path, code: GrpcStatus[code], ms: (performance.now() - started).toFixed(2) });
            callback({ code, details });
          }),
      );
    };
  }
  return implementation;
}

/** Binds a server on `address` ("127.0.0.1:0" picks a free port) and returns the bound port. */
export async function listen(server: Server, address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, port) => (error ? reject(error) : resolve(port)));
  });
}

/** Stops accepting calls, gives running ones `graceMs` to finish, then cancels them. */
export async function shutdown(server: Server, graceMs = 5000): Promise<void> {
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
