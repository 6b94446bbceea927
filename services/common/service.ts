import type { OnlySlice } from './config/slices.js';
import type { InProcessChannels } from './grpc/in-process.js';
import type { Logger } from './log.js';

/** A service that is up: where it listens and how to stop it cleanly. */
export interface RunningService {
  name: string;
  /** The bound "host:port" (the port is the real one when 0 was asked for). */
  address: string;
  port: number;
  /**
   * Stops it: no new calls, the ones in flight finish until `deadline` (epoch ms; absent: the
   * service's own short default), then the rest is cut and its resources (connections, child processes, files)
   * are released. Called more than once, it returns the first stop.
   */
  stop(deadline?: number): Promise<void>;
  /**
   * The process stops at `deadline` (epoch ms), the services of one process one after another
   * (cli/mesh.ts): work that cannot finish by then is handed on a little before it, while the
   * services in front of this one still answer their callers. Called once, before any stop.
   */
  stopsAt?(deadline: number): void;
}

/** What every service's `start…` function receives: `config` is its own slice (config/slices.ts). */
export interface ServiceOptions<Config> {
  config: OnlySlice<Config>;
  /** Where to listen, "host:port"; port 0 picks a free one. */
  listen: string;
  log: Logger;
  /**
   * The servers and clients of one process (`asg up`, cli/mesh.ts): the service serves its
   * handlers there too, at the address it is bound to, and its clients of services in the
   * process call them directly (grpc/in-process.ts). Absent: gRPC only.
   */
  inProcess?: InProcessChannels;
}

/** Addresses of the other services, for those that call them. */
export interface Peers {
  conversationStore: string;
  llmGateway: string;
  toolBroker: string;
  orchestrator: string;
  a2aBridge: string;
}
