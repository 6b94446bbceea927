import type { Metadata } from '@grpc/grpc-js';
import type { Logger } from '../log.js';
import type { CallTransport } from './client.js';
import { GrpcStatus, RpcError } from './errors.js';
import { HEALTH_DEFINITION, serviceNameOf, type ServingHealth } from './health.js';
import type { ServerStreamingMethodDefinition, UnaryMethodDefinition } from './method-definition.js';
import {
  cancellationOf,
  DEFAULT_STOP_GRACE_MS,
  handlerEntries,
  serveStream,
  serveUnary,
  type AnyHandler,
  type CallStatus,
  type ServedMethod,
  type ServerStreamHandler,
  type ServiceHandlers,
  type HandlerContext,
} from './server.js';

/**
 * The in-process transport. In `asg up` every service runs in one process; a
 * call from one to another over loopback gRPC pays for HTTP/2 framing, grpc-js's call stack and
 * socket writes on both sides — a fifth of a turn's CPU. Here a client whose target is a
 * server of this process calls that server's handlers directly, behind the same generated
 * client interface (PromiseClient) and with the same contract as over the network:
 *
 * - the request and the response cross as copies: no object is shared between two services, a
 *   request changed after the call or a response changed after its return is not seen by the
 *   other side, and only what the proto carries crosses. `asg up` gives the copies of
 *   message-copies.ts (a message rebuilt from its type's fields, without encoding); without
 *   them, and for a message they cannot copy, it is the protobuf bytes (the definition's serializers);
 * - metadata is made by `outgoingMetadata()` and read by the server's own `requestContextFrom`
 *   and `entryTraceContext`: session id, authorization, deadline, A2A hops and trace context;
 *   the handler runs from the root context in a SERVER span, the caller's CLIENT span around it;
 * - the deadline is the caller's effective deadline; when it passes the caller gets
 *   DEADLINE_EXCEEDED at once, whether or not the handler is done;
 * - errors are the statuses `toGrpcError` makes (server.ts), the same code for both paths;
 * - server streams are pulled by the caller's `for await` (the backpressure); leaving the loop,
 *   the caller's signal or the deadline aborts the handler's signal and closes its generator;
 * - a server that stops refuses new calls with UNAVAILABLE, and its calls in flight finish until
 *   the stop's deadline.
 *
 * There is no retry of idempotent reads here (client.ts, READ_RETRY_POLICY): it exists for a
 * connection lost or refused on the way, and a call within one process has no connection to lose.
 *
 * Opt-in: `asg up` (cli/mesh.ts) makes one and hands it to every service and client it starts;
 * `asg serve` and the tests that start services themselves make none, and talk real gRPC.
 * The servers still listen on their ports (health probes, debugging, `grpcurl`); only the
 * clients of this process take the short way.
 */
export class InProcessChannels {
  private readonly servers = new Map<string, InProcessServer>();
  private copies: MessageCopies | undefined;

  /** With `copies`, the messages of the methods it knows cross as its copies; the others as protobuf bytes. */
  constructor(copies?: MessageCopies) {
    this.copies = copies;
  }

  /**
   * The copies from now on: `asg up` loads them beside the services, and gives them before the
   * callers start. A call before that crosses as bytes, which keeps the same promises.
   */
  copyWith(copies: MessageCopies): void {
    this.copies = copies;
    this.crossings.clear();
  }

  /** Serves `handlers` to this process's clients of `address`, until the returned server's stop. */
  register<S extends Record<string, unknown>>(registration: InProcessRegistration<S>): InProcessServer {
    const key = serverKey(registration.definition, registration.address);
    if (this.servers.has(key)) throw new Error(`${registration.service}: ${key} is already served in this process`);
    const server: InProcessServer = new InProcessServer(
      registration,
      () => {
        if (this.servers.get(key) === server) this.servers.delete(key);
      },
      this.crossing,
    );
    this.servers.set(key, server);
    return server;
  }

  /**
   * The transport to the server of `definition` at `address` when this process serves it; none
   * otherwise (a service elsewhere: the caller uses a gRPC channel). Each call looks the server
   * up again, so calls after its stop fail UNAVAILABLE like calls to a stopped server.
   */
  transportTo(definition: Record<string, unknown>, address: string): CallTransport | undefined {
    const key = serverKey(definition, address);
    if (!this.servers.has(key)) return undefined;
    return new InProcessTransport(() => this.servers.get(key), address, this.crossing);
  }

