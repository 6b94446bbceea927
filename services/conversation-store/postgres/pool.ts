import pg from 'pg';
import { registerSecret } from '../../common/secrets.js';

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

/** Whether a store URL names a PostgreSQL database (else the store is SQLite in data_dir). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/**
 * The URL as it may be shown: without its password. The password is registered as a secret,
 * so that an error text or log line that quotes the URL is redacted too (DESIGN rule 5).
 */
export function redactedDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') {
      // As written in the URL (percent-encoded) and as sent to the server.
      registerSecret(parsed.password);
      registerSecret(decodeURIComponent(parsed.password));
      parsed.password = '***';
    }
    return parsed.toString();
  } catch {
    // Unparsable, so its password cannot be told apart: the whole text is the secret.
    registerSecret(url);
    return 'postgres://(an unparsable URL)';
  }
}

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
