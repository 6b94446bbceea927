import pg from 'pg';
import { connectionConfig, DEFAULT_POOL_LIMITS, redactedDatabaseUrl } from './pool.js';
import { migrate, type MigrateOutcome } from './schema.js';

/** `asg migrate`, with the schema owner's role before a new build's replicas start; no statement timeout. */
export async function migrateDatabase(
  url: string,
  connectTimeoutMs = DEFAULT_POOL_LIMITS.connectTimeoutMs,
): Promise<MigrateOutcome & { where: string }> {
  const where = redactedDatabaseUrl(url);
  const client = new pg.Client(connectionConfig(url, { ...DEFAULT_POOL_LIMITS, connectTimeoutMs, statementTimeoutMs: 0 }, 'asg-migrate'));
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new Error(`cannot connect to ${where}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return { where, ...(await migrate(client, where)) };
  } finally {
    await client.end().catch(() => undefined);
  }
}