  /** How each method's messages cross, made once per method (and again after copyWith), not at every call. */
  private readonly crossings = new Map<string, Crossing>();

  private readonly crossing = (method: AnyMethod): Crossing => {
    const known = this.crossings.get(method.path);
    if (known) return known;
    const copy = this.copies?.get(method.path);
    const made: Crossing = {
      request: copy?.request ?? ((value) => decode(method.requestDeserialize, encodeRequest(method, value), 'Error deserializing request')),
      response:
        copy?.response ?? ((value) => method.responseDeserialize(encode(method.responseSerialize, value, 'Error serializing response'))),
    };
    this.crossings.set(method.path, made);
    return made;
  };
}

/** One message made into the other side's own: a copy that shares nothing with `value` and holds only the proto's fields. */
export type MessageCopy = (value: unknown) => unknown;

/** The copies of the requests and responses of the methods it knows, by method path. */
export interface MessageCopies {
  get(path: string): { request: MessageCopy; response: MessageCopy } | undefined;
}

/** How one method's messages cross: as the copies in use make them, or as protobuf bytes. */
interface Crossing {
  request: MessageCopy;
  response: MessageCopy;
}

/** What `serveInProcess` gives back: the stop of a service's in-process serving. */
export interface InProcessServing {
  /** As InProcessServer.stop, for the service and its health: at the moment its gRPC server shuts down. */
  stop(deadline?: number): Promise<void>;
}

/**
 * A service's handlers and its grpc.health.v1 (`health`), served to the clients of this process
 * at the address its gRPC server is bound to — what every service's start does after it
 * listens. Without channels (a service on its own, a test) it serves nothing here.
 */
export function serveInProcess<S extends Record<string, unknown>>(
  channels: InProcessChannels | undefined,
  registration: InProcessRegistration<S>,
  health: ServingHealth,
): InProcessServing {
  if (!channels) return { stop: async () => undefined };
  const service = channels.register(registration);
  const healthService = channels.register({ ...registration, definition: HEALTH_DEFINITION, handlers: health.handlers });
  return { stop: async (deadline) => void (await Promise.all([service.stop(deadline), healthService.stop(deadline)])) };
}

/** What a service registers: as for `implement()`, plus the address its gRPC server is bound to. */
export interface InProcessRegistration<S> {
  definition: S;
  /** The bound "host:port": the address the clients of this process are given for this service. */
  address: string;
  handlers: ServiceHandlers<S>;
  /** The service's name in spans and logs. */
  service: string;
  log: Logger;
}

function serverKey(definition: Record<string, unknown>, address: string): string {
  return `${serviceNameOf(definition)} at ${address}`;
}

export type AnyMethod = UnaryMethodDefinition<unknown, unknown> | ServerStreamingMethodDefinition<unknown, unknown>;

interface ServedEntry {
  method: AnyMethod;
  handler: AnyHandler;
  served: ServedMethod;
}

const SERVER_STOPPED: CallStatus = { code: GrpcStatus.UNAVAILABLE, details: 'the server stopped before the call finished' };

/** One service's handlers served in this process; made by `InProcessChannels.register`. */
export class InProcessServer {
  private readonly methods = new Map<string, ServedEntry>();
  /** The calls in flight, each with what cuts it when the stop's deadline comes. */
  private readonly calls = new Set<CallInFlight>();
  private stopped: Promise<void> | undefined;
  private idle: (() => void) | undefined;

  constructor(
    registration: InProcessRegistration<Record<string, unknown>>,
    private readonly release: () => void,
    private readonly crossing: (method: AnyMethod) => Crossing,
  ) {
    const { definition, service, handlers, log } = registration;
    for (const { method, handler } of handlerEntries(definition, service, handlers)) {
      this.methods.set(method.path, { method, handler, served: { service, path: method.path, log } });
    }
  }

  /**
   * Stops serving: from now on calls fail UNAVAILABLE, as at a stopped server's address. Calls in
   * flight may finish until `deadline` (epoch ms); then they are cut: their callers get
   * UNAVAILABLE, stream handlers' signals abort. Called again, it returns the first stop.
   */
  stop(deadline = Date.now() + DEFAULT_STOP_GRACE_MS): Promise<void> {
    this.stopped ??= new Promise<void>((resolve) => {
      this.release();
      if (this.calls.size === 0) return resolve();
      const cut = setTimeout(
        () => {
          for (const call of this.calls) call.cut(SERVER_STOPPED);
          resolve();
        },
        Math.max(0, deadline - Date.now()),
      );
      this.idle = () => {
        clearTimeout(cut);
        resolve();
      };
    });
    return this.stopped;
  }

