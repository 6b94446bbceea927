import pg from 'pg';

export { isPostgresUrl, redactedDatabaseUrl } from './url.js';

/** The pool's limits (config `store.pool`, README); every field has a documented default. */
export interface PostgresPoolLimits {
  /** Connections the pool opens at most; the LISTEN connection is one more. */
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

/**
 * bigint columns (event ids, token sums, counts) as numbers: pg returns them as strings, since
 * they may pass 2^53; these never come near it. Set per connection, not on pg's global
 * parsers, so that nothing else in the process is affected.
 */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** The settings of every connection to the store's database: the pool's and the LISTEN one. */
export function connectionConfig(url: string, limits: PostgresPoolLimits, applicationName: string): pg.ClientConfig {
  return {
    connectionString: url,
    application_name: applicationName,
    statement_timeout: limits.statementTimeoutMs,
    idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    types,
  };
}

export function createPool(url: string, limits: PostgresPoolLimits, applicationName: string): pg.Pool {
  return new pg.Pool({
    ...connectionConfig(url, limits, applicationName),
    max: limits.maxConnections,
    idleTimeoutMillis: 30_000,
  });
}
