import { resolve } from 'node:path';
import type { ConversationStoreConfig } from '../common/config/slices.js';
import { isPostgresUrl, redactedDatabaseUrl } from './postgres/url.js';
import { DATABASE_FILE, openSqliteStorage } from './sqlite/driver.js';
import { eventsUrl, natsServer } from './events-url.js';
import { STALE_TURN_MARGIN_MS, type ConversationStorage } from './storage.js';

/** The environment variable that names the store's database; it wins over `store.url`. */
const DATABASE_URL_ENV = 'ASG_DATABASE_URL';

/** Where the store keeps its data and how its events travel, as it may be logged (no credentials). */
export interface StorageTarget {
  where: string;
  events: string;
  /** An events URL was configured but the store is SQLite, which has no other replicas. */
  eventsUrlIgnored: boolean;
}

export interface OpenedStorage extends StorageTarget {
  storage: ConversationStorage;
}

/** The database URL in effect: ASG_DATABASE_URL when set, else `store.url`; empty for SQLite. */
export function databaseUrl(config: Pick<ConversationStoreConfig, 'store'>, env: NodeJS.ProcessEnv): string {
  const url = (env[DATABASE_URL_ENV] ?? '').trim() || config.store.url;
  if (url !== '' && !isPostgresUrl(url)) throw new Error(`${DATABASE_URL_ENV} must be a postgres:// URL (or unset for SQLite in data_dir)`);
  return url;
}

/** What openConfiguredStorage opens, told before it is opened (the database may be away). */
export function storageTarget(
  config: Pick<ConversationStoreConfig, 'data_dir' | 'store' | 'events'>,
  env: NodeJS.ProcessEnv,
): StorageTarget {
  const url = databaseUrl(config, env);
  const natsUrl = eventsUrl(config, env);
  if (url === '') return { where: resolve(config.data_dir, DATABASE_FILE), events: 'in-process', eventsUrlIgnored: natsUrl !== '' };
  const events = natsUrl === '' ? 'PostgreSQL LISTEN/NOTIFY' : `NATS JetStream ${natsServer(natsUrl).redacted}`;
  return { where: redactedDatabaseUrl(url), events, eventsUrlIgnored: false };
}

/** PostgreSQL when a URL is configured, else SQLite; a mark older than chat.turn_timeout and a margin is stale. */
export async function openConfiguredStorage(
  config: Pick<ConversationStoreConfig, 'data_dir' | 'chat' | 'store' | 'events'>,
  env: NodeJS.ProcessEnv,
  onBackgroundError: (what: string, error: unknown) => void,
): Promise<OpenedStorage> {
  const staleTurnAfterMs = config.chat.turn_timeout + STALE_TURN_MARGIN_MS;
  const url = databaseUrl(config, env);
  const natsUrl = eventsUrl(config, env);
  const target = storageTarget(config, env);
  if (url === '') return { storage: openSqliteStorage({ dataDir: resolve(config.data_dir), staleTurnAfterMs }), ...target };
  const { pool } = config.store;
  // Loaded only here: pg and the NATS client are not needed by a store on SQLite.
  const { openPostgresStorage } = await import('./postgres/driver.js');
  const storage = await openPostgresStorage({
    url,
    staleTurnAfterMs,
    pool: {
      maxConnections: pool.max_connections,
      statementTimeoutMs: pool.statement_timeout,
      idleInTransactionTimeoutMs: pool.idle_in_transaction_timeout,
      connectTimeoutMs: pool.connect_timeout,
    },
    events: natsUrl === '' ? undefined : { url: natsUrl, prefix: config.events.prefix, maxAgeMs: config.events.max_age },
    onBackgroundError,
  });
  return { storage, ...target };
}