  /**
   * One unary call: the handler's own copy of the request in (the caller made it at the call),
   * the caller's own copy of the response out (made when the handler answers), or a CallStatus
   * — the deadline's or this server's stop's when they come first. The call counts as in flight
   * until it is settled, whoever settles it.
   */
  unary(path: string, request: unknown, metadata: Metadata, deadline: Date): Promise<unknown> {
    const { method, handler, served } = this.entry(path, false);
    const call = new UnaryCall(deadline.getTime());
    // A deadline already past: DEADLINE_EXCEEDED, and no handler runs.
    if (call.settled) return call.outcome;
    this.calls.add(call);
    call.onSettled = () => this.end(call);
    // The handler starts after the caller's synchronous code, as it would behind a socket.
    queueMicrotask(() => {
      if (call.settled) return;
      let answered: Promise<unknown>;
      try {
        answered = serveUnary(served, handler as UnaryHandler, request, incoming(metadata, deadline));
      } catch (status) {
        call.fail(status);
        return;
      }
      answered.then(
        (response) => {
          if (call.settled) return;
          try {
            call.answer(crossed(this.crossing(method).response, response, 'Error serializing response'));
          } catch (status) {
            call.fail(status);
          }
        },
        (status: unknown) => call.fail(status),
      );
    });
    return call.outcome;
  }

  /**
   * One server stream: the caller's own copy of each message as it pulls them. The caller returning the
   * iteration early, `giveUp` (the caller's deadline or signal) or the stop's cut aborts the
   * handler's signal and closes its generator.
   */
  async *stream(
    path: string,
    request: unknown,
    metadata: Metadata,
    deadline: Date,
    giveUp: AbortSignal,
  ): AsyncGenerator<unknown, void, undefined> {
    const { method, handler, served } = this.entry(path, true);
    const call = new AbortController();
    const inFlight: CallInFlight = { cut: (status) => call.abort(status) };
    this.calls.add(inFlight);
    const handlerSignal = new AbortController();
    const abortHandler = (reason: Error) => {
      if (!handlerSignal.signal.aborted) handlerSignal.abort(reason);
    };
    const expired = () => (giveUp.reason as CallStatus | undefined)?.code === GrpcStatus.DEADLINE_EXCEEDED;
    const onGiveUp = () => abortHandler(cancellationOf(path, deadline.getTime(), expired()));
    const onCut = () => abortHandler(new Error(`${served.service} stopped during ${path}`));
    giveUp.addEventListener('abort', onGiveUp, { once: true });
    call.signal.addEventListener('abort', onCut, { once: true });
    let messages: AsyncGenerator<unknown, void, undefined> | undefined;
    let settled = false;
    try {
      const { response } = this.crossing(method);
      const opened = serveStream(served, handler as StreamHandler, request, incoming(metadata, deadline), handlerSignal.signal);
      messages = opened;
      for (;;) {
        const next = await whileOpen(
          () =>
            opened.next().catch((status: unknown) => {
              settled = true;
              throw status;
            }),
          giveUp,
          call.signal,
        );
        if (next.done) {
          settled = true;
          return;
        }
        yield crossed(response, next.value, 'Error serializing response');
      }
    } finally {
      giveUp.removeEventListener('abort', onGiveUp);
      call.signal.removeEventListener('abort', onCut);
      if (messages && !settled) {
        // Left early (the caller's loop, its signal, the deadline, the stop): the handler hears
        // it through its signal, and its generator is closed once its current step is over.
        abortHandler(cancellationOf(path, deadline.getTime(), expired()));
        void messages
          .return()
          .catch(() => undefined)
          .finally(() => this.end(inFlight));
      } else {
        this.end(inFlight);
      }
    }
  }

  private entry(path: string, stream: boolean): ServedEntry {
    if (this.stopped) throw SERVER_STOPPED;
    const entry = this.methods.get(path);
    if (!entry || entry.method.responseStream !== stream)
      throw { code: GrpcStatus.UNIMPLEMENTED, details: `The server does not implement the method ${path}` } satisfies CallStatus;
    return entry;
  }

  private end(call: CallInFlight): void {
    this.calls.delete(call);
    if (this.calls.size === 0) this.idle?.();
  }
}

type UnaryHandler = (request: unknown, ctx: HandlerContext) => Promise<unknown>;
type StreamHandler = ServerStreamHandler<unknown, unknown>;

