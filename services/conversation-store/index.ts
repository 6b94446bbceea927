import { ConversationStoreServiceService } from '../../gen/ts/asg/store/v1/store.js';
import { ServingHealth } from '../common/grpc/health.js';
import { serveInProcess } from '../common/grpc/in-process.js';
import { createServer, DEFAULT_STOP_GRACE_MS, implement, listen, shutdown } from '../common/grpc/server.js';
import type { ConversationStoreConfig } from '../common/config/slices.js';
import { observeGauge } from '../common/metrics.js';
import { redactSecrets } from '../common/secrets.js';
import type { RunningService, ServiceOptions } from '../common/service.js';
import { EventFeed, type EventFeedOptions } from './event-feed.js';
import { openConfiguredStorage } from './open-storage.js';
import { conversationStoreHandlers } from './server.js';
import type { ConversationStorage } from './storage.js';

export type { ApprovalClaim, ConversationPage, ConversationStorage, InterruptionMark } from './storage.js';
export type { EventFeedOptions } from './event-feed.js';

const SERVICE = 'conversation-store';

/** The store on `options.listen`, keeping its data in `<data_dir>/conversations.db` or the PostgreSQL database of `store.url`. */
export interface ConversationStoreOptions extends ServiceOptions<ConversationStoreConfig> {
  /** The watchers' limits (event-feed.ts); the defaults otherwise. */
  events?: EventFeedOptions;
  /** Where ASG_DATABASE_URL and ASG_EVENTS_URL are read; `process.env` by default. */
  env?: NodeJS.ProcessEnv;
}

export async function startConversationStore(options: ConversationStoreOptions): Promise<RunningService> {
  const { storage, where, events, eventsUrlIgnored } = await openConfiguredStorage(options.config, options.env ?? process.env, (what, error) =>
    options.log.warn(what, { error: redactSecrets(error instanceof Error ? error.message : String(error)) }),
  );
  // Before anyone reads them: a conversation whose turn a crash cut off says so (store.proto, StartTurn).
  let interrupted: number;
  try {
    interrupted = await storage.noteInterruptedTurns();
  } catch (error) {
    await storage.close();
    throw error;
  }
  if (interrupted > 0) options.log.warn('turns cut off by an earlier stop noted as interrupted', { conversations: interrupted });
  const feed = new EventFeed(storage, options.events);
  // SERVER_OPTIONS: a long conversation read whole by a turn exceeds gRPC's 4 MiB default.
  const server = createServer(options.config.grpc);
  // Ready once its migrations ran and interrupted turns were noted (both above): from then on
  // every call is answered from the database.
  const health = new ServingHealth(server, [ConversationStoreServiceService]);
  const handlers = conversationStoreHandlers(storage, feed);
  server.addService(ConversationStoreServiceService, implement(ConversationStoreServiceService, SERVICE, handlers, options.log));
  let port: number;
  try {
    port = await listen(server, options.listen);
  } catch (error) {
    server.forceShutdown();
    feed.close();
    await storage.close();
    throw error;
  }
  const address = `${options.listen.slice(0, options.listen.lastIndexOf(':'))}:${port}`;
  const local = serveInProcess(options.inProcess, { definition: ConversationStoreServiceService, address, handlers, service: SERVICE, log: options.log }, health);
  health.markServing();
  const stopObservingApprovals = observeGauge('asg_approvals_pending', 'Approvals waiting for a decision, counted in the store at each scrape', () => countPendingApprovals(storage));
  // Every WatchEvents stream open on this replica: each live subscription of a gateway, and each outbox.
  const stopObservingWatchers = observeGauge('asg_store_event_watchers', 'WatchEvents streams open on this store replica', async () => feed.watcherCount);
  const stopObserving = () => {
    stopObservingApprovals();
    stopObservingWatchers();
  };
  options.log.info('conversation store listening', { address, database: where, events });
  if (eventsUrlIgnored) options.log.warn('events.url (ASG_EVENTS_URL) is ignored: the SQLite store is one replica and hands its events over in-process');
  let stopped: Promise<void> | undefined;
  return {
    name: SERVICE,
    address,
    port,
    // NOT_SERVING first (health.ts). Watches never end on their own: they are ended next
    // (UNAVAILABLE, with the after_id to watch again with), so that the calls in flight can
    // finish before the database closes.
    stop: (deadline = Date.now() + DEFAULT_STOP_GRACE_MS) =>
      (stopped ??= (async () => {
        await health.beginStop(deadline, options.config.grpc.drain_delay);
        stopObserving();
        feed.close();
        await Promise.all([shutdown(server, deadline), local.stop(deadline)]);
        await storage.close();
      })()),
  };
}

/** Pages read at most per scrape: past 10 000 pending approvals the gauge says 10 000. */
const PENDING_PAGES = 20;

/** How many approvals wait for a decision, as the database says now (every replica reads the same: take max, not sum). */
async function countPendingApprovals(storage: ConversationStorage): Promise<number> {
  let count = 0;
  let pageToken = '';
  for (let page = 0; page < PENDING_PAGES; page += 1) {
    const { approvals, nextPageToken } = await storage.listPendingApprovals({ pageSize: 500, pageToken });
    count += approvals.length;
    if (!nextPageToken) break;
    pageToken = nextPageToken;
  }
  return count;
}
