import pg from 'pg';

export { isPostgresUrl, redactedDatabaseUrl } from './url.js';

/** The pool's limits (config `store.pool`, README); every field has a documented default. */
export interface PostgresPoolLimits {
  /** Connections the pool opens at most; a replica has two more: the probe, and LISTEN or the publisher's lock. */
  maxConnections: number;
  /** A statement running longer is cancelled by the server (`statement_timeout`). */
  statementTimeoutMs: number;
  /** A transaction left idle this long is ended by the server, releasing its locks. */
  idleInTransactionTimeoutMs: number;
  /** Waiting for a connection (new or from the pool) fails after this. */
  connectTimeoutMs: number;
}

export const DEFAULT_POOL_LIMITS: PostgresPoolLimits = {
  maxConnections: 10,
  statementTimeoutMs: 30_000,
  idleInTransactionTimeoutMs: 60_000,
  connectTimeoutMs: 10_000,
};

/** bigint columns as numbers (they never near 2^53), per connection: pg's global parsers stay as they are. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** The settings of every connection to the store's database: the pool's and the LISTEN one. */
export function connectionConfig(url: string, limits: PostgresPoolLimits, applicationName: string): pg.ClientConfig {
  return {
    connectionString: url,
    application_name: applicationName,
    statement_timeout: limits.statementTimeoutMs,
    idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    // A peer that vanished without a word (a failover, a cut network) is noticed by TCP.
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    types,
  };
}

/** Idle time of a connection before TCP asks whether its peer is still there. */
const KEEPALIVE_IDLE_MS = 10_000;

/**
 * Each pooled connection handles its own 'error' all its life: pg emits one when its backend ends while it is checked
 * out, and an unhandled one would end the process. Its statement fails anyway and the pool drops it when it comes back.
 */
export function createPool(url: string, limits: PostgresPoolLimits, applicationName: string): pg.Pool {
  const pool = new pg.Pool({
    ...connectionConfig(url, limits, applicationName),
    max: limits.maxConnections,
    idleTimeoutMillis: 30_000,
  });
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}