/** A call the server's stop cuts when its deadline comes: the caller then gets `status`. */
interface CallInFlight {
  cut(status: CallStatus): void;
}

/**
 * The call as the server's request context reads it: the metadata and the deadline. The
 * metadata is the handler's own without a copy: the client makes it for each call
 * (client.ts, outgoingMetadata) and hands it over, keeping no reference, as a socket would.
 */
function incoming(metadata: Metadata, deadline: Date) {
  return { metadata, getDeadline: () => deadline };
}

function decode(deserialize: (bytes: Buffer) => unknown, bytes: Buffer, what: string): unknown {
  try {
    return deserialize(bytes);
  } catch (error) {
    throw { code: GrpcStatus.INTERNAL, details: `${what}: ${error instanceof Error ? error.message : String(error)}` } satisfies CallStatus;
  }
}

/** A message copied across: a failure is the INTERNAL status `what` names, as the bytes' own failures are. */
function crossed(copy: MessageCopy, value: unknown, what: string): unknown {
  try {
    return copy(value);
  } catch (error) {
    if (isCallStatus(error)) throw error;
    throw { code: GrpcStatus.INTERNAL, details: `${what}: ${error instanceof Error ? error.message : String(error)}` } satisfies CallStatus;
  }
}

function isCallStatus(error: unknown): error is CallStatus {
  const status = error as Partial<CallStatus> | undefined;
  return typeof status?.code === 'number' && typeof status.details === 'string';
}

/** The request's bytes, or the INTERNAL status of a request that cannot be encoded, in grpc-js's words. */
function encodeRequest(method: AnyMethod, request: unknown): Buffer {
  try {
    return method.requestSerialize(request);
  } catch (error) {
    throw {
      code: GrpcStatus.INTERNAL,
      details: `Request message serialization failure: ${error instanceof Error ? error.message : String(error)}`,
    } satisfies CallStatus;
  }
}

function encode(serialize: (value: unknown) => Buffer, value: unknown, what: string): Buffer {
  try {
    return serialize(value);
  } catch (error) {
    throw { code: GrpcStatus.INTERNAL, details: `${what}: ${error instanceof Error ? error.message : String(error)}` } satisfies CallStatus;
  }
}

/** `work()`, unless one of `signals` aborts first (or already has): then its reason, a CallStatus, is the rejection. */
function whileOpen<T>(work: () => Promise<T>, ...signals: AbortSignal[]): Promise<T> {
  const aborted = signals.find((signal) => signal.aborted);
  if (aborted) return Promise.reject(aborted.reason as CallStatus);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (event: Event) => {
      forget();
      reject((event.target as AbortSignal).reason as CallStatus);
    };
    const forget = () => {
      for (const signal of signals) signal.removeEventListener('abort', onAbort);
    };
    for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true });
    work().then(
      (value) => {
        forget();
        resolve(value);
      },
      (error: unknown) => {
        forget();
        reject(error);
      },
    );
  });
}

/**
 * The caller's side of one unary call: its outcome, settled once by whichever comes first —
 * the handler's answer, its deadline (DEADLINE_EXCEEDED, measured from the start of the call
 * as grpc-js says it) or the server's stop (UNAVAILABLE). One timer and no AbortController: a
 * unary handler is given no signal, so nothing but the caller needs to hear that the call is over.
 */
class UnaryCall implements CallInFlight {
  readonly outcome: Promise<unknown>;
  settled = false;
  /** Told once when the call is settled (the server counts it as in flight until then). */
  onSettled: (() => void) | undefined;
  private resolve!: (value: unknown) => void;
  private reject!: (status: unknown) => void;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly started = Date.now();

  constructor(private readonly deadline: number) {
    this.outcome = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const wait = deadline - this.started;
    if (wait <= 0) this.expire();
    else this.timer = setTimeout(this.expire, wait);
  }

  /**
   * The handler's answer. One that comes at or after the deadline is DEADLINE_EXCEEDED: without a
   * network in between, a handler that stops at the deadline (the orchestrator's turn timer) may
   * answer within the same tick as the deadline's own timer; over gRPC that answer arrives after
   * the deadline and the caller sees DEADLINE_EXCEEDED (and so does the server, which cancels the
   * call at its deadline). The deadline has the last word here too.
   */
  answer(value: unknown): void {
    if (Date.now() >= this.deadline) this.expire();
    else this.settle(() => this.resolve(value));
  }

  fail(status: unknown): void {
    this.settle(() => this.reject(status));
  }

  cut(status: CallStatus): void {
    this.fail(status);
  }

