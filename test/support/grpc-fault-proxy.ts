import {
  Client,
  credentials,
  Server,
  ServerCredentials,
  status,
  type handleServerStreamingCall,
  type handleUnaryCall,
  type ServiceError,
} from '@grpc/grpc-js';

/** A method of a service definition, as generated code and grpc-js describe it. */
interface MethodPath {
  path: string;
  responseStream: boolean;
}

/** What happens to the next call of a method the test picked. */
type Fault =
  /** Answered UNAVAILABLE without reaching the server: nothing of it was done. */
  | 'unreached'
  /** Carried out by the server, its answer replaced by UNAVAILABLE: done, and the caller cannot know. */
  | 'unheard';

/**
 * A gRPC relay in front of a real server: every call of the given services passes through as
 * bytes, with its metadata and deadline, except the next call of a method a test chose to fail.
 * What a network cut does at the worst moment, made exact.
 */
export interface GrpcFaultProxy {
  address: string;
  /** The next call of `method` (its name in the definition, e.g. "claimApproval") meets `fault`. */
  failNext(method: string, fault: Fault): void;
  /** The calls that met a fault, as "method fault", in order. */
  readonly failed: string[];
  close(): Promise<void>;
}

const bytes = (value: Buffer) => value;
const FAILED = { code: status.UNAVAILABLE, details: 'the relay cut this call' } as ServiceError;

export async function startGrpcFaultProxy(target: string, definitions: readonly Record<string, MethodPath>[]): Promise<GrpcFaultProxy> {
  const upstream = new Client(target, credentials.createInsecure());
  const server = new Server();
  const faults = new Map<string, Fault>();
  const failed: string[] = [];
  const takeFault = (name: string) => {
    const fault = faults.get(name);
    if (fault) {
      faults.delete(name);
      failed.push(`${name} ${fault}`);
    }
    return fault;
  };
  for (const definition of definitions) {
    for (const [name, method] of Object.entries(definition)) {
      if (method.responseStream) {
        const relayStream: handleServerStreamingCall<Buffer, Buffer> = (call) => {
          const relayed = upstream.makeServerStreamRequest(method.path, bytes, bytes, call.request, call.metadata, {
            deadline: call.getDeadline(),
          });
          relayed.on('data', (message: Buffer) => call.write(message));
          relayed.on('error', (error: ServiceError) => call.emit('error', error));
          relayed.on('end', () => call.end());
          call.on('cancelled', () => relayed.cancel());
        };
        server.register(method.path, relayStream, bytes, bytes, 'serverStream');
        continue;
      }
      const relayUnary: handleUnaryCall<Buffer, Buffer> = (call, answer) => {
        const fault = takeFault(name);
        if (fault === 'unreached') return answer(FAILED);
        upstream.makeUnaryRequest(
          method.path,
          bytes,
          bytes,
          call.request,
          call.metadata,
          { deadline: call.getDeadline() },
          (error, reply) => (fault === 'unheard' ? answer(FAILED) : answer(error, reply)),
        );
      };
      server.register(method.path, relayUnary, bytes, bytes, 'unary');
    }
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    address: `127.0.0.1:${port}`,
    failNext: (method, fault) => void faults.set(method, fault),
    failed,
    close: async () => {
      server.forceShutdown();
      upstream.close();
    },
  };
}
