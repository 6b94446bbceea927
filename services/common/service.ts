import type { AgentConfig } from './config/schema.js';
import type { Logger } from './log.js';

/** A service that is up: where it listens and how to stop it cleanly. */
export interface RunningService {
  name: string;
  /** The bound "host:port" (the port is the real one when 0 was asked for). */
  address: string;
  port: number;
  stop(): Promise<void>;
}

/** What every service's `start…` function receives. */
export interface ServiceOptions {
  config: AgentConfig;
  /** Where to listen, "host:port"; port 0 picks a free one. */
  listen: string;
  log: Logger;
}

/** Addresses of the other services, for those that call them. */
export interface Peers {
  conversationStore: string;
  llmGateway: string;
  toolBroker: string;
  orchestrator: string;
  a2aBridge: string;
}