  private readonly expire = (): void => {
    const seconds = ((Date.now() - this.started) / 1000).toFixed(3);
    this.fail({ code: GrpcStatus.DEADLINE_EXCEEDED, details: `Deadline exceeded after ${seconds}s` } satisfies CallStatus);
  };

  private settle(how: () => void): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    how();
    this.onSettled?.();
  }
}

/**
 * The caller's side of one server stream: it gives up at its deadline (DEADLINE_EXCEEDED, measured from
 * the start of the call as grpc-js says it) or when it cancels (CANCELLED).
 */
class CallLifetime {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly started = Date.now();
  private readonly deadline: number;

  constructor(
    deadline: Date,
    private readonly signal?: AbortSignal,
  ) {
    this.deadline = deadline.getTime();
    const wait = this.deadline - this.started;
    if (wait <= 0) this.expire();
    else this.timer = setTimeout(() => this.expire(), wait);
    if (signal?.aborted) this.cancel();
    signal?.addEventListener('abort', this.cancel);
  }

  get giveUp(): AbortSignal {
    return this.controller.signal;
  }

  readonly cancel = (): void => {
    if (!this.controller.signal.aborted)
      this.controller.abort({ code: GrpcStatus.CANCELLED, details: 'Cancelled on client' } satisfies CallStatus);
  };

  /** Throws DEADLINE_EXCEEDED when a message comes at or after the deadline: the deadline has the last word, as for a unary answer (UnaryCall.answer). */
  received(): void {
    if (Date.now() < this.deadline) return;
    this.expire();
    throw this.controller.signal.reason as CallStatus;
  }

  end(): void {
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this.cancel);
  }

  private expire(): void {
    const seconds = ((Date.now() - this.started) / 1000).toFixed(3);
    if (!this.controller.signal.aborted)
      this.controller.abort({ code: GrpcStatus.DEADLINE_EXCEEDED, details: `Deadline exceeded after ${seconds}s` } satisfies CallStatus);
  }
}

/** The client's side: a PromiseClient built on this transport calls the server it finds at each call. */
class InProcessTransport implements CallTransport {
  readonly inProcess = true;
  private closed = false;

  constructor(
    private readonly serverNow: () => InProcessServer | undefined,
    private readonly address: string,
    private readonly crossing: (method: AnyMethod) => Crossing,
  ) {}

  async unary(method: UnaryMethodDefinition<unknown, unknown>, request: unknown, metadata: Metadata, deadline: Date): Promise<unknown> {
    const server = this.server(method.path);
    // Copied at once: what the caller does to its request object afterwards does not reach the handler.
    const copy = this.copyRequest(method, request);
    try {
      return await server.unary(method.path, copy, metadata, deadline);
    } catch (error) {
      throw asRpcError(error, method.path);
    }
  }

  async *stream(
    method: ServerStreamingMethodDefinition<unknown, unknown>,
    request: unknown,
    metadata: Metadata,
    deadline: Date,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<unknown, void, undefined> {
    const server = this.server(method.path);
    const copy = this.copyRequest(method, request);
    const call = new CallLifetime(deadline, signal);
    let ended = false;
    try {
      for await (const message of server.stream(method.path, copy, metadata, deadline, call.giveUp)) {
        call.received();
        yield message;
      }
      call.received();
      ended = true;
    } catch (error) {
      ended = true;
      throw asRpcError(error, method.path);
    } finally {
      // Left the loop early: the server's side was returned with it and closes the handler.
      if (!ended) call.cancel();
      call.end();
    }
  }

  close(): void {
    this.closed = true;
  }

  private server(path: string): InProcessServer {
    // What grpc-js throws for a call on a closed client.
    if (this.closed) throw new Error('Channel has been shut down');
    const server = this.serverNow();
    if (!server) throw new RpcError(GrpcStatus.UNAVAILABLE, `the server at ${this.address} stopped`, path);
    return server;
  }

  private copyRequest(method: AnyMethod, request: unknown): unknown {
    try {
      return crossed(this.crossing(method).request, request, 'Request message serialization failure');
    } catch (error) {
      throw asRpcError(error, method.path);
    }
  }
}

/** A CallStatus from the server's side as the RpcError every client throws; anything else as it is. */
function asRpcError(error: unknown, path: string): unknown {
  if (error instanceof RpcError) return error;
  const status = error as Partial<CallStatus>;
  if (typeof status.code !== 'number' || typeof status.details !== 'string') return error;
  return new RpcError(status.code, status.details, path);
}
